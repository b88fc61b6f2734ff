/**
 * The RDMA client, without Spring: {@link dev.rpma.client.RpmaClient} keeps a pool of connections to
 * one server on the server core's event loops, sends framed requests and correlates their replies
 * (or raw messages for servers with a protocol of their own), and reads and writes the server's
 * exposed memory through {@link dev.rpma.client.RpmaClientConnection}.
 */
@NullMarked
package dev.rpma.client;

import org.jspecify.annotations.NullMarked;

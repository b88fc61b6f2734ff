/**
 * The RDMA server core, without Spring: {@link dev.rpma.server.RpmaServer} listens on endpoints, each
 * with an acceptor that hands connection requests to a connection handler; accepted connections
 * become {@link dev.rpma.server.RpmaSession}s served by a fixed group of event loops, which receive
 * their messages into registered slots, hand them to the endpoint's message handlers, and send the
 * replies; exposed memory regions are registered once for one-sided access.
 */
@NullMarked
package dev.rpma.server;

import org.jspecify.annotations.NullMarked;

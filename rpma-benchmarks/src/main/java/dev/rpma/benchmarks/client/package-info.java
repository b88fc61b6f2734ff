/**
 * The client against C over real RDMA: load clients on {@link dev.rpma.client.RpmaClient} (ping-pong
 * messages, and writes plus flushes into a server's region) that take the arguments and print the
 * results of the C load client of benchmarks/rdma-vs-c.
 */
@NullMarked
package dev.rpma.benchmarks.client;

import org.jspecify.annotations.NullMarked;

/**
 * The client against C over real RDMA: a ping-pong load client on {@link dev.rpma.client.RpmaClient} that
 * takes the arguments and prints the results of the C load client of benchmarks/rdma-vs-c.
 */
@NullMarked
package dev.rpma.benchmarks.client;

import org.jspecify.annotations.NullMarked;

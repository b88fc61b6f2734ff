/**
 * Micrometer metrics of the RDMA server, named {@code rpma.*}: requests, sessions, messages,
 * errors, handler timings and the event loops' busy and idle time.
 */
@NullMarked
package dev.rpma.spring.boot.actuate.metrics;

import org.jspecify.annotations.NullMarked;

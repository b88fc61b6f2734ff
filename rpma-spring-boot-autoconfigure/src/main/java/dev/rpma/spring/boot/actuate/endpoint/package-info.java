/**
 * The {@code rpma} actuator endpoint: each RDMA endpoint's state, queue, sessions, message and
 * error counts, and pausing or resuming its accepting.
 */
@NullMarked
package dev.rpma.spring.boot.actuate.endpoint;

import org.jspecify.annotations.NullMarked;

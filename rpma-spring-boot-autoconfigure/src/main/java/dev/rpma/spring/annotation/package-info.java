/**
 * The annotations that make methods of the application's beans RDMA handlers
 * ({@link dev.rpma.spring.annotation.RpmaConnectionHandler},
 * {@link dev.rpma.spring.annotation.RpmaMessageHandler},
 * {@link dev.rpma.spring.annotation.RpmaSessionEvent}), and their discovery at start-up.
 */
@NullMarked
package dev.rpma.spring.annotation;

import org.jspecify.annotations.NullMarked;

/**
 * An {@link io.micrometer.observation.Observation} around each connection handler invocation, and
 * around each message handler invocation whose message carried a client's trace context, with
 * conventions that name them and their key values.
 */
@NullMarked
package dev.rpma.spring.boot.actuate.observation;

import org.jspecify.annotations.NullMarked;

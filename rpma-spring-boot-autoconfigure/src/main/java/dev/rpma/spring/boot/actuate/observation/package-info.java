/**
 * An {@link io.micrometer.observation.Observation} around each connection handler invocation,
 * with a convention that names it and its key values.
 */
@NullMarked
package dev.rpma.spring.boot.actuate.observation;

import org.jspecify.annotations.NullMarked;

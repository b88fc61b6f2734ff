/**
 * The message rate of the in-JVM loopback of librpma that {@code @RpmaTest} runs applications on: how
 * long a test suite's messages take.
 */
@NullMarked
package dev.rpma.benchmarks.loopback;

import org.jspecify.annotations.NullMarked;

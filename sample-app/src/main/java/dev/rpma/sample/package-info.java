/**
 * A Spring Boot application that serves librpma's example protocols with the starter, and whose
 * jar also runs their client.
 */
@NullMarked
package dev.rpma.sample;

import org.jspecify.annotations.NullMarked;

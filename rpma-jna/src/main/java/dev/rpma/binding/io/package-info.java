/**
 * Waiting on librpma's file descriptors without blocking inside librpma: {@code epoll} and
 * {@code poll} with a wake-up from other threads, descriptor flags, and the scheduling policy of the
 * threads that wait.
 */
@NullMarked
package dev.rpma.binding.io;

import org.jspecify.annotations.NullMarked;

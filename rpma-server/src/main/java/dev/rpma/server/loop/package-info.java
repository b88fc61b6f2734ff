/**
 * The event loops the server runs on: one thread each, waiting in {@code epoll_wait} over the file
 * descriptors of the librpma objects it owns, busy-polling after work.
 */
@NullMarked
package dev.rpma.server.loop;

import org.jspecify.annotations.NullMarked;

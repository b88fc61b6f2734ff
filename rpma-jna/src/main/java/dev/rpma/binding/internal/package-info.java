/**
 * Internal API: the raw layer that the typed API in {@code dev.rpma.binding} calls, every librpma and
 * libc function with its C name, bound through JNA and, for the calls made per message or per
 * connection, through the JNI library when the jar has one.
 */
@NullMarked
package dev.rpma.binding.internal;

import org.jspecify.annotations.NullMarked;

/**
 * The typed Java API of librpma: {@link dev.rpma.binding.Rpma} is the entry point, and peers, endpoints,
 * connection requests, connections, memory regions and completion queues are handles that own
 * one native object each and free it on {@code close()}.
 */
@NullMarked
package dev.rpma.binding;

import org.jspecify.annotations.NullMarked;

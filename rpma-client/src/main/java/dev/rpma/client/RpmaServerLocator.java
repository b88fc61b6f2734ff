package dev.rpma.client;

import org.jspecify.annotations.Nullable;

/**
 * Chooses the server of each connection attempt of an {@link RpmaClient} that calls many instances of
 * one service ({@link RpmaClientBuilder#servers(RpmaServerLocator)}), in place of one fixed address: a
 * registry's instances, for example. Each pooled connection asks it before each attempt, so the pool
 * spreads over what it answers, and a connection whose server rejected it, was unreachable or was lost
 * moves to the server it answers next.
 *
 * <p>It is called on the connection's event loop, where the connection request itself is made: answer
 * from memory, or within the client's connect timeout. Its {@code toString()} names the servers in the
 * client's messages. Implementations must be thread-safe: the connections of several loops ask it.
 */
@FunctionalInterface
public interface RpmaServerLocator {

    /**
     * The server of a connection's next attempt.
     *
     * @param previous the server the connection's last attempt failed on or its last connection ended
     *     with, which a locator that knows others should not answer again; {@code null} for a
     *     connection's first attempt
     * @throws RpmaClientException when no server is known now (for example
     *     {@link RpmaServerUnreachableException}); the attempt fails with it and the connection tries again
     *     after its back-off
     */
    RpmaServerAddress next(@Nullable RpmaServerAddress previous);
}

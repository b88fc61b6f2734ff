package dev.rpma.spring.server;

import java.time.Duration;
import java.util.function.Supplier;

import dev.rpma.jna.RpmaException;

/**
 * Hooks for observability around the dispatch path (timers, tracing). Implementations must be
 * thread-safe and quick; the defaults do nothing.
 */
public interface RpmaServerObserver {

    /** A no-op observer. */
    RpmaServerObserver NONE = new RpmaServerObserver() {
    };

    /** How long a request waited in the queue before a handler thread took it. */
    default void queueWait(String endpoint, Duration wait) {
    }

    /** Wraps a handler invocation; must call {@code invocation} exactly once and return its result. */
    default <T> T handle(RpmaIncomingRequest request, String handlerName, Supplier<T> invocation) {
        return invocation.get();
    }

    /** A meter source: the endpoint server was created (before it starts). */
    default void endpointCreated(RpmaEndpointServer server) {
    }

    /**
     * librpma failed on the endpoint or one of its connections; the error is already counted in
     * {@link RpmaEndpointStatistics#errors()}, so a new function and code can be registered as a meter.
     * Called on the thread that met it, usually the acceptor's: never block.
     */
    default void error(String endpoint, RpmaException error) {
    }
}

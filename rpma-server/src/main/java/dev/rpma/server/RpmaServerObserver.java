package dev.rpma.server;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.RpmaException;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * Hooks for observability around the server (meters, tracing). Implementations must be
 * thread-safe and quick: several are called on event loops. The defaults do nothing.
 */
public interface RpmaServerObserver {

    /** A no-op observer. */
    RpmaServerObserver NONE = new RpmaServerObserver() {
    };

    /** How long a connection request waited in the queue before a handler thread took it. */
    default void queueWait(String endpoint, Duration wait) {
    }

    /**
     * Wraps a connection handler invocation; must call {@code invocation} exactly once and return its
     * result or throw what it threw.
     */
    default <T> T handle(RpmaIncomingRequest request, String handlerName, Callable<T> invocation) throws Exception {
        return invocation.call();
    }

    /**
     * Runs a message handler whose frame carried a trace context (framed mode, from a client that traces
     * its requests): must call {@code handler.onMessage(message, session)} exactly once, on the calling
     * thread, and return its result or throw what it threw. An observation opened here with
     * {@code traceParent} as its remote parent makes the handler's span the child of the client's.
     * Messages without a trace context do not come here, so untraced traffic costs nothing. Called on
     * the thread that runs the handler (the event loop, or a message thread): never block.
     *
     * @param traceParent the W3C traceparent the client sent, checked to be of that format (the
     *     client's bytes nonetheless: never log it raw)
     */
    default @Nullable Object handleTraced(String endpoint, RpmaMessageListener handler, String traceParent,
            ByteBuffer message, RpmaSession session) throws Exception {
        return handler.onMessage(message, session);
    }

    /**
     * A meter source: the endpoint was created (before it starts). Called again, with a new object of
     * the same name and the same {@link RpmaServedEndpoint#statistics()}, when the endpoint is created
     * anew after its RDMA device came back.
     */
    default void endpointCreated(RpmaServedEndpoint endpoint) {
    }

    /** A meter source: the server's data-path event loops were created. */
    default void loopsCreated(List<RpmaEventLoop> loops) {
    }

    /**
     * How long one message handler invocation took, for the first message of each session and then one
     * in every {@value RpmaServer#HANDLER_TIMING_SAMPLE} (timing each would cost two clock reads per
     * message). Called on the thread that ran the handler (the event loop, or a message thread): never
     * block.
     */
    default void messageHandled(String endpoint, String handlerName, long nanos, boolean failed) {
    }

    /**
     * librpma failed on the endpoint or one of its connections; the error is already counted in
     * {@link RpmaEndpointStatistics#errors()}, so a new function and code can be registered as a meter.
     * Called on the thread that met it, an acceptor or an event loop: never block.
     */
    default void error(String endpoint, RpmaException error) {
    }
}

package dev.rpma.client;

import org.jspecify.annotations.Nullable;

/**
 * Observes each request, message and exchange of an {@link RpmaClient} from the call to its outcome,
 * and gives the trace context its frame carries to the server (in Spring, an Observation per request:
 * {@code RpmaClientObservations}). The default, {@link #NONE}, observes nothing and costs nothing: no
 * object per request, no trace context on the wire.
 */
@FunctionalInterface
public interface RpmaRequestObserver {

    /** Observes nothing. */
    RpmaRequestObserver NONE = (client, server, route) -> null;

    /**
     * A request is made: called on the calling thread (so what is current there, an observation or a
     * span, can be its parent), before it is handed to a connection.
     *
     * @param client the client's name
     * @param server {@code address:port} of the server
     * @param route its route; empty in raw mode
     * @return its observation, stopped once with its outcome; {@code null} to observe nothing
     */
    @Nullable Observed start(String client, String server, String route);

    /** One request's observation. */
    interface Observed {

        /**
         * The W3C traceparent to send in the request's frame (55 ASCII bytes, {@code 00-<trace id>-<span
         * id>-<flags>}), or {@code null} for none. Asked on the connection's loop when the frame is
         * written, and sent only to a server whose HELLO said it takes a trace context.
         */
        byte @Nullable [] traceParent();

        /**
         * The request ended: on the connection's event loop, or on the calling thread when it failed
         * before it reached one. Return at once.
         *
         * @param failure why it failed; {@code null} on success, and when the caller cancelled it
         */
        void stop(RpmaClientObserver.Outcome outcome, @Nullable Throwable failure);
    }
}

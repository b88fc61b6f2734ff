package dev.rpma.spring.boot.autoconfigure.client;

import java.nio.charset.StandardCharsets;

import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.SenderContext;
import org.jspecify.annotations.Nullable;

import dev.rpma.client.RpmaClientObserver;
import dev.rpma.server.RpmaFraming;

/**
 * The {@link io.micrometer.observation.Observation.Context} of one client request: the client, the
 * server, the route and, once it ended, its outcome. It is its own carrier: a tracer's propagator
 * writes the W3C {@code traceparent} into it, and the client sends that in the request's frame.
 * Without a tracer nothing is written and the frame carries nothing.
 */
public class RpmaClientObservationContext extends SenderContext<RpmaClientObservationContext> {

    /** The one field the frame carries: W3C Trace Context's. */
    static final String TRACE_PARENT = "traceparent";

    private final String client;

    private final String server;

    private final String route;

    private RpmaClientObserver.@Nullable Outcome outcome;

    private byte @Nullable [] traceParent;

    public RpmaClientObservationContext(String client, String server, String route) {
        super((carrier, key, value) -> carrier.propagate(key, value), Kind.CLIENT);
        this.client = client;
        this.server = server;
        this.route = route;
        setCarrier(this);
        setRemoteServiceName(client);
        setRemoteServiceAddress("rdma://" + server);
    }

    /** The client's name (the configured server's). */
    public String getClient() {
        return this.client;
    }

    /** {@code address:port} of the server. */
    public String getServer() {
        return this.server;
    }

    /** The request's route; empty in raw mode. */
    public String getRoute() {
        return this.route;
    }

    /** How it ended; {@code null} until then. */
    public RpmaClientObserver.@Nullable Outcome getOutcome() {
        return this.outcome;
    }

    void setOutcome(RpmaClientObserver.Outcome outcome) {
        this.outcome = outcome;
    }

    /** The W3C traceparent a propagator gave, as the frame carries it; {@code null} without one. */
    byte @Nullable [] traceParent() {
        return this.traceParent;
    }

    /**
     * A propagator sets a field: the traceparent is kept when it is of the W3C format (a server would
     * drop another); other fields (tracestate, baggage, B3's) have no place in the frame.
     */
    private void propagate(String key, String value) {
        if (TRACE_PARENT.equals(key)) {
            byte[] bytes = value.getBytes(StandardCharsets.US_ASCII);
            this.traceParent = RpmaFraming.isTraceParent(bytes) ? bytes : null;
        }
    }
}

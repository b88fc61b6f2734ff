package dev.rpma.spring.boot.actuate.observation;

import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.ReceiverContext;

/**
 * The {@link io.micrometer.observation.Observation.Context} of one message handler invocation whose
 * frame carried a trace context: the endpoint, the handler, and the client's W3C traceparent as the
 * carrier a tracer's propagator extracts the remote parent from.
 */
public class RpmaMessageObservationContext extends ReceiverContext<String> {

    private final String endpoint;

    private final String handler;

    public RpmaMessageObservationContext(String endpoint, String handler, String traceParent) {
        super((carrier, key) -> "traceparent".equals(key) ? carrier : null, Kind.SERVER);
        this.endpoint = endpoint;
        this.handler = handler;
        setCarrier(traceParent);
    }

    /** The name of the endpoint the message arrived on. */
    public String getEndpoint() {
        return this.endpoint;
    }

    /** The name of the handler of its route. */
    public String getHandler() {
        return this.handler;
    }
}

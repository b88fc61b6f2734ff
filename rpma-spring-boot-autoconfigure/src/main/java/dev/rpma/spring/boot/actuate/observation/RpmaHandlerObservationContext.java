package dev.rpma.spring.boot.actuate.observation;

import io.micrometer.observation.Observation;

import dev.rpma.server.RpmaIncomingRequest;

/**
 * The {@link Observation.Context} of one handler invocation: the request and the endpoint and
 * handler it went to.
 */
public class RpmaHandlerObservationContext extends Observation.Context {

    private final RpmaIncomingRequest request;

    private final String handler;

    public RpmaHandlerObservationContext(RpmaIncomingRequest request, String handler) {
        this.request = request;
        this.handler = handler;
    }

    /** The request being decided. */
    public RpmaIncomingRequest getRequest() {
        return this.request;
    }

    /** The name of the endpoint the request arrived on. */
    public String getEndpoint() {
        return this.request.endpointName();
    }

    /** The name of the handler deciding it. */
    public String getHandler() {
        return this.handler;
    }
}

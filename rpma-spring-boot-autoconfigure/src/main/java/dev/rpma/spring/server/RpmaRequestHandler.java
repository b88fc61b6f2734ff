package dev.rpma.spring.server;

/**
 * Decides a connection request: connect it or reject it. Runs on a handler thread (on the endpoint's
 * acceptor thread when its settings say {@link RpmaEndpointSettings#inlineHandler()}). Returning without
 * a decision, throwing, or passing the request deadline gets the request rejected.
 */
@FunctionalInterface
public interface RpmaRequestHandler {

    void handle(RpmaIncomingRequest request) throws Exception;

    /** A name for logs and traces (the annotated method). */
    default String name() {
        return toString();
    }
}

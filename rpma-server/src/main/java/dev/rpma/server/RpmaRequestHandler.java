package dev.rpma.server;

/**
 * Decides a connection request: connect it or reject it, from its private data. Runs on a handler
 * thread (on the endpoint's acceptor thread when its settings say
 * {@link RpmaEndpointSettings.Acceptor#inlineHandler()}). Returning without a decision, throwing, or
 * passing the request deadline gets the request rejected. The session that a connect starts is served
 * by the server's event loops: the handler returns at once.
 */
@FunctionalInterface
public interface RpmaRequestHandler {

    void handle(RpmaIncomingRequest request) throws Exception;

    /** A name for logs and traces (the annotated method). */
    default String name() {
        return toString();
    }
}

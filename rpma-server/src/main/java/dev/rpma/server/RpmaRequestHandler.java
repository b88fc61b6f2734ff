package dev.rpma.server;

/**
 * Decides a connection request: connect it or reject it, from its private data. Runs on a handler
 * thread (on the endpoint's acceptor thread when its settings say
 * {@link RpmaEndpointSettings.Acceptor#inlineHandler()}). Returning without a decision, throwing, or
 * passing the request deadline gets the request rejected. The session that a connect starts is served
 * by the server's event loops: the handler returns at once.
 *
 * <p>The private data is the client's: log it only through {@link RpmaEscaping}, since a newline in it
 * would forge a log line. The server logs a handler's failure escaped and at most once a second per
 * endpoint, with the stack trace the first time.
 */
@FunctionalInterface
public interface RpmaRequestHandler {

    void handle(RpmaIncomingRequest request) throws Exception;

    /** A name for logs and traces (the annotated method). */
    default String name() {
        return toString();
    }
}

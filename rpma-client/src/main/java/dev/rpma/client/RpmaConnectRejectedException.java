package dev.rpma.client;

/**
 * The server rejected the connection ({@code RPMA_CONN_REJECTED}): its admission step or its
 * connection handler refused the private data (with token admission: no token, or one of another key
 * or secret, or issued outside the server's clock skew), or it turned the request away because it is
 * overloaded (at its connection limit, its handler queue full) or paused, or it is stopping. The
 * client is not told which; the server's {@code rpma.requests} metric counts them by reason.
 */
public class RpmaConnectRejectedException extends RpmaClientException {

    private static final long serialVersionUID = 1L;

    public RpmaConnectRejectedException(String server) {
        super(server, "The server at " + server + " rejected the connection (RPMA_CONN_REJECTED): it may be overloaded"
                + " (at its connection limit), paused or stopping, or it refused this client's private data: when the"
                + " server wants an admission token, check the client's admission key id and secret and that both clocks"
                + " are in step", null);
    }
}

package dev.rpma.client;

/**
 * The server rejected the connection ({@code RPMA_CONN_REJECTED}): its connection handler refused the
 * private data, or it turned the request away because it is overloaded (at its connection limit,
 * its handler queue full) or paused, or it is stopping.
 */
public class RpmaConnectRejectedException extends RpmaClientException {

    private static final long serialVersionUID = 1L;

    public RpmaConnectRejectedException(String server) {
        super(server, "The server at " + server + " rejected the connection (RPMA_CONN_REJECTED): it may be overloaded"
                + " (at its connection limit), paused or stopping, or its connection handler refused this client's"
                + " private data", null);
    }
}

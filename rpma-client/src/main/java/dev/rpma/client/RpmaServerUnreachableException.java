package dev.rpma.client;

import org.jspecify.annotations.Nullable;

/**
 * No connection to the server could be made: the address does not resolve to an RDMA route
 * ({@code rpma_conn_req_new} failed), nothing listens on the port or no route answered
 * ({@code RPMA_CONN_UNREACHABLE}), or the connection was not established within the connect
 * timeout.
 */
public class RpmaServerUnreachableException extends RpmaClientException {

    private static final long serialVersionUID = 1L;

    public RpmaServerUnreachableException(String server, String why, @Nullable Throwable cause) {
        super(server, "The server at " + server + " is unreachable: " + why, cause);
    }
}

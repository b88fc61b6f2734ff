package dev.rpma.client;

import org.jspecify.annotations.Nullable;

/**
 * The connection ended while the request or operation was in flight (the server closed it, the
 * connection was lost, or its queue pair failed): whether the server handled it is unknown. The
 * client retries only requests marked idempotent; the pool replaces the connection.
 */
public class RpmaConnectionLostException extends RpmaClientException {

    private static final long serialVersionUID = 1L;

    public RpmaConnectionLostException(String server, String why, @Nullable Throwable cause) {
        super(server, "The connection to " + server + " ended while a request was in flight: " + why, cause);
    }
}

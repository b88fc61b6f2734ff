package dev.rpma.client;

/** The client was closed before the request or operation completed, or after it was closed. */
public class RpmaClientClosedException extends RpmaClientException {

    private static final long serialVersionUID = 1L;

    public RpmaClientClosedException(String server) {
        super(server, "The client of " + server + " is closed", null);
    }
}

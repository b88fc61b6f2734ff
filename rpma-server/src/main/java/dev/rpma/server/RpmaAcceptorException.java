package dev.rpma.server;

import dev.rpma.binding.RpmaException;

/** The acceptor met an error that leaves its endpoint unusable; the endpoint stops as FAILED. */
public class RpmaAcceptorException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public RpmaAcceptorException(String why, RpmaException cause) {
        super("Accepting stopped: " + why + ": " + cause.getMessage(), cause);
    }

    /** The librpma failure. */
    public RpmaException rpmaCause() {
        return (RpmaException) getCause();
    }
}

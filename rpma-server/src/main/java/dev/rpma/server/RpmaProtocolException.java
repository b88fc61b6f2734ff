package dev.rpma.server;

/**
 * Thrown by a message handler for a message that breaks its protocol: the session ends with
 * {@link RpmaSessionEnd.Reason#ERROR}, counted as a malformed message, and the server goes on
 * serving the others.
 */
public class RpmaProtocolException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param message what is wrong with the message, for the log; never the peer's bytes unescaped */
    public RpmaProtocolException(String message) {
        super(message);
    }
}

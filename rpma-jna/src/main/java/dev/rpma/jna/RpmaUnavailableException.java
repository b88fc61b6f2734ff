package dev.rpma.jna;

/** librpma is not installed or could not be bound; the message says what was searched and how to install it. */
public class RpmaUnavailableException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    public RpmaUnavailableException(Throwable cause) {
        super(cause.getMessage(), cause);
    }
}

package dev.rpma.client;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.RpmaError;
import dev.rpma.binding.RpmaException;

/**
 * A request, an operation or a connection of an {@link RpmaClient} failed. The subclasses say how;
 * where librpma said why, {@link #function()} and {@link #error()} name its call and its code.
 */
public class RpmaClientException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String server;

    public RpmaClientException(String server, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.server = server;
    }

    /** {@code address:port} of the server. */
    public String server() {
        return this.server;
    }

    /** The librpma function that failed ({@code rpma_conn_req_new}...), when librpma said why. */
    public @Nullable String function() {
        RpmaException cause = rpmaCause();
        return (cause != null) ? cause.function() : null;
    }

    /** Its {@code RPMA_E_*} code, when librpma said why. */
    public @Nullable RpmaError error() {
        RpmaException cause = rpmaCause();
        return (cause != null) ? cause.error() : null;
    }

    private @Nullable RpmaException rpmaCause() {
        for (Throwable cause = getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof RpmaException rpma) {
                return rpma;
            }
        }
        return null;
    }
}

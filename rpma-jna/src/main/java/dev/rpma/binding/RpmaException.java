package dev.rpma.binding;

import org.jspecify.annotations.Nullable;

/**
 * A librpma call failed. Carries the C function's name, the {@link RpmaError} code, librpma's own
 * text ({@code rpma_err_2str}) and, for {@link RpmaError#PROVIDER}, the {@code errno} the provider
 * left. Message: {@code rpma_ep_listen() failed with RPMA_E_PROVIDER (-100002): Provider error
 * occurred; errno 19 (ENODEV)}, followed by a hint where there is a known fix.
 */
public class RpmaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String function;

    private final RpmaError error;

    private final int returnCode;

    private final int errno;

    private final String librpmaText;

    private final @Nullable String hint;

    public RpmaException(String function, int returnCode, String librpmaText, int errno, @Nullable String hint) {
        super(message(function, returnCode, librpmaText, errno, hint));
        this.function = function;
        this.error = RpmaError.of(returnCode);
        this.returnCode = returnCode;
        this.errno = errno;
        this.librpmaText = librpmaText;
        this.hint = hint;
    }

    /** The C function that failed, e.g. {@code rpma_ep_next_conn_req}. */
    public String function() {
        return this.function;
    }

    /** The {@code RPMA_E_*} code. */
    public RpmaError error() {
        return this.error;
    }

    /** The C return value exactly as returned. */
    public int returnCode() {
        return this.returnCode;
    }

    /** {@code errno} after a {@link RpmaError#PROVIDER} failure, 0 for the other codes. */
    public int errno() {
        return this.errno;
    }

    /** librpma's description of the code ({@code rpma_err_2str}). */
    public String librpmaText() {
        return this.librpmaText;
    }

    /**
     * What is wrong and what to do, where there is a known fix (see {@link RpmaFailureKind#hint});
     * else {@code null}.
     */
    public @Nullable String hint() {
        return this.hint;
    }

    /**
     * The message without the {@link #hint()}: which call failed and how, e.g. {@code rpma_ep_listen()
     * failed with RPMA_E_PROVIDER (-100002): Provider error occurred; errno 19 (ENODEV)}. For a caller
     * that gives its own advice.
     */
    public String diagnostic() {
        return diagnostic(this.function, this.returnCode, this.librpmaText, this.errno);
    }

    private static String diagnostic(String function, int returnCode, String text, int errno) {
        StringBuilder message = new StringBuilder(function).append("() failed with ")
                .append(RpmaError.of(returnCode).cName()).append(" (").append(returnCode).append("): ").append(text);
        if (errno != 0) {
            message.append("; errno ").append(errno).append(" (").append(Errno.name(errno)).append(')');
        }
        return message.toString();
    }

    private static String message(String function, int returnCode, String text, int errno, @Nullable String hint) {
        String diagnostic = diagnostic(function, returnCode, text, errno);
        return (hint != null) ? diagnostic + ". " + hint : diagnostic;
    }
}

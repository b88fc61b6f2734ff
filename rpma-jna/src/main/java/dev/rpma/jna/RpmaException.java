package dev.rpma.jna;

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

    public RpmaException(String function, int returnCode, String librpmaText, int errno, @Nullable String hint) {
        super(message(function, returnCode, librpmaText, errno, hint));
        this.function = function;
        this.error = RpmaError.of(returnCode);
        this.returnCode = returnCode;
        this.errno = errno;
        this.librpmaText = librpmaText;
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

    private static String message(String function, int returnCode, String text, int errno, @Nullable String hint) {
        StringBuilder message = new StringBuilder(function).append("() failed with ")
                .append(RpmaError.of(returnCode).cName()).append(" (").append(returnCode).append("): ").append(text);
        if (errno != 0) {
            message.append("; errno ").append(errno).append(" (").append(Errno.name(errno)).append(')');
        }
        if (hint != null) {
            message.append(". ").append(hint);
        }
        return message.toString();
    }
}

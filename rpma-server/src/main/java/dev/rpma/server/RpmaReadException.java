package dev.rpma.server;

import java.util.OptionalInt;

import dev.rpma.binding.CompletionStatus;

/**
 * A session's read of the client's memory ({@link RpmaSession#read}) did not complete: it completed
 * with an error status (then {@link #completionStatus()} is the status, and the session ends, since
 * the queue pair is in the error state after it), posting it failed, or the session ended before its
 * completion came. What the region holds in the read's range is then undefined.
 */
public class RpmaReadException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int status;

    RpmaReadException(String message, int status, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    RpmaReadException(String message, int status) {
        super(message);
        this.status = status;
    }

    /** The read's completion status ({@code enum ibv_wc_status}, see {@link CompletionStatus}), if it completed. */
    public OptionalInt completionStatus() {
        return (this.status >= 0) ? OptionalInt.of(this.status) : OptionalInt.empty();
    }
}

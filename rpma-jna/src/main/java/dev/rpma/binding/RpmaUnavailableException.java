package dev.rpma.binding;

import dev.rpma.binding.internal.RpmaLibraryLoader;

/**
 * librpma is not installed or could not be bound; the message says what was searched, how each try
 * failed, and how to install the library. {@link #problem()} and {@link #advice()} are the two
 * parts, for a caller that shows them apart.
 */
public class RpmaUnavailableException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    public RpmaUnavailableException(Throwable cause) {
        super(cause.getMessage(), cause);
    }

    /** What failed: each library name tried and the loader's error for it. */
    public String problem() {
        Throwable cause = getCause();
        return (cause instanceof RpmaLibraryLoader.LoadFailure failure) ? failure.attempts() : String.valueOf(cause);
    }

    /** How to make librpma loadable, as one sentence without its final period. */
    public String advice() {
        return RpmaLibraryLoader.ADVICE;
    }
}

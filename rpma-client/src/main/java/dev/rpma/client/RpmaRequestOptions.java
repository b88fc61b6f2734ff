package dev.rpma.client;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * How one request is sent.
 *
 * @param idempotent whether the server may handle it twice: only then is it sent again on another
 *     connection when its connection is lost after it was sent (a request not yet sent moves to
 *     another connection either way)
 * @param timeout its timeout, {@code null} for the client's
 */
public record RpmaRequestOptions(boolean idempotent, @Nullable Duration timeout) {

    /** Not idempotent, the client's timeout. */
    public static final RpmaRequestOptions DEFAULT = new RpmaRequestOptions(false, null);

    public RpmaRequestOptions {
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("A request timeout must be positive, got " + timeout);
        }
    }

    /** Idempotent, the client's timeout. */
    public static RpmaRequestOptions idempotentRequest() {
        return new RpmaRequestOptions(true, null);
    }

    public RpmaRequestOptions withTimeout(Duration timeout) {
        return new RpmaRequestOptions(this.idempotent, timeout);
    }
}

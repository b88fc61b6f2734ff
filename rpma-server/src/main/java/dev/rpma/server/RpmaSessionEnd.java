package dev.rpma.server;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Why and how a session ended.
 *
 * @param reason why
 * @param detail what happened, for a log line (never bytes of the peer)
 * @param cause the exception behind an {@link Reason#ERROR}, if there is one
 */
public record RpmaSessionEnd(Reason reason, String detail, @Nullable Throwable cause) {

    /** Why a session ended; bounded, so usable as a metric tag. */
    public enum Reason {
        /** The client disconnected. */
        CLOSED,
        /** The application closed it ({@link RpmaSession#close()}). */
        CLOSED_BY_SERVER,
        /** The connection was lost (the provider reported an error, or the client vanished). */
        LOST,
        /** No message arrived within the endpoint's idle timeout. */
        IDLE,
        /** The client broke the protocol (a message too large, empty, or malformed) or an operation failed. */
        ERROR,
        /** A limit of the session was exceeded (its send queue overflowed). */
        CAPACITY,
        /** The server stopped and the grace period was over. */
        SHUTDOWN;

        /** Lower-case tag value. */
        public String tag() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    static RpmaSessionEnd of(Reason reason, String detail) {
        return new RpmaSessionEnd(reason, detail, null);
    }
}

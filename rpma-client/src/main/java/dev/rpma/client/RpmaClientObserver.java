package dev.rpma.client;

import java.time.Duration;

/**
 * What an {@link RpmaClient} reports, for metrics. Called on the client's event loops: return at once.
 * Every method does nothing by default.
 */
public interface RpmaClientObserver {

    /** An observer that ignores everything. */
    RpmaClientObserver NONE = new RpmaClientObserver() {
    };

    /** How a request ended. */
    enum Outcome {
        SUCCESS, REMOTE_ERROR, TIMEOUT, LOST, REJECTED, UNREACHABLE, CLOSED, FAILED;

        /** Lower case, for tags. */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }

    /**
     * A request, message or exchange ended, {@code nanos} after it was made.
     *
     * @param server {@code address:port} of the server
     * @param route its route; empty in raw mode
     */
    default void requestCompleted(String client, String server, String route, Outcome outcome, long nanos) {
    }

    /** A pooled connection moved to {@code state}. */
    default void connectionState(String client, RpmaClientConnectionState from, RpmaClientConnectionState to) {
    }

    /** A connection will be attempted again after {@code delay}: the {@code attempt}th in a row after a failure. */
    default void reconnectScheduled(String client, int attempt, Duration delay) {
    }

    /** A reply came for a request that was no longer waiting (it timed out or was cancelled): dropped. */
    default void lateReplyDropped(String client) {
    }
}

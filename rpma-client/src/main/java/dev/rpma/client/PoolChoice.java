package dev.rpma.client;

import org.jspecify.annotations.Nullable;

/**
 * How an {@link RpmaClient} picks the connection of its pool for a request: the established one with
 * the fewest requests in flight, else (when asked) the connecting one with the fewest, the first from
 * a given place among equals. One pass reads each connection's state once: with a pass per state, a
 * connection established between the two passes would be in neither, and a request made while the
 * pool's connections are being established could find none of them.
 */
final class PoolChoice {

    /** What the choice reads of a connection; from any thread. */
    interface Candidate {

        RpmaClientConnectionState state();

        /** Requests and operations given to it and not finished. */
        int load();
    }

    private PoolChoice() {
    }

    /**
     * The least loaded established connection of {@code pool} other than {@code not}, looking from
     * {@code start} on; when none is established and {@code orConnecting}, the least loaded connecting
     * one; else {@code null}.
     */
    static <C extends Candidate> @Nullable C choose(C[] pool, @Nullable C not, int start, boolean orConnecting) {
        C established = null;
        int establishedLoad = 0;
        C connecting = null;
        int connectingLoad = 0;
        int size = pool.length;
        for (int i = 0; i < size; i++) {
            C candidate = pool[(start + i) % size];
            if (candidate == not) {
                continue;
            }
            RpmaClientConnectionState state = candidate.state();
            if (state == RpmaClientConnectionState.ESTABLISHED) {
                int load = candidate.load();
                if (established == null || load < establishedLoad) {
                    established = candidate;
                    establishedLoad = load;
                }
            }
            else if (orConnecting && state == RpmaClientConnectionState.CONNECTING && established == null) {
                int load = candidate.load();
                if (connecting == null || load < connectingLoad) {
                    connecting = candidate;
                    connectingLoad = load;
                }
            }
        }
        return (established != null) ? established : connecting;
    }
}

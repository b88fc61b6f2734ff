package dev.rpma.server;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.RpmaConnectionConfig;

/**
 * The queue sizes an endpoint's connections need for its data path: a receive queue for every receive
 * slot, a send queue for every send slot, and a completion queue for both (receives complete on the
 * main completion queue). With a shared receive queue, the receives and their completions are the
 * queue's: the connection needs only its send slots. All 0 for an endpoint without message handlers:
 * librpma's defaults do.
 *
 * <p>A session's reads ({@link RpmaSession#read}) take what the queues have beyond that: each read in
 * flight holds a place in the send queue and, signaled, one in the completion queue
 * ({@link #readsInFlight}).
 *
 * @param cq at least this completion queue size
 * @param sq at least this send queue size
 * @param rq at least this receive queue size
 */
public record RpmaQueueSizes(int cq, int sq, int rq) {

    static final RpmaQueueSizes NONE = new RpmaQueueSizes(0, 0, 0);

    /** Reads one session has in flight at most; more wait on its event loop. */
    public static final int MAX_READS_IN_FLIGHT = 16;

    /** librpma's size of a queue its connection configuration leaves unset ({@code RPMA_DEFAULT_Q_SIZE}). */
    static final int LIBRPMA_DEFAULT_QUEUE_SIZE = 10;

    static RpmaQueueSizes of(RpmaEndpointSettings.Messages messages) {
        if (messages.sharesReceives()) {
            return new RpmaQueueSizes(messages.sendSlots(), messages.sendSlots(), 0);
        }
        return new RpmaQueueSizes(messages.receiveSlots() + messages.sendSlots(), messages.sendSlots(),
                messages.receiveSlots());
    }

    /**
     * How many reads a session of connections made with {@code config} ({@code null}: librpma's
     * defaults) can have in flight beside these sizes: the room left in both its send and its
     * completion queue, at most {@link #MAX_READS_IN_FLIGHT}. With librpma's default queues an endpoint
     * without message handlers gets 10; one with them gets what its queues were set above its slots.
     */
    int readsInFlight(@Nullable RpmaConnectionConfig config) {
        int sendQueue = (config != null) ? config.sqSize() : LIBRPMA_DEFAULT_QUEUE_SIZE;
        int completionQueue = (config != null) ? config.cqSize() : LIBRPMA_DEFAULT_QUEUE_SIZE;
        int room = Math.min(sendQueue - this.sq, completionQueue - this.cq);
        return Math.max(0, Math.min(MAX_READS_IN_FLIGHT, room));
    }

    /** Whether the data path needs anything of the queues. */
    public boolean isNeeded() {
        return this.cq > 0;
    }
}

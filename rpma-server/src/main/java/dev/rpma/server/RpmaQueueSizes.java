package dev.rpma.server;

/**
 * The queue sizes an endpoint's connections need for its data path: a receive queue for every receive
 * slot, a send queue for every send slot, and a completion queue for both (receives complete on the
 * main completion queue). With a shared receive queue, the receives and their completions are the
 * queue's: the connection needs only its send slots. All 0 for an endpoint without message handlers:
 * librpma's defaults do.
 *
 * @param cq at least this completion queue size
 * @param sq at least this send queue size
 * @param rq at least this receive queue size
 */
public record RpmaQueueSizes(int cq, int sq, int rq) {

    static final RpmaQueueSizes NONE = new RpmaQueueSizes(0, 0, 0);

    static RpmaQueueSizes of(RpmaEndpointSettings.Messages messages) {
        if (messages.sharesReceives()) {
            return new RpmaQueueSizes(messages.sendSlots(), messages.sendSlots(), 0);
        }
        return new RpmaQueueSizes(messages.receiveSlots() + messages.sendSlots(), messages.sendSlots(),
                messages.receiveSlots());
    }

    /** Whether the data path needs anything of the queues. */
    public boolean isNeeded() {
        return this.cq > 0;
    }
}

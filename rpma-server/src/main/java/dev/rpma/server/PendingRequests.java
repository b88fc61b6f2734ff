package dev.rpma.server;

import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * The requests of one endpoint handed to its handler threads and not yet decided, oldest first,
 * with their deadlines: the acceptor rejects a request whose handler did not decide in time. A
 * decided request leaves when it reaches the front. Owned by the acceptor thread.
 *
 * <p>A list linked through the requests ({@link RpmaIncomingRequest#pendingAfter}), not an
 * {@link java.util.ArrayDeque}: adding a request then writes a field of the request added before it,
 * most often as young as itself, instead of a slot of a long-lived array that grows by copying with
 * the backlog. Under load that array store was 5% of the acceptor's samples (the G1 write barrier
 * of a young reference stored into an old array, and the growth of the array to thousands of slots
 * in each burst).
 */
final class PendingRequests {

    private @Nullable RpmaIncomingRequest oldest;

    private @Nullable RpmaIncomingRequest newest;

    private int size;

    void add(RpmaIncomingRequest request) {
        RpmaIncomingRequest newest = this.newest;
        if (newest == null) {
            this.oldest = request;
        }
        else {
            newest.pendingAfter = request;
        }
        this.newest = request;
        this.size++;
    }

    /**
     * Drops decided requests from the front, up to the first undecided one: called as decisions are
     * carried out, so that the requests held are those being decided, not every request of the
     * deadline's length (hundreds of thousands under load).
     */
    void dropDecided() {
        RpmaIncomingRequest oldest;
        while ((oldest = this.oldest) != null && oldest.state() != RpmaIncomingRequest.PENDING) {
            removeOldest(oldest);
        }
    }

    /**
     * Drops decided requests from the front and hands those past their deadline to {@code expired},
     * up to the first one still within it.
     *
     * @return the deadline of the oldest undecided request, or {@code null} when none is left
     */
    @Nullable Long settle(long now, Consumer<RpmaIncomingRequest> expired) {
        RpmaIncomingRequest oldest;
        while ((oldest = this.oldest) != null) {
            if (oldest.state() == RpmaIncomingRequest.PENDING) {
                if (now - oldest.deadlineNanos < 0) {
                    return oldest.deadlineNanos;
                }
                expired.accept(oldest);
            }
            removeOldest(oldest);
        }
        return null;
    }

    /** Hands every undecided request to {@code each} and forgets them all. */
    void drain(Consumer<RpmaIncomingRequest> each) {
        RpmaIncomingRequest oldest;
        while ((oldest = this.oldest) != null) {
            removeOldest(oldest);
            if (oldest.state() == RpmaIncomingRequest.PENDING) {
                each.accept(oldest);
            }
        }
    }

    private void removeOldest(RpmaIncomingRequest oldest) {
        RpmaIncomingRequest next = oldest.pendingAfter;
        // unlinked, so that a request a handler still holds does not keep the later ones reachable
        oldest.pendingAfter = null;
        this.oldest = next;
        if (next == null) {
            this.newest = null;
        }
        this.size--;
    }

    int size() {
        return this.size;
    }
}

package dev.rpma.server;

import java.util.ArrayDeque;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * The requests of one endpoint handed to its handler threads and not yet decided, oldest first,
 * with their deadlines: the acceptor rejects a request whose handler did not decide in time. A
 * decided request leaves when it reaches the front. Owned by the acceptor thread.
 */
final class PendingRequests {

    private final ArrayDeque<RpmaIncomingRequest> requests = new ArrayDeque<>();

    void add(RpmaIncomingRequest request) {
        this.requests.addLast(request);
    }

    /** Takes back the request just added (its hand-over to a handler thread failed). */
    void removeLast(RpmaIncomingRequest request) {
        if (this.requests.peekLast() == request) {
            this.requests.pollLast();
        }
    }

    /**
     * Drops decided requests from the front, up to the first undecided one: called as decisions are
     * carried out, so that the requests held are those being decided, not every request of the
     * deadline's length (hundreds of thousands under load).
     */
    void dropDecided() {
        RpmaIncomingRequest oldest;
        while ((oldest = this.requests.peekFirst()) != null && oldest.state() != RpmaIncomingRequest.PENDING) {
            this.requests.pollFirst();
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
        while ((oldest = this.requests.peekFirst()) != null) {
            if (oldest.state() == RpmaIncomingRequest.PENDING) {
                if (now - oldest.deadlineNanos < 0) {
                    return oldest.deadlineNanos;
                }
                expired.accept(oldest);
            }
            this.requests.pollFirst();
        }
        return null;
    }

    /** Hands every undecided request to {@code each} and forgets them all. */
    void drain(Consumer<RpmaIncomingRequest> each) {
        RpmaIncomingRequest request;
        while ((request = this.requests.pollFirst()) != null) {
            if (request.state() == RpmaIncomingRequest.PENDING) {
                each.accept(request);
            }
        }
    }

    boolean isEmpty() {
        return this.requests.isEmpty();
    }

    int size() {
        return this.requests.size();
    }
}

package dev.rpma.server.admission;

import java.util.Iterator;
import java.util.LinkedHashMap;

/**
 * The tokens an endpoint admitted that it would still accept: a token seen again while its time is
 * within the clock skew is a replay. Bounded: a token is forgotten once its time is past, and at
 * capacity no more are taken (the caller then refuses the token, so a replay never gets through
 * for want of memory). Kept in the order seen; forgetting walks from the oldest and stops at the
 * first token still accepted, so a token may stay until those seen before it are forgotten too: at
 * most twice the skew after it was seen. The caller holds the lock.
 */
final class ReplayMemory {

    enum Outcome {
        /** Not seen before, and now remembered. */
        FIRST,
        /** Seen before. */
        REPLAYED,
        /** Not seen before, but there is no room to remember it. */
        FULL
    }

    private record Seen(int keyId, long issuedAt, long nonce) {
    }

    private final int capacity;

    /** The last second in which each token is accepted, in the order the tokens were seen. */
    private final LinkedHashMap<Seen, Long> seen = new LinkedHashMap<>();

    ReplayMemory(int capacity) {
        this.capacity = capacity;
    }

    /**
     * Remembers a token until second {@code acceptedUntil}, unless it was seen before or the memory is full;
     * {@code now} is the current second.
     */
    Outcome remember(int keyId, long issuedAt, long nonce, long acceptedUntil, long now) {
        forgetPast(now);
        Seen token = new Seen(keyId, issuedAt, nonce);
        if (this.seen.containsKey(token)) {
            return Outcome.REPLAYED;
        }
        if (this.seen.size() >= this.capacity) {
            return Outcome.FULL;
        }
        this.seen.put(token, acceptedUntil);
        return Outcome.FIRST;
    }

    private void forgetPast(long now) {
        Iterator<Long> oldestFirst = this.seen.values().iterator();
        while (oldestFirst.hasNext() && oldestFirst.next() < now) {
            oldestFirst.remove();
        }
    }

    int size() {
        return this.seen.size();
    }
}

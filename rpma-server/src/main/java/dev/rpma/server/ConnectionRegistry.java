package dev.rpma.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * The connections of one endpoint: a place is reserved for each request from the moment the
 * acceptor obtains it, so that the endpoint's limit counts requests being decided too; a reserved
 * place becomes a session when the request is connected and is given back when it is rejected, when
 * its connect fails, or when the session's connection is deleted. Thread-safe.
 */
final class ConnectionRegistry {

    private final int limit;

    private final AtomicInteger reserved = new AtomicInteger();

    private final Set<ServerSession> sessions = ConcurrentHashMap.newKeySet();

    private final Object emptied = new Object();

    /**
     * Threads in {@link #awaitEmpty}: a place given back notifies only while one waits, since an
     * endpoint that decides one request at a time empties the registry on every request.
     */
    private volatile int awaiting;

    /** Set by {@link #endAll}: how the sessions added later end. */
    private volatile @Nullable RpmaSessionEnd endedWith;

    ConnectionRegistry(int limit) {
        this.limit = limit;
    }

    /** Reserves a place for a request; {@code false} at the limit. */
    boolean reserve() {
        while (true) {
            int current = this.reserved.get();
            if (current >= this.limit) {
                return false;
            }
            if (this.reserved.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    /** A request that will not become a session gives its place back. */
    void unreserve() {
        release();
    }

    /** The connected request's place is now this session's; after {@link #endAll} it ends at once. */
    void added(ServerSession session) {
        this.sessions.add(session);
        // after the add, as endAll sets the end before it looks at the sessions: one of the two ends it
        RpmaSessionEnd end = this.endedWith;
        if (end != null) {
            session.end(end);
        }
    }

    /** The session's connection is deleted: its place is free. */
    void removed(ServerSession session) {
        if (this.sessions.remove(session)) {
            release();
        }
    }

    private void release() {
        // the count first, then awaiting; awaitEmpty writes awaiting, then reads the count: one of the
        // two sees the other
        if (this.reserved.decrementAndGet() == 0 && this.awaiting != 0) {
            synchronized (this.emptied) {
                this.emptied.notifyAll();
            }
        }
    }

    /** Places taken: sessions and requests being decided. */
    int reserved() {
        return this.reserved.get();
    }

    /** The sessions, in no order. */
    List<ServerSession> sessions() {
        return new ArrayList<>(this.sessions);
    }

    int size() {
        return this.sessions.size();
    }

    /**
     * Ends every session for {@code end}'s reason (each on its own loop), and every session added from
     * now on: a stop's, which may come while the acceptor still carries out a connect.
     */
    void endAll(RpmaSessionEnd end) {
        this.endedWith = end;
        for (ServerSession session : this.sessions) {
            session.end(end);
        }
    }

    /** Whether {@link #endAll} was called; for tests. */
    boolean isEnding() {
        return this.endedWith != null;
    }

    /** Waits until no place is taken; {@code false} on timeout. */
    boolean awaitEmpty(long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        synchronized (this.emptied) {
            this.awaiting++;
            try {
                while (this.reserved.get() > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(this.emptied, left);
                }
            }
            finally {
                this.awaiting--;
            }
        }
        return true;
    }
}

package dev.rpma.binding.testing;

import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * A shared receive queue of a {@link FakeLibRpma} ({@code rpma_srq_new}): the receives posted on it
 * ({@code rpma_srq_recv}), which the messages of every connection created with it in their
 * configuration fill, oldest receive first; and its receive completion queue, where those completions
 * land with the connection's queue pair number (on each connection's own completion queue when the
 * SRQ was made without one). A message that finds no receive waits, in arrival order across the
 * connections, as a receiver-not-ready is retried, until the next {@code rpma_srq_recv}. A connection
 * going to the error state does not flush the SRQ's receives: they belong to the queue. Thread-safe.
 */
public final class FakeSharedReceiveQueue extends FakeObject {

    /** {@code rq_size}: receives it holds at most. */
    final int capacity;

    /** {@code null} when created with an rcq size of 0. */
    FakeCompletionQueue rcq;

    final ArrayDeque<FakeConnection.PostedReceive> receives = new ArrayDeque<>();

    /** Messages waiting for a receive, by arrival. */
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();

    private int posted;

    private record Waiting(FakeConnection connection, byte[] message) {
    }

    FakeSharedReceiveQueue(FakeLibRpma fake, int capacity) {
        super(fake);
        this.capacity = capacity;
    }

    /** The receive completion queue, or {@code null}. */
    public FakeCompletionQueue receiveCompletionQueue() {
        return this.rcq;
    }

    /** Receives posted and not yet filled. */
    public int postedReceives() {
        synchronized (this.fake.lock) {
            return this.receives.size();
        }
    }

    /** Every {@code rpma_srq_recv} that succeeded. */
    public int receivesPostedInAll() {
        synchronized (this.fake.lock) {
            return this.posted;
        }
    }

    /** Messages of the connections waiting for a receive. */
    public int undelivered() {
        synchronized (this.fake.lock) {
            return this.waiting.size();
        }
    }

    /** Under the fake's lock: {@code rpma_srq_recv}. */
    void receivePosted(FakeConnection.PostedReceive receive) {
        this.posted++;
        Waiting next = this.waiting.poll();
        if (next != null) {
            next.connection().deliverInto(receive, next.message());
        }
        else {
            this.receives.add(receive);
            if (this.fake.isLoopback()) {
                Loopback.receivePostedOn(this.fake, this);
            }
        }
    }

    /** Under the fake's lock: a message of {@code connection}; whether a receive took it now. */
    boolean deliver(FakeConnection connection, byte[] message) {
        if (this.receives.isEmpty()) {
            this.waiting.add(new Waiting(connection, message.clone()));
            return false;
        }
        connection.deliverInto(this.receives.poll(), message);
        return true;
    }

    /** Under the fake's lock: the connection's queue pair broke; its messages not yet received are dropped. */
    void dropWaitingOf(FakeConnection connection) {
        for (Iterator<Waiting> it = this.waiting.iterator(); it.hasNext();) {
            if (it.next().connection() == connection) {
                it.remove();
            }
        }
    }

    @Override
    public String toString() {
        return "FakeSharedReceiveQueue[" + this.receives.size() + " receives, " + this.waiting.size() + " waiting]";
    }
}

package dev.rpma.client;

import java.time.Duration;
import java.util.Arrays;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

import dev.rpma.server.loop.RpmaEventLoop;

/**
 * The timeouts of the requests one connection holds: a binary heap of the requests by deadline (each
 * knows its place, {@link PendingRequest#deadlineIndex}), and one loop timer for the earliest,
 * scheduled again only when it fires or an earlier deadline comes in. A loop timer per request would
 * make three objects per request on the loop (the task, the timer, the delay) and leave each
 * cancelled one in the loop's timer queue until its time; with the requests' usual equal timeouts,
 * this schedules one timer per timeout period. Used on the connection's loop only.
 */
final class RequestDeadlines {

    private final RpmaEventLoop loop;

    private final Consumer<PendingRequest> expired;

    private final Runnable sweep = this::sweep;

    private @Nullable PendingRequest[] heap = new PendingRequest[16];

    private int size;

    private RpmaEventLoop.@Nullable Timer timer;

    private long timerDeadline;

    /** @param expired called on the loop for each request whose deadline passed, after it was removed */
    RequestDeadlines(RpmaEventLoop loop, Consumer<PendingRequest> expired) {
        this.loop = loop;
        this.expired = expired;
    }

    /** Whether {@code request}'s deadline is watched here. */
    boolean holds(PendingRequest request) {
        int i = request.deadlineIndex;
        return i >= 0 && i < this.size && this.heap[i] == request;
    }

    void add(PendingRequest request) {
        if (this.size == this.heap.length) {
            this.heap = Arrays.copyOf(this.heap, this.size * 2);
        }
        this.heap[this.size] = request;
        request.deadlineIndex = this.size;
        up(this.size++);
        if (this.timer == null || request.deadlineNanos - this.timerDeadline < 0) {
            schedule(request.deadlineNanos);
        }
    }

    /** Stops watching {@code request}; nothing when it is not watched here. */
    void remove(PendingRequest request) {
        if (!holds(request)) {
            return;
        }
        int i = request.deadlineIndex;
        request.deadlineIndex = -1;
        int last = --this.size;
        PendingRequest moved = this.heap[last];
        this.heap[last] = null;
        if (i != last && moved != null) {
            this.heap[i] = moved;
            moved.deadlineIndex = i;
            down(i);
            up(moved.deadlineIndex);
        }
    }

    int size() {
        return this.size;
    }

    private void sweep() {
        this.timer = null;
        long now = System.nanoTime();
        PendingRequest first;
        while (this.size > 0 && (first = this.heap[0]) != null && first.deadlineNanos - now <= 0) {
            remove(first);
            this.expired.accept(first);
        }
        if (this.size > 0 && this.timer == null && (first = this.heap[0]) != null) {
            schedule(first.deadlineNanos);
        }
    }

    private void schedule(long deadline) {
        if (this.timer != null) {
            this.timer.cancel();
        }
        this.timerDeadline = deadline;
        this.timer = this.loop.schedule(this.sweep, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }

    private void up(int index) {
        int i = index;
        PendingRequest request = this.heap[i];
        while (i > 0 && request != null) {
            int parent = (i - 1) / 2;
            PendingRequest above = this.heap[parent];
            if (above == null || above.deadlineNanos - request.deadlineNanos <= 0) {
                break;
            }
            place(above, i);
            i = parent;
        }
        if (request != null) {
            place(request, i);
        }
    }

    private void down(int index) {
        int i = index;
        PendingRequest request = this.heap[i];
        while (request != null) {
            int child = 2 * i + 1;
            if (child >= this.size) {
                break;
            }
            PendingRequest smaller = this.heap[child];
            PendingRequest right = (child + 1 < this.size) ? this.heap[child + 1] : null;
            if (smaller == null) {
                break;
            }
            if (right != null && right.deadlineNanos - smaller.deadlineNanos < 0) {
                child++;
                smaller = right;
            }
            if (request.deadlineNanos - smaller.deadlineNanos <= 0) {
                break;
            }
            place(smaller, i);
            i = child;
        }
        if (request != null) {
            place(request, i);
        }
    }

    private void place(PendingRequest request, int index) {
        this.heap[index] = request;
        request.deadlineIndex = index;
    }
}

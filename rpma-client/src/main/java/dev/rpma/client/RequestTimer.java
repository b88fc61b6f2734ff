package dev.rpma.client;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

import dev.rpma.server.loop.RpmaEventLoop;

/**
 * The timeouts of the requests one connection holds, kept without a structure of their own: one loop
 * timer, set for the earliest deadline it was told of ({@link #watch}); when it fires, the connection
 * goes through the requests it holds (waiting, sent, parked: {@link #due} for each), times out those
 * whose deadline passed, and the timer is set again for the earliest of the others. A request costs
 * one comparison when its connection takes it and nothing when it completes, where a structure of
 * deadlines would add it and remove it again on the loop of every request. A sweep goes through all
 * the connection holds: once per timeout period while requests complete, and, while they time out one
 * after another (a server that stopped answering), at most once per 1/{@value #SWEEPS_PER_TIMEOUT} of
 * the shortest timeout held and per {@link #MIN_INTERVAL}, so that the work of a stalled connection
 * stays bounded; a timeout ends up to that much late. Used on the connection's loop only.
 */
final class RequestTimer {

    /** The least time between two sweeps. */
    static final Duration MIN_INTERVAL = Duration.ofMillis(1);

    /** Sweeps per timeout period at most: the next comes no sooner than the shortest timeout held over this. */
    static final int SWEEPS_PER_TIMEOUT = 32;

    private static final long MIN_INTERVAL_NANOS = MIN_INTERVAL.toNanos();

    private final RpmaEventLoop loop;

    private final Consumer<RequestTimer> sweep;

    private final Runnable fire = this::fire;

    private RpmaEventLoop.@Nullable Timer timer;

    /** When {@link #timer} fires. */
    private long timerDeadline;

    /**
     * During a sweep: its reading of the clock, the earliest deadline not passed ({@link #pending}) and
     * the shortest timeout of the requests with one.
     */
    private long now;

    private boolean pending;

    private long earliest;

    private long shortest;

    /**
     * @param sweep called on the loop when the timer fires: calls {@link #due} with the deadline of every
     *     request its connection holds, and times out those for which it answers {@code true}
     */
    RequestTimer(RpmaEventLoop loop, Consumer<RequestTimer> sweep) {
        this.loop = loop;
        this.sweep = sweep;
    }

    /** A request with {@code deadline} ({@link System#nanoTime()}) is held: the timer fires by then. */
    void watch(long deadline) {
        if (this.timer == null || deadline - this.timerDeadline < 0) {
            schedule(deadline);
        }
    }

    /** In a sweep: whether {@code request}'s deadline passed; when not, the next sweep comes by then. */
    boolean due(PendingRequest request) {
        long deadline = request.deadlineNanos;
        if (deadline - this.now <= 0) {
            return true;
        }
        long timeout = deadline - request.startNanos;
        if (!this.pending) {
            this.earliest = deadline;
            this.shortest = timeout;
            this.pending = true;
        }
        else {
            this.earliest = (deadline - this.earliest < 0) ? deadline : this.earliest;
            this.shortest = Math.min(this.shortest, timeout);
        }
        return false;
    }

    /** In a sweep: moves from {@code requests} into {@code into} those whose deadline passed. */
    void takeDue(Collection<PendingRequest> requests, List<PendingRequest> into) {
        requests.removeIf((request) -> due(request) && into.add(request));
    }

    /** Whether the timer is set; for tests. */
    boolean isSet() {
        return this.timer != null;
    }

    private void fire() {
        this.timer = null;
        this.now = System.nanoTime();
        this.pending = false;
        try {
            this.sweep.accept(this);
        }
        finally {
            // also when a callback threw; what the callbacks made may have set the timer for a later deadline
            if (this.pending) {
                long interval = Math.max(MIN_INTERVAL_NANOS, this.shortest / SWEEPS_PER_TIMEOUT);
                watch(Math.max(this.earliest - this.now, interval) + this.now);
            }
        }
    }

    private void schedule(long deadline) {
        if (this.timer != null) {
            this.timer.cancel();
        }
        this.timerDeadline = deadline;
        long delay = Math.max(0, deadline - System.nanoTime());
        this.timer = this.loop.schedule(this.fire, Duration.ofNanos(delay));
    }
}

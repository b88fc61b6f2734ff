package dev.rpma.server.loop;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The event loops of a server's data path: a fixed number, each owning the connections assigned to
 * it. {@link #next()} assigns a new connection to the loop that owns the fewest; a connection stays
 * on its loop for its whole life, so its events, completions and messages are handled in order on
 * one thread.
 */
public final class RpmaEventLoopGroup {

    private final List<RpmaEventLoop> loops;

    /** Connections each loop owns, by index: counted by {@link #next()} and {@link #released(int)}. */
    private final AtomicIntegerArray owned;

    private final AtomicInteger rotation = new AtomicInteger();

    /**
     * @param count how many loops
     * @param namePrefix the threads are named {@code namePrefix + index}
     * @param busyPoll how long each loop busy-polls after work
     */
    public RpmaEventLoopGroup(int count, String namePrefix, Duration busyPoll) {
        if (count < 1) {
            throw new IllegalArgumentException("An event loop group needs at least one loop, got " + count);
        }
        RpmaEventLoop[] created = new RpmaEventLoop[count];
        for (int i = 0; i < count; i++) {
            created[i] = new RpmaEventLoop(namePrefix + i, busyPoll);
        }
        this.loops = List.of(created);
        this.owned = new AtomicIntegerArray(count);
    }

    /**
     * One loop per two CPUs, at least one: a loop that busy-polls keeps a CPU busy while work comes,
     * and the providers' own threads and the application need the others.
     */
    public static int defaultSize() {
        return Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    }

    public void start() {
        this.loops.forEach(RpmaEventLoop::start);
    }

    public List<RpmaEventLoop> loops() {
        return this.loops;
    }

    /**
     * The index of the loop a new connection goes to (the one owning the fewest, the next in turn
     * among equals), counted as owned until {@link #released(int)}.
     */
    public int next() {
        return own(leastOwned());
    }

    /**
     * The index of the loop owning the fewest connections (the next in turn among equals), not
     * counted: for a connection that must know its loop before it exists, counted by {@link #own(int)}
     * once it does.
     */
    public int leastOwned() {
        int size = this.loops.size();
        int start = Math.floorMod(this.rotation.getAndIncrement(), size);
        int best = start;
        for (int i = 1; i < size; i++) {
            int candidate = (start + i) % size;
            if (this.owned.get(candidate) < this.owned.get(best)) {
                best = candidate;
            }
        }
        return best;
    }

    /** Counts a new connection of loop {@code index} as owned until {@link #released(int)}; returns {@code index}. */
    public int own(int index) {
        this.owned.incrementAndGet(index);
        return index;
    }

    public RpmaEventLoop loop(int index) {
        return this.loops.get(index);
    }

    /** A connection of loop {@code index} was released. */
    public void released(int index) {
        this.owned.decrementAndGet(index);
    }

    /** Connections loop {@code index} owns. */
    public int owned(int index) {
        return this.owned.get(index);
    }

    public void shutdown() {
        this.loops.forEach(RpmaEventLoop::shutdown);
    }

    /** Waits for every loop to end; {@code false} if one did not within {@code timeout}. */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (RpmaEventLoop loop : this.loops) {
            if (!loop.awaitTermination(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
                return false;
            }
        }
        return true;
    }
}

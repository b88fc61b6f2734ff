package dev.rpma.spring.server;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.AbstractQueue;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import dev.rpma.jna.RpmaThread;

/**
 * The bounded queue between an endpoint's acceptor and its handler threads: a ring that the acceptor
 * fills and the handler threads empty without a lock, in which an idle handler thread looks for the
 * next request a number of times, yielding its CPU between looks, before it parks.
 *
 * <p>Why no lock: the acceptor's CPU bounds the endpoint's request rate. Behind one lock (as in
 * {@link java.util.concurrent.ArrayBlockingQueue}) every offer took a lock that the handler threads'
 * takes and looks had just taken, and looking threads queued on it, so that the acceptor's unlock
 * had to wake them (docs/benchmarks.md, session 9). Here the acceptor writes a slot and its sequence
 * number; a handler thread claims the slot with a compare-and-set on a head that only handler threads
 * write. A lock guards only the list of parked threads.
 *
 * <p>Why a list of parked threads: an offer wakes the thread that parked first and takes it off the
 * list, so that the offers that follow before it runs do not wake it again; a condition shared by
 * the parked threads was signalled on every offer until the woken thread ran (in the dispatch
 * benchmark, a signal for one request in five).
 *
 * <p>Why look: a parked handler thread costs the acceptor a wake-up (a {@code futex} system call) for
 * the next request, and where the kernel puts the woken thread is its business: in the dispatch
 * benchmark the handler threads waited for a CPU seven times as long as they ran, queued on the
 * acceptor's own CPU, behind the acceptor, while the other CPU had no thread of the JVM to run, so
 * that the queue filled and requests were turned away (docs/benchmarks.md, session 8). A handler
 * thread that is still looking when the next request comes needs no wake-up and keeps its CPU.
 *
 * <p>How much: each {@link HandlerThread} keeps its own budget of looks. Looks that found a request,
 * or a request already waiting, restore the full budget; looks that found nothing, so that the thread
 * parked, halve it. Under a stream of requests the threads look and rarely park; where requests come
 * seldom the looks die down after a few requests and an idle server spends nothing on them. Every idle
 * thread looks, not one at a time: a single looker is busy with each request it finds, and the offers
 * that come meanwhile would have to wake the parked threads, which is what the looks save.
 *
 * <p>One thread offers at a time (the endpoint's acceptor, the only caller of its pool's
 * {@code execute}); any thread takes. The acceptor never waits for room: a full queue refuses the
 * offer, so {@link #put} and the timed {@link #offer(Runnable, long, TimeUnit)} are not supported, nor
 * is removing a waiting request other than by taking it (its pool's {@code remove} and {@code purge}).
 */
final class RpmaHandlerQueue extends AbstractQueue<Runnable> implements BlockingQueue<Runnable> {

    private static final VarHandle SEQUENCES = MethodHandles.arrayElementVarHandle(long[].class);

    private static final VarHandle TASKS = MethodHandles.arrayElementVarHandle(Runnable[].class);

    private static final VarHandle POSITION;

    static {
        try {
            POSITION = MethodHandles.lookup().findVarHandle(Cursor.class, "position", long.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final int capacity;

    private final int mask;

    /**
     * Per slot: {@code p + 1} once the acceptor put the request of position {@code p} in it, {@code p}
     * while it is free for position {@code p}.
     */
    private final long[] sequences;

    private final Runnable[] tasks;

    private final int maxLooks;

    /** The next position to take: moved by the handler threads only. */
    private final Cursor head = new Cursor();

    /** The next position to fill: moved by the offering thread only. */
    private final Cursor tail = new Cursor();

    /** Guards {@link #waiting}. */
    private final ReentrantLock lock = new ReentrantLock();

    /**
     * Parked threads not yet woken, the longest parked last: an offer wakes that one. Waking the last
     * parked one instead kept waking the same thread, which the kernel kept putting behind the
     * acceptor on its CPU (dispatch latency one at a time: median 18-26 µs in 6 of 15 runs, not 1-5 µs).
     */
    private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();

    /** The size of {@link #waiting}: written under the lock, read by the offering thread without it. */
    private volatile int waitingCount;

    RpmaHandlerQueue(int capacity, int maxLooks) {
        if (capacity <= 0 || capacity > (1 << 29)) {
            throw new IllegalArgumentException("capacity must be 1 to 2^29, not " + capacity);
        }
        // twice the capacity, rounded up to a power of two: a slot is free again long before the offers
        // come back to it, even when the thread that took its last request lost its CPU meanwhile
        int slots = Integer.highestOneBit(2 * capacity - 1) << 1;
        this.capacity = capacity;
        this.mask = slots - 1;
        this.sequences = new long[slots];
        this.tasks = new Runnable[slots];
        for (int i = 0; i < slots; i++) {
            this.sequences[i] = i;
        }
        this.maxLooks = maxLooks;
    }

    /** By the offering thread only; {@code false} when the queue is full. */
    @Override
    public boolean offer(Runnable task) {
        Objects.requireNonNull(task, "task");
        Cursor tail = this.tail;
        long position = tail.position;
        if (position - tail.otherSeen >= this.capacity) {
            tail.otherSeen = this.head.position;
            if (position - tail.otherSeen >= this.capacity) {
                return false;
            }
        }
        int slot = (int) position & this.mask;
        if ((long) SEQUENCES.getAcquire(this.sequences, slot) != position) {
            // its last request was taken, but the taking thread has not freed the slot yet: refused
            // as full, so that the acceptor never waits for a handler thread
            return false;
        }
        TASKS.set(this.tasks, slot, task);
        // volatile: with the read of waitingCount below, either a thread about to park sees the
        // request or this sees that thread
        SEQUENCES.setVolatile(this.sequences, slot, position + 1);
        // release: other threads read it only to count the waiting requests
        POSITION.setRelease(tail, position + 1);
        if (this.waitingCount != 0) {
            wakeOne();
        }
        return true;
    }

    /**
     * Wakes the thread that parked first, and takes it off the list: a thread woken but not yet
     * running is not woken again by the next offers, so a stream of requests costs one wake-up per
     * parked thread, not one per request.
     */
    private void wakeOne() {
        Waiter waiter;
        this.lock.lock();
        try {
            waiter = this.waiting.pollLast();
            this.waitingCount = this.waiting.size();
        }
        finally {
            this.lock.unlock();
        }
        if (waiter != null) {
            waiter.woken = true;
            LockSupport.unpark(waiter.thread);
        }
    }

    @Override
    public Runnable poll() {
        while (true) {
            long position = this.head.position;
            int slot = (int) position & this.mask;
            // volatile, not acquire: a thread about to park wrote waitingCount before it looks here
            long sequence = (long) SEQUENCES.getVolatile(this.sequences, slot);
            if (sequence == position + 1) {
                if (POSITION.compareAndSet(this.head, position, position + 1)) {
                    Runnable task = (Runnable) TASKS.get(this.tasks, slot);
                    TASKS.set(this.tasks, slot, null);
                    SEQUENCES.setRelease(this.sequences, slot, position + this.tasks.length);
                    return task;
                }
            }
            else if (sequence - position <= 0) {
                // not filled for this position yet (the slot may still be freed from the last lap): empty
                return null;
            }
            // else other threads took this position and more meanwhile: look again
        }
    }

    /** Called by the pool's {@link HandlerThread}s only: looks within the thread's budget, then waits. */
    @Override
    public Runnable take() throws InterruptedException {
        HandlerThread thread = (HandlerThread) Thread.currentThread();
        Runnable task = poll();
        int looks = thread.looks;
        // an interrupt (the pool shutting down) ends the looks: the wait then throws at once
        for (int i = 0; task == null && i < looks && !thread.isInterrupted(); i++) {
            Thread.yield();
            task = poll();
        }
        if (task != null) {
            thread.looks = this.maxLooks;
            return task;
        }
        task = await(-1);
        thread.looks = looks >> 1;
        return task;
    }

    @Override
    public Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
        Runnable task = poll();
        return (task != null) ? task : await(Math.max(0, unit.toNanos(timeout)));
    }

    /** Parks until a request comes, or for up to {@code nanos} unless negative; {@code null} on timeout. */
    private Runnable await(long nanos) throws InterruptedException {
        long deadline = (nanos < 0) ? 0 : System.nanoTime() + nanos;
        Waiter waiter = new Waiter(Thread.currentThread());
        while (true) {
            enlist(waiter);
            // after joining the list: a request offered from now on either is found here or wakes a thread
            Runnable task = poll();
            if (task != null) {
                delist(waiter);
                return task;
            }
            while (!waiter.woken) {
                if (Thread.interrupted()) {
                    delist(waiter);
                    throw new InterruptedException();
                }
                if (nanos < 0) {
                    LockSupport.park(this);
                    continue;
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    delist(waiter);
                    return null;
                }
                LockSupport.parkNanos(this, remaining);
            }
            // woken for a request that a looking thread may have taken meanwhile: look again
            waiter.woken = false;
        }
    }

    /** Puts the thread on the list of parked threads. */
    private void enlist(Waiter waiter) {
        this.lock.lock();
        try {
            this.waiting.addFirst(waiter);
            this.waitingCount = this.waiting.size();
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Takes a thread that leaves without waiting for its wake-up off the list; if it was woken already,
     * the wake-up passes to another thread, for the request it was meant for.
     */
    private void delist(Waiter waiter) {
        boolean wasWaiting;
        this.lock.lock();
        try {
            wasWaiting = this.waiting.remove(waiter);
            this.waitingCount = this.waiting.size();
        }
        finally {
            this.lock.unlock();
        }
        if (!wasWaiting && !isEmpty() && this.waitingCount != 0) {
            wakeOne();
        }
    }

    /** Not used by the pool: the oldest waiting request, from a snapshot. */
    @Override
    public Runnable peek() {
        Iterator<Runnable> waiting = iterator();
        return waiting.hasNext() ? waiting.next() : null;
    }

    @Override
    public int size() {
        long head = this.head.position;
        return (int) Math.max(0, Math.min(this.capacity, this.tail.position - head));
    }

    /** Parked threads that no offer woke yet. */
    int waitingThreads() {
        return this.waitingCount;
    }

    @Override
    public int remainingCapacity() {
        return this.capacity - size();
    }

    @Override
    public int drainTo(Collection<? super Runnable> collection) {
        return drainTo(collection, Integer.MAX_VALUE);
    }

    @Override
    public int drainTo(Collection<? super Runnable> collection, int maxElements) {
        Objects.requireNonNull(collection, "collection");
        if (collection == this) {
            throw new IllegalArgumentException("cannot drain a queue into itself");
        }
        int drained = 0;
        Runnable task;
        while (drained < maxElements && (task = poll()) != null) {
            collection.add(task);
            drained++;
        }
        return drained;
    }

    /** A snapshot of the requests waiting, oldest first; it does not remove them. */
    @Override
    public Iterator<Runnable> iterator() {
        List<Runnable> waiting = new ArrayList<>();
        long end = this.tail.position;
        for (long position = this.head.position; position < end; position++) {
            int slot = (int) position & this.mask;
            Runnable task = (Runnable) TASKS.getAcquire(this.tasks, slot);
            if (task != null && (long) SEQUENCES.getAcquire(this.sequences, slot) == position + 1) {
                waiting.add(task);
            }
        }
        return java.util.Collections.unmodifiableList(waiting).iterator();
    }

    @Override
    public void put(Runnable task) {
        throw new UnsupportedOperationException("the acceptor never waits for room; offer(task) refuses when full");
    }

    @Override
    public boolean offer(Runnable task, long timeout, TimeUnit unit) {
        throw new UnsupportedOperationException("the acceptor never waits for room; offer(task) refuses when full");
    }

    /**
     * A position on a cache line of its own (the padding around it): the acceptor moves the tail for
     * every request, the handler threads the head, and the handler threads look at the queue all the
     * time; sharing a line with either, or with the fields every look reads, would move that line
     * between the CPUs on every request.
     */
    @SuppressWarnings("unused")
    private static final class Cursor {

        long p00, p01, p02, p03, p04, p05, p06, p07;

        volatile long position;

        /** The tail's only: the head as the offering thread last read it, so it reads the head only when full. */
        long otherSeen;

        long p10, p11, p12, p13, p14, p15, p16, p17;
    }

    /** A parked thread. */
    private static final class Waiter {

        final Thread thread;

        volatile boolean woken;

        Waiter(Thread thread) {
            this.thread = thread;
        }
    }

    /** A handler thread: carries its budget of looks, read and written only by itself. */
    static final class HandlerThread extends RpmaThread {

        int looks;

        HandlerThread(Runnable task, String name, int looks) {
            super(task, name);
            this.looks = looks;
        }
    }
}

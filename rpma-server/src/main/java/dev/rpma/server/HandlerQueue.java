package dev.rpma.server;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * The bounded queue of a {@link HandlerPool}: a ring that event loops fill and the pool's threads
 * empty without a lock, in which an idle pool thread looks for the next task a number of times,
 * yielding its CPU between looks, before it parks.
 *
 * <p>Why no lock: the thread that offers is an event loop, whose CPU bounds what the server does.
 * Behind one lock (as in {@link java.util.concurrent.ArrayBlockingQueue}) every offer took a lock
 * that the pool threads' takes and looks had just taken, and looking threads queued on it, so that
 * the loop's unlock had to wake them. Here an offer claims a position with a compare-and-set on the
 * tail and publishes the slot's sequence number; a pool thread claims a filled slot with a
 * compare-and-set on the head. A lock guards only the list of parked threads.
 *
 * <p>Why a list of parked threads: an offer wakes the thread that parked first and takes it off the
 * list, so that the offers that follow before it runs do not wake it again; a condition shared by
 * the parked threads would be signalled on every offer until the woken thread ran.
 *
 * <p>Why look: a parked pool thread costs the offering loop a wake-up (a {@code futex} system call),
 * and a woken thread goes where the kernel puts it, often behind the loop on its own CPU. A thread
 * that is still looking when the next task comes needs no wake-up and keeps its CPU. Each
 * {@link HandlerPool.HandlerThread} keeps its own budget of looks: looks that found a task restore the full
 * budget, looks that found nothing (so that the thread parked) halve it, so an idle server spends
 * nothing on them.
 *
 * <p>An offer never waits for room: a full queue refuses it.
 */
final class HandlerQueue {

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

    /** Per slot: {@code p + 1} once the task of position {@code p} is in it, {@code p} while it is free for position {@code p}. */
    private final long[] sequences;

    private final @Nullable Runnable[] tasks;

    private final int maxLooks;

    /** The next position to take. */
    private final Cursor head = new Cursor();

    /** The next position to fill. */
    private final Cursor tail = new Cursor();

    /** Guards {@link #waiting}. */
    private final ReentrantLock lock = new ReentrantLock();

    /** Parked threads not yet woken, the longest parked last: an offer wakes that one. */
    private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();

    /** The size of {@link #waiting}: written under the lock, read by offers without it. */
    private volatile int waitingCount;

    HandlerQueue(int capacity, int maxLooks) {
        if (capacity <= 0 || capacity > (1 << 29)) {
            throw new IllegalArgumentException("capacity must be 1 to 2^29, not " + capacity);
        }
        // twice the capacity, rounded up to a power of two: a slot is free again long before the offers
        // come back to it, even when the thread that took its last task lost its CPU meanwhile
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

    int capacity() {
        return this.capacity;
    }

    /** Any thread; {@code false} when the queue is full. */
    boolean offer(Runnable task) {
        Cursor tail = this.tail;
        while (true) {
            long position = (long) POSITION.getVolatile(tail);
            if (position - tail.otherSeen >= this.capacity) {
                // racy on purpose: a stale value is smaller than the head, and only costs this read
                tail.otherSeen = this.head.position;
                if (position - tail.otherSeen >= this.capacity) {
                    return false;
                }
            }
            int slot = (int) position & this.mask;
            long sequence = (long) SEQUENCES.getAcquire(this.sequences, slot);
            if (sequence == position) {
                if (POSITION.compareAndSet(tail, position, position + 1)) {
                    TASKS.set(this.tasks, slot, task);
                    // volatile: with the read of waitingCount below, either a thread about to park sees the
                    // task or this sees that thread
                    SEQUENCES.setVolatile(this.sequences, slot, position + 1);
                    if (this.waitingCount != 0) {
                        wakeOne();
                    }
                    return true;
                }
            }
            else if (sequence - position < 0) {
                // its last task was taken, but the taking thread has not freed the slot yet: full, so
                // that an offering loop never waits for a pool thread
                return false;
            }
            // else another thread claimed this position meanwhile: look again
        }
    }

    /** Wakes the thread that parked first and takes it off the list, so the next offers do not wake it again. */
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

    /** The oldest task, or {@code null} when there is none. Any thread. */
    @Nullable Runnable poll() {
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
                return null;
            }
        }
    }

    /** Called by the pool's {@link HandlerPool.HandlerThread}s only: looks within the thread's budget, then waits. */
    Runnable take() throws InterruptedException {
        HandlerPool.HandlerThread thread = (HandlerPool.HandlerThread) Thread.currentThread();
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

    /** Like {@link #take()} but for up to {@code timeout}; {@code null} on timeout. */
    @Nullable Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
        Runnable task = poll();
        return (task != null) ? task : await(Math.max(0, unit.toNanos(timeout)));
    }

    @SuppressWarnings("NullAway") // await(-1) never returns null
    private @Nullable Runnable await(long nanos) throws InterruptedException {
        long deadline = (nanos < 0) ? 0 : System.nanoTime() + nanos;
        Waiter waiter = new Waiter(Thread.currentThread());
        while (true) {
            enlist(waiter);
            // after joining the list: a task offered from now on either is found here or wakes a thread
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
            // woken for a task that a looking thread may have taken meanwhile: look again
            waiter.woken = false;
        }
    }

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
     * the wake-up passes to another thread, for the task it was meant for.
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
        if (!wasWaiting && size() > 0 && this.waitingCount != 0) {
            wakeOne();
        }
    }

    int size() {
        long head = this.head.position;
        return (int) Math.max(0, Math.min(this.capacity, this.tail.position - head));
    }

    /** Parked threads that no offer woke yet. */
    int waitingThreads() {
        return this.waitingCount;
    }

    /**
     * A position on a cache line of its own (the padding around it): offers move the tail, the pool
     * threads the head, and the pool threads look at the queue all the time; sharing a line with
     * either would move that line between the CPUs on every task.
     */
    @SuppressWarnings("unused")
    private static final class Cursor {

        long p00, p01, p02, p03, p04, p05, p06, p07;

        volatile long position;

        /** The tail's only: the head as an offering thread last read it, so it reads the head only when full. */
        long otherSeen;

        long p10, p11, p12, p13, p14, p15, p16, p17;
    }

    private static final class Waiter {

        final Thread thread;

        volatile boolean woken;

        Waiter(Thread thread) {
            this.thread = thread;
        }
    }
}

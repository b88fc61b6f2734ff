package dev.rpma.spring.server;

import java.util.AbstractQueue;
import java.util.Collection;
import java.util.Iterator;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The bounded queue between an endpoint's acceptor and its handler threads, in which one idle handler
 * thread at a time spins for a bounded while before it parks.
 *
 * <p>Why: with a plain {@link ArrayBlockingQueue}, every request that finds its handler threads idle
 * pays for an unpark on the acceptor (a {@code futex} wake) and a context switch before the handler
 * runs, a few microseconds on an idle machine and up to a scheduler slice on a busy one. A request
 * that arrives while a handler thread spins is taken without either. At most one thread spins, so an
 * endpoint burns at most one CPU, for at most {@code spinNanos} after its last request; the others park
 * at once, and so does the spinner afterwards: an idle endpoint uses no CPU.
 *
 * <p>A request that arrives while one thread spins wakes no parked thread (that wake-up is what the spin
 * saves); a thread that takes a request and leaves more behind wakes a parked one, so a backlog never
 * waits for a busy spinner's handler to return.
 */
final class RpmaHandlerQueue extends AbstractQueue<Runnable> implements BlockingQueue<Runnable> {

    /** How long a producer that finds the queue full waits between tries ({@link #put}, timed {@link #offer}). */
    private static final long FULL_RETRY_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    private final ArrayBlockingQueue<Runnable> items;

    private final long spinNanos;

    /**
     * Inserts so far: the spinner watches it instead of polling the queue, whose lock it would
     * otherwise take in a loop against the acceptor's inserts.
     */
    private final AtomicInteger offers = new AtomicInteger();

    /** Held by the one thread that spins. */
    private final AtomicBoolean spinner = new AtomicBoolean();

    /** Threads that registered to park (they look at the queue again before they do). */
    private final AtomicInteger parked = new AtomicInteger();

    private final ReentrantLock lock = new ReentrantLock();

    private final Condition notEmpty = this.lock.newCondition();

    RpmaHandlerQueue(int capacity, long spinNanos) {
        this.items = new ArrayBlockingQueue<>(capacity);
        this.spinNanos = spinNanos;
    }

    @Override
    public boolean offer(Runnable task) {
        if (!this.items.offer(task)) {
            return false;
        }
        this.offers.incrementAndGet();
        // read after the insert: a spinner seen here looks at the queue again before it parks
        if (!this.spinner.get() && this.parked.get() > 0) {
            signal();
        }
        return true;
    }

    @Override
    public Runnable take() throws InterruptedException {
        Runnable task = this.items.poll();
        if (task == null && this.spinNanos > 0 && this.spinner.compareAndSet(false, true)) {
            try {
                task = spin();
            }
            finally {
                this.spinner.set(false);
            }
        }
        if (task == null) {
            task = park(Long.MAX_VALUE);
        }
        if (task != null) {
            passOn();
        }
        return task;
    }

    @Override
    public Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
        Runnable task = this.items.poll();
        if (task == null) {
            task = park(unit.toNanos(timeout));
        }
        if (task != null) {
            passOn();
        }
        return task;
    }

    private Runnable spin() {
        long until = System.nanoTime() + this.spinNanos;
        Thread current = Thread.currentThread();
        int seen = this.offers.get();
        // an insert before the read above is found here, any later one changes the count
        Runnable task = this.items.poll();
        while (task == null && System.nanoTime() - until < 0 && !current.isInterrupted()) {
            Thread.onSpinWait();
            int now = this.offers.get();
            if (now != seen) {
                seen = now;
                task = this.items.poll();
            }
        }
        return task;
    }

    /** Waits on the condition; registered first, so an insert that comes after the look below signals. */
    private Runnable park(long nanos) throws InterruptedException {
        this.lock.lockInterruptibly();
        this.parked.incrementAndGet();
        try {
            Runnable task;
            while ((task = this.items.poll()) == null) {
                if (nanos <= 0) {
                    return null;
                }
                nanos = this.notEmpty.awaitNanos(nanos);
            }
            return task;
        }
        finally {
            this.parked.decrementAndGet();
            this.lock.unlock();
        }
    }

    /** A taker that leaves requests behind wakes a parked thread for them, in case no spinner takes them. */
    private void passOn() {
        if (!this.items.isEmpty() && this.parked.get() > 0) {
            signal();
        }
    }

    private void signal() {
        this.lock.lock();
        try {
            this.notEmpty.signal();
        }
        finally {
            this.lock.unlock();
        }
    }

    @Override
    public void put(Runnable task) throws InterruptedException {
        while (!offer(task)) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            LockSupport.parkNanos(this, FULL_RETRY_NANOS);
        }
    }

    @Override
    public boolean offer(Runnable task, long timeout, TimeUnit unit) throws InterruptedException {
        long until = System.nanoTime() + unit.toNanos(timeout);
        while (!offer(task)) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            long left = until - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            LockSupport.parkNanos(this, Math.min(left, FULL_RETRY_NANOS));
        }
        return true;
    }

    @Override
    public Runnable poll() {
        Runnable task = this.items.poll();
        if (task != null) {
            passOn();
        }
        return task;
    }

    @Override
    public Runnable peek() {
        return this.items.peek();
    }

    @Override
    public int size() {
        return this.items.size();
    }

    @Override
    public int remainingCapacity() {
        return this.items.remainingCapacity();
    }

    @Override
    public boolean remove(Object task) {
        return this.items.remove(task);
    }

    @Override
    public boolean contains(Object task) {
        return this.items.contains(task);
    }

    @Override
    public int drainTo(Collection<? super Runnable> target) {
        return this.items.drainTo(target);
    }

    @Override
    public int drainTo(Collection<? super Runnable> target, int maxElements) {
        return this.items.drainTo(target, maxElements);
    }

    @Override
    public Iterator<Runnable> iterator() {
        return this.items.iterator();
    }

    @Override
    public Object[] toArray() {
        return this.items.toArray();
    }

    @Override
    public <T> T[] toArray(T[] array) {
        return this.items.toArray(array);
    }

    /** Whether a thread spins now; for tests. */
    boolean isSpinning() {
        return this.spinner.get();
    }
}

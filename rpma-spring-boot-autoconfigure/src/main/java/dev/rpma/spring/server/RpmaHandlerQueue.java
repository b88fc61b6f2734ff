package dev.rpma.spring.server;

import java.util.concurrent.ArrayBlockingQueue;

import dev.rpma.jna.RpmaThread;

/**
 * The bounded queue between an endpoint's acceptor and its handler threads, in which an idle handler
 * thread looks for the next request a number of times, yielding its CPU between looks, before it
 * parks.
 *
 * <p>Why: a parked handler thread costs the acceptor a wake-up (a {@code futex} system call) for the
 * next request, and where the kernel puts the woken thread is its business: in the dispatch
 * benchmark the handler threads waited for a CPU seven times as long as they ran, queued on the
 * acceptor's own CPU, behind the acceptor, while the other CPU had no thread of the JVM to run, so
 * that the queue filled and requests were turned away (docs/benchmarks.md, session 8). A handler thread that is still looking when the next request comes
 * needs no wake-up and keeps its CPU.
 *
 * <p>How much: each {@link HandlerThread} keeps its own budget of looks. Looks that found a request, or
 * a request already waiting, restore the full budget; looks that found nothing, so that the thread
 * parked, halve it. Under a stream of requests the threads look and rarely park; where requests come
 * seldom the looks die down after a few requests and an idle server spends nothing on them.
 *
 * <p>Every idle thread looks, not one at a time: while any thread is parked on the queue, each offer
 * wakes one (the queue signals a waiter per request), and a single looker leaves the others parked.
 * Waking them only while nobody looks would not help either: the looker stops looking for every
 * request it runs, and the acceptor's next offer often falls in that gap.
 */
final class RpmaHandlerQueue extends ArrayBlockingQueue<Runnable> {

    private static final long serialVersionUID = 1L;

    private final int maxLooks;

    RpmaHandlerQueue(int capacity, int maxLooks) {
        super(capacity);
        this.maxLooks = maxLooks;
    }

    /** Called by the pool's {@link HandlerThread}s only: looks within the thread's budget, then waits. */
    @Override
    public Runnable take() throws InterruptedException {
        HandlerThread thread = (HandlerThread) Thread.currentThread();
        Runnable task = poll();
        int looks = thread.looks;
        // an interrupt (the pool shutting down) ends the looks: the blocking take then throws at once
        for (int i = 0; task == null && i < looks && !thread.isInterrupted(); i++) {
            Thread.yield();
            task = poll();
        }
        if (task != null) {
            thread.looks = this.maxLooks;
            return task;
        }
        task = super.take();
        thread.looks = looks >> 1;
        return task;
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

package dev.rpma.server;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.RpmaThread;

/**
 * A fixed number of threads that run the tasks event loops hand them through a bounded
 * {@link HandlerQueue}: connection handlers (an endpoint's acceptor hands each request over) or,
 * for endpoints that dispatch messages to a pool, message handlers. {@link #offer} never waits: a full
 * queue refuses, and the caller decides what that means (a request is rejected as queue-full).
 *
 * <p>The threads are daemons (the server keeps the JVM alive with a thread of its own), run under
 * Linux's {@code SCHED_BATCH} policy unless told otherwise (a pool thread woken for a task then does
 * not preempt the event loop that offered it on its CPU), and are started with the pool, so the first
 * tasks do not wait for thread creation.
 */
final class HandlerPool {

    private static final Logger logger = LoggerFactory.getLogger(HandlerPool.class);

    private final String name;

    private final HandlerQueue queue;

    private final List<HandlerThread> threads = new ArrayList<>();

    private volatile boolean shutdown;

    /**
     * @param name the threads are named {@code name-1}, {@code name-2}, ...
     * @param threads how many
     * @param capacity tasks that may wait
     * @param spinLooks looks of an idle thread before it parks
     * @param batchScheduling whether the threads put themselves under {@code SCHED_BATCH}
     * @param batchCurrentThread does that for the calling thread: 0, or the errno of the failure
     */
    HandlerPool(String name, int threads, int capacity, int spinLooks, boolean batchScheduling,
            IntSupplier batchCurrentThread) {
        this.name = name;
        this.queue = new HandlerQueue(capacity, spinLooks);
        AtomicBoolean warned = new AtomicBoolean();
        for (int i = 1; i <= threads; i++) {
            Runnable body = () -> {
                if (batchScheduling) {
                    int errno = batchCurrentThread.getAsInt();
                    if (errno != 0 && warned.compareAndSet(false, true)) {
                        logger.warn("The threads of '{}' keep the default scheduling policy: sched_setscheduler"
                                + "(SCHED_BATCH) failed with errno {}; set handler-batch-scheduling to false not to try",
                                name, errno);
                    }
                }
                work();
            };
            HandlerThread thread = new HandlerThread(body, name + "-" + i, spinLooks);
            thread.setDaemon(true);
            this.threads.add(thread);
        }
    }

    void start() {
        this.threads.forEach(Thread::start);
    }

    /** Hands {@code task} to a pool thread; {@code false} when the queue is full or the pool shut down. */
    boolean offer(Runnable task) {
        return !this.shutdown && this.queue.offer(task);
    }

    /** Tasks waiting for a thread. */
    int queued() {
        return this.queue.size();
    }

    int capacity() {
        return this.queue.capacity();
    }

    /** Threads parked for lack of tasks. */
    int parkedThreads() {
        return this.queue.waitingThreads();
    }

    /** The waiting tasks, taken out of the queue (they will not run). */
    List<Runnable> drain() {
        List<Runnable> drained = new ArrayList<>();
        Runnable task;
        while ((task = this.queue.poll()) != null) {
            drained.add(task);
        }
        return drained;
    }

    /**
     * Refuses tasks from now on and interrupts the threads, which end once their current task
     * returns; waiting tasks are dropped (take them with {@link #drain()} first).
     */
    void shutdown() {
        this.shutdown = true;
        this.threads.forEach(Thread::interrupt);
    }

    /** Waits up to {@code timeout} for every thread to end; {@code false} if one still runs. */
    boolean awaitTermination(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (HandlerThread thread : this.threads) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                thread.join(Math.max(1, left / 1_000_000));
            }
            if (thread.isAlive()) {
                return false;
            }
        }
        return true;
    }

    /** Names of the threads still running, for a log line about what a stop leaves behind. */
    List<String> aliveThreads() {
        return this.threads.stream().filter(Thread::isAlive).map(Thread::getName).toList();
    }

    private void work() {
        while (!this.shutdown) {
            Runnable task;
            try {
                task = this.queue.take();
            }
            catch (InterruptedException ex) {
                return;
            }
            try {
                task.run();
            }
            catch (Throwable ex) {
                // tasks settle their own failures; this is the last guard of the thread
                logger.error("A task of '{}' failed", this.name, ex);
            }
            // an interrupt meant for the task (a stop) must not end the looks of the next take
            if (!this.shutdown) {
                Thread.interrupted();
            }
        }
    }

    @Override
    public String toString() {
        return "HandlerPool[" + this.name + ", " + this.threads.size() + " threads]";
    }

    /** A pool thread: carries its budget of looks, read and written only by itself. */
    static final class HandlerThread extends RpmaThread {

        int looks;

        HandlerThread(Runnable task, String name, int looks) {
            super(task, name);
            this.looks = looks;
        }

    }
}

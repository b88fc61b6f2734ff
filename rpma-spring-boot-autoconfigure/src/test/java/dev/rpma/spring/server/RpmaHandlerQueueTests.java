package dev.rpma.spring.server;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RpmaHandlerQueue} under a {@link ThreadPoolExecutor}, as the endpoint server uses it: one idle
 * thread spins while the others park, a request that arrives meanwhile goes to the spinner, a backlog
 * is not left to a busy spinner, the spin ends (the thread parks), and shutdown interrupts a spinner.
 * No assertion depends on how long anything takes; waits are bounded only to fail instead of hanging.
 */
class RpmaHandlerQueueTests {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Longer than any test: a thread that spins now spins until it gets work or is interrupted. */
    private static final long SPIN_FOREVER = TimeUnit.HOURS.toNanos(1);

    private static final AtomicInteger pools = new AtomicInteger();

    private ThreadPoolExecutor executor;

    private String prefix;

    @AfterEach
    void shutDown() throws InterruptedException {
        if (this.executor != null) {
            this.executor.shutdownNow();
            assertThat(this.executor.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void oneIdleThreadSpinsAndTheOthersPark() {
        RpmaHandlerQueue queue = start(3, SPIN_FOREVER);
        await("one spinner and two parked threads", () -> count(Thread.State.RUNNABLE) == 1 && parkedCount() == 2);
        assertThat(queue.isSpinning()).isTrue();
    }

    @Test
    void aRequestThatArrivesWhileAThreadSpinsIsTakenByTheSpinnerWithoutWakingAParkedThread() throws Exception {
        start(3, SPIN_FOREVER);
        await("one spinner and two parked threads", () -> count(Thread.State.RUNNABLE) == 1 && parkedCount() == 2);
        Thread spinner = threads().stream().filter((thread) -> thread.getState() == Thread.State.RUNNABLE).findFirst()
            .orElseThrow();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        this.executor.execute(() -> {
            ranOn.set(Thread.currentThread());
            done.countDown();
        });
        assertThat(done.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(ranOn.get()).isSameAs(spinner);
    }

    @Test
    void aRequestQueuedBehindOneThatBlocksTheSpinnerIsHandledByAParkedThread() throws Exception {
        start(2, SPIN_FOREVER);
        await("one spinner and one parked thread", () -> count(Thread.State.RUNNABLE) == 1 && parkedCount() == 1);
        CountDownLatch secondRan = new CountDownLatch(1);
        AtomicReference<Boolean> firstSawSecond = new AtomicReference<>();
        CountDownLatch firstDone = new CountDownLatch(1);
        // the first blocks its thread until the second ran, which therefore has to run on the other one
        this.executor.execute(() -> {
            try {
                firstSawSecond.set(secondRan.await(WAIT.toSeconds(), TimeUnit.SECONDS));
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            firstDone.countDown();
        });
        this.executor.execute(secondRan::countDown);
        assertThat(firstDone.await(2 * WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(firstSawSecond.get()).isTrue();
    }

    @Test
    void aBurstIsHandledCompletely() throws Exception {
        start(4, TimeUnit.MICROSECONDS.toNanos(20));
        int requests = 10_000;
        CountDownLatch handled = new CountDownLatch(requests);
        int queued = 0;
        while (queued < requests) {
            try {
                this.executor.execute(handled::countDown);
                queued++;
            }
            catch (java.util.concurrent.RejectedExecutionException ex) {
                Thread.onSpinWait(); // the queue is full; the handlers drain it
            }
        }
        assertThat(handled.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void theSpinEndsAndEveryIdleThreadParks() throws Exception {
        RpmaHandlerQueue queue = start(3, TimeUnit.MILLISECONDS.toNanos(50));
        // fewer than the queue holds: this is not about a full queue
        CountDownLatch handled = new CountDownLatch(50);
        for (int i = 0; i < 50; i++) {
            this.executor.execute(handled::countDown);
        }
        assertThat(handled.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        await("every thread parked", () -> parkedCount() == 3);
        assertThat(queue.isSpinning()).isFalse();
    }

    @Test
    void shutdownEndsASpinningThread() throws Exception {
        start(2, SPIN_FOREVER);
        await("one spinner", () -> count(Thread.State.RUNNABLE) == 1);
        this.executor.shutdown();
        assertThat(this.executor.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void withoutASpinEveryIdleThreadParksAtOnce() {
        RpmaHandlerQueue queue = start(2, 0);
        await("every thread parked", () -> parkedCount() == 2);
        assertThat(queue.isSpinning()).isFalse();
    }

    private RpmaHandlerQueue start(int threads, long spinNanos) {
        RpmaHandlerQueue queue = new RpmaHandlerQueue(64, spinNanos);
        this.prefix = "handler-queue-test-" + pools.incrementAndGet() + "-";
        AtomicInteger count = new AtomicInteger();
        this.executor = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS, queue, (runnable) -> {
            Thread thread = new Thread(runnable, this.prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        this.executor.prestartAllCoreThreads();
        return queue;
    }

    private List<Thread> threads() {
        return Thread.getAllStackTraces().keySet().stream().filter((thread) -> thread.getName().startsWith(this.prefix))
            .toList();
    }

    private long count(Thread.State state) {
        return threads().stream().filter((thread) -> thread.getState() == state).count();
    }

    private long parkedCount() {
        return count(Thread.State.WAITING) + count(Thread.State.TIMED_WAITING);
    }

    private static void await(String what, BooleanSupplier condition) {
        long until = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - until > 0) {
                throw new AssertionError("timed out waiting for " + what);
            }
            try {
                Thread.sleep(5);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what);
            }
        }
    }
}

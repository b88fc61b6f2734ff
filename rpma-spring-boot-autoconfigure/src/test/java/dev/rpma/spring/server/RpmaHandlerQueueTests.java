package dev.rpma.spring.server;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The handler queue's looks: a handler thread that is still looking takes the next request without
 * parking, one with no looks parks at once, the budget halves after looks that found nothing and is
 * restored by a request found, and an interrupt ends the looks. Thread states are observed; nothing
 * is timed.
 */
class RpmaHandlerQueueTests {

    private static final Runnable TASK_A = () -> { };

    private static final Runnable TASK_B = () -> { };

    private static final Runnable TASK_C = () -> { };

    private final List<Thread> started = new CopyOnWriteArrayList<>();

    @AfterEach
    void stopThreads() throws InterruptedException {
        for (Thread thread : this.started) {
            thread.interrupt();
            thread.join(10_000);
            assertThat(thread.isAlive()).as(thread.getName() + " ended").isFalse();
        }
    }

    @Test
    void aHandlerThreadStillLookingTakesTheNextRequestWithoutParking() throws InterruptedException {
        RpmaHandlerQueue queue = new RpmaHandlerQueue(4, Integer.MAX_VALUE);
        AtomicReference<Runnable> taken = new AtomicReference<>();
        RpmaHandlerQueue.HandlerThread thread = start(Integer.MAX_VALUE, () -> taken.set(queue.take()));
        // it looks and yields for as long as this samples it: never parked, never waiting
        for (int i = 0; i < 2000; i++) {
            assertThat(thread.getState()).isIn(Thread.State.NEW, Thread.State.RUNNABLE);
            Thread.yield();
        }
        queue.offer(TASK_A);
        thread.join(10_000);

        assertThat(taken).hasValue(TASK_A);
        assertThat(thread.looks).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void withNoLooksAnIdleHandlerThreadParksAtOnce() throws InterruptedException {
        RpmaHandlerQueue queue = new RpmaHandlerQueue(4, 0);
        AtomicReference<Runnable> taken = new AtomicReference<>();
        RpmaHandlerQueue.HandlerThread thread = start(0, () -> taken.set(queue.take()));
        await("the thread to park", () -> thread.getState() == Thread.State.WAITING);

        queue.offer(TASK_A);
        thread.join(10_000);
        assertThat(taken).hasValue(TASK_A);
    }

    @Test
    void looksThatFoundNothingHalveTheBudgetAndARequestFoundRestoresIt() throws InterruptedException {
        RpmaHandlerQueue queue = new RpmaHandlerQueue(4, 8);
        List<Integer> looksAfterEachTake = new CopyOnWriteArrayList<>();
        List<Runnable> taken = new CopyOnWriteArrayList<>();
        CountDownLatch secondWaiting = new CountDownLatch(1);
        RpmaHandlerQueue.HandlerThread[] self = new RpmaHandlerQueue.HandlerThread[1];
        self[0] = start(8, () -> {
            taken.add(queue.take());
            looksAfterEachTake.add(self[0].looks);
            secondWaiting.await();
            for (int i = 0; i < 2; i++) {
                taken.add(queue.take());
                looksAfterEachTake.add(self[0].looks);
            }
        });
        // 1: nothing to find in 8 looks, so it parks until a request comes
        await("the first wait", () -> self[0].getState() == Thread.State.WAITING);
        queue.offer(TASK_A);
        await("the first take", () -> looksAfterEachTake.size() == 1);
        // 2: a request is waiting when it comes back
        queue.offer(TASK_B);
        secondWaiting.countDown();
        // 3: nothing again, it parks
        await("the third wait", () -> looksAfterEachTake.size() == 2 && self[0].getState() == Thread.State.WAITING);
        queue.offer(TASK_C);
        self[0].join(10_000);

        assertThat(taken).containsExactly(TASK_A, TASK_B, TASK_C);
        assertThat(looksAfterEachTake).containsExactly(4, 8, 4);
    }

    @Test
    void anInterruptEndsTheLooksAndTheTakeThrows() throws InterruptedException {
        RpmaHandlerQueue queue = new RpmaHandlerQueue(4, Integer.MAX_VALUE);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        RpmaHandlerQueue.HandlerThread thread = start(Integer.MAX_VALUE, () -> {
            try {
                queue.take();
            }
            catch (InterruptedException ex) {
                thrown.set(ex);
            }
        });
        await("the thread to look", () -> thread.getState() == Thread.State.RUNNABLE);
        thread.interrupt();
        // without the check it would yield about 2^31 times before it parked
        thread.join(10_000);

        assertThat(thread.isAlive()).isFalse();
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
    }

    @Test
    void aPoolOnTheQueueShutsDownWhileItsThreadsLook() throws InterruptedException {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 0, TimeUnit.MILLISECONDS,
                new RpmaHandlerQueue(4, Integer.MAX_VALUE),
                (runnable) -> new RpmaHandlerQueue.HandlerThread(runnable, "looking-handler", Integer.MAX_VALUE));
        pool.prestartAllCoreThreads();
        pool.execute(TASK_A);
        pool.shutdown();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private RpmaHandlerQueue.HandlerThread start(int looks, Body body) {
        RpmaHandlerQueue.HandlerThread thread = new RpmaHandlerQueue.HandlerThread(() -> {
            try {
                body.run();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        }, "handler-under-test", looks);
        this.started.add(thread);
        thread.start();
        return thread;
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waiting for " + what).isNegative();
            Thread.sleep(1);
        }
    }

    @FunctionalInterface
    private interface Body {

        void run() throws InterruptedException;
    }
}

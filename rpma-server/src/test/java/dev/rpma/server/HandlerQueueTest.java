package dev.rpma.server;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The handler queue: bounded, first in first out over many laps of its ring, every request taken
 * exactly once by threads that look and park while one thread offers; and its looks: a handler
 * thread that is still looking takes the next request without parking, one with no looks parks at
 * once, the budget halves after looks that found nothing and is restored by a request found, and an
 * interrupt ends the looks. Thread states are observed; nothing is timed.
 */
class HandlerQueueTest {

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
        HandlerQueue queue = new HandlerQueue(4, Integer.MAX_VALUE);
        AtomicReference<Runnable> taken = new AtomicReference<>();
        HandlerPool.HandlerThread thread = start(Integer.MAX_VALUE, () -> taken.set(queue.take()));
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
        HandlerQueue queue = new HandlerQueue(4, 0);
        AtomicReference<Runnable> taken = new AtomicReference<>();
        HandlerPool.HandlerThread thread = start(0, () -> taken.set(queue.take()));
        await("the thread to park", () -> thread.getState() == Thread.State.WAITING);

        queue.offer(TASK_A);
        thread.join(10_000);
        assertThat(taken).hasValue(TASK_A);
    }

    @Test
    void looksThatFoundNothingHalveTheBudgetAndARequestFoundRestoresIt() throws InterruptedException {
        HandlerQueue queue = new HandlerQueue(4, 8);
        List<Integer> looksAfterEachTake = new CopyOnWriteArrayList<>();
        List<Runnable> taken = new CopyOnWriteArrayList<>();
        CountDownLatch secondWaiting = new CountDownLatch(1);
        HandlerPool.HandlerThread[] self = new HandlerPool.HandlerThread[1];
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
        HandlerQueue queue = new HandlerQueue(4, Integer.MAX_VALUE);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        HandlerPool.HandlerThread thread = start(Integer.MAX_VALUE, () -> {
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
    void aPoolShutsDownWhileItsThreadsLook() throws InterruptedException {
        HandlerPool pool = new HandlerPool("looking-handler", 2, 4, Integer.MAX_VALUE, false, () -> 0);
        pool.start();
        AtomicInteger ran = new AtomicInteger();
        assertThat(pool.offer(ran::incrementAndGet)).isTrue();
        await("the task ran", () -> ran.get() == 1);
        pool.shutdown();
        assertThat(pool.awaitTermination(java.time.Duration.ofSeconds(10))).isTrue();
        assertThat(pool.offer(ran::incrementAndGet)).as("refused once shut down").isFalse();
    }

    @Test
    void itRefusesAnOfferAtItsCapacityAndTakesFirstInFirstOutOverManyLaps() {
        // 3 requests in a ring of 4 slots: the capacity, not the ring, bounds it
        HandlerQueue queue = new HandlerQueue(3, 0);
        List<Runnable> taken = new ArrayList<>();
        List<Runnable> offered = new ArrayList<>();
        for (int lap = 0; lap < 10; lap++) {
            for (int i = 0; i < 3; i++) {
                Runnable task = () -> { };
                assertThat(queue.offer(task)).isTrue();
                offered.add(task);
            }
            assertThat(queue.offer(TASK_A)).as("full at 3").isFalse();
            assertThat(queue.size()).isEqualTo(3);
            taken.add(queue.poll());
            assertThat(queue.offer(TASK_B)).as("room for one after a take").isTrue();
            offered.add(TASK_B);
            while (queue.size() > 0) {
                taken.add(queue.poll());
            }
            assertThat(queue.poll()).isNull();
        }
        assertThat(taken).containsExactlyElementsOf(offered);
    }

    @Test
    void aPoolDrainTakesWhatIsWaitingAndATimedPollGivesUpWhenNothingComes() throws InterruptedException {
        HandlerPool pool = new HandlerPool("idle", 1, 4, 0, false, () -> 0);
        assertThat(pool.offer(TASK_A)).isTrue();
        assertThat(pool.offer(TASK_B)).isTrue();
        assertThat(pool.offer(TASK_C)).isTrue();
        assertThat(pool.queued()).isEqualTo(3);
        assertThat(pool.drain()).containsExactly(TASK_A, TASK_B, TASK_C);
        HandlerQueue queue = new HandlerQueue(4, 0);
        assertThat(queue.poll(1, TimeUnit.MILLISECONDS)).isNull();
        assertThat(queue.poll(0, TimeUnit.MILLISECONDS)).isNull();
    }

    @Test
    void manyThreadsOfferingAtOnceLoseNoTaskAndDuplicateNone() throws InterruptedException {
        HandlerQueue queue = new HandlerQueue(64, 16);
        AtomicInteger done = new AtomicInteger();
        for (int i = 0; i < 3; i++) {
            startTaker(queue, 16, done);
        }
        int perOfferer = 20_000;
        AtomicIntegerArray runs = new AtomicIntegerArray(4 * perOfferer);
        List<Thread> offerers = new ArrayList<>();
        for (int o = 0; o < 4; o++) {
            int first = o * perOfferer;
            Thread offerer = new Thread(() -> {
                for (int i = first; i < first + perOfferer; i++) {
                    int index = i;
                    while (!queue.offer(() -> runs.incrementAndGet(index))) {
                        Thread.onSpinWait();
                    }
                }
            }, "offerer-" + o);
            offerers.add(offerer);
            offerer.start();
        }
        for (Thread offerer : offerers) {
            offerer.join();
        }
        await("every task run", () -> done.get() == 4 * perOfferer);
        for (int i = 0; i < runs.length(); i++) {
            assertThat(runs.get(i)).as("task " + i).isOne();
        }
    }

    @Test
    void anOfferWakesOneParkedThreadAndTheNextOffersDoNotWakeItAgain() throws InterruptedException {
        HandlerQueue queue = new HandlerQueue(8, 0);
        List<Runnable> taken = new CopyOnWriteArrayList<>();
        CountDownLatch release = new CountDownLatch(1);
        for (int i = 0; i < 2; i++) {
            start(0, () -> {
                taken.add(queue.take());
                release.await();
            });
        }
        await("both threads to park", () -> queue.waitingThreads() == 2);

        queue.offer(TASK_A);
        // taken off the list by the offer itself, before the woken thread runs
        assertThat(queue.waitingThreads()).isEqualTo(1);
        queue.offer(TASK_B);
        assertThat(queue.waitingThreads()).isZero();
        queue.offer(TASK_C);
        await("both requests taken", () -> taken.size() == 2);
        assertThat(taken).containsExactlyInAnyOrder(TASK_A, TASK_B);
        assertThat(queue.size()).isOne();
        assertThat(queue.poll()).isSameAs(TASK_C);
        release.countDown();
    }

    @Test
    void aParkedThreadThatIsInterruptedOrTimesOutLeavesTheList() throws InterruptedException {
        HandlerQueue queue = new HandlerQueue(4, 0);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        HandlerPool.HandlerThread thread = start(0, () -> {
            try {
                queue.take();
            }
            catch (InterruptedException ex) {
                thrown.set(ex);
            }
        });
        await("the thread to park", () -> queue.waitingThreads() == 1 && thread.getState() == Thread.State.WAITING);
        thread.interrupt();
        thread.join(10_000);

        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        assertThat(queue.waitingThreads()).isZero();
        assertThat(queue.poll(1, TimeUnit.MILLISECONDS)).isNull();
        assertThat(queue.waitingThreads()).isZero();
        // nobody to wake: the request waits for the next take
        queue.offer(TASK_A);
        assertThat(queue.poll()).isSameAs(TASK_A);
    }

    @Test
    void everyRequestOfferedIsTakenExactlyOnceByThreadsThatLookAndPark() throws InterruptedException {
        // 0 and a few looks: threads park often; 1,000 looks: they rarely park
        for (int looks : new int[] { 0, 2, 1000 }) {
            int requests = 100_000;
            HandlerQueue queue = new HandlerQueue(64, looks);
            AtomicIntegerArray runs = new AtomicIntegerArray(requests);
            AtomicInteger done = new AtomicInteger();
            List<HandlerPool.HandlerThread> takers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                takers.add(startTaker(queue, looks, done));
            }
            int offered = 0;
            while (offered < requests) {
                int index = offered;
                if (queue.offer(() -> runs.incrementAndGet(index))) {
                    offered++;
                }
                else {
                    Thread.yield();
                }
            }
            await(requests + " requests taken with " + looks + " looks", () -> done.get() == requests);
            for (int i = 0; i < requests; i++) {
                assertThat(runs.get(i)).as("runs of request " + i).isEqualTo(1);
            }
            assertThat(queue.size()).isZero();
            for (Thread taker : takers) {
                taker.interrupt();
                taker.join(10_000);
            }
        }
    }

    @Test
    void aRequestOfferedAsTheOnlyThreadParksWakesIt() throws InterruptedException {
        // one request at a time, each offered as the thread that ran the last one goes back to the
        // queue and parks: a wake-up lost between the thread joining the list and the offer leaves
        // the request waiting for good
        for (int looks : new int[] { 0, 1 }) {
            HandlerQueue queue = new HandlerQueue(4, looks);
            AtomicInteger done = new AtomicInteger();
            HandlerPool.HandlerThread taker = startTaker(queue, looks, done);
            for (int i = 0; i < 50_000; i++) {
                int before = done.get();
                assertThat(queue.offer(TASK_A)).isTrue();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (done.get() == before) {
                    assertThat(System.nanoTime() - deadline).as("request " + i + " with " + looks + " looks taken")
                        .isNegative();
                    Thread.onSpinWait();
                }
            }
            taker.interrupt();
            taker.join(10_000);
        }
    }

    /** A handler thread that takes and runs requests, counting them, until interrupted. */
    private HandlerPool.HandlerThread startTaker(HandlerQueue queue, int looks, AtomicInteger done) {
        return start(looks, () -> {
            while (true) {
                queue.take().run();
                done.incrementAndGet();
            }
        });
    }

    private HandlerPool.HandlerThread start(int looks, Body body) {
        HandlerPool.HandlerThread thread = new HandlerPool.HandlerThread(() -> {
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

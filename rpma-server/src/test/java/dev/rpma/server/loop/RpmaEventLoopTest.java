package dev.rpma.server.loop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import dev.rpma.binding.internal.LibC;

/** One event loop on real eventfds: its fds, tasks, timers, busy poll, and its stop. */
@Timeout(60)
class RpmaEventLoopTest {

    private final RpmaEventLoop loop = new RpmaEventLoop("loop-under-test", Duration.ZERO);

    private final int fd = LibC.eventfd(0, LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);

    private final Memory eight = new Memory(8);

    @AfterEach
    void stop() throws InterruptedException {
        this.loop.shutdown();
        assertThat(this.loop.awaitTermination(Duration.ofSeconds(10))).isTrue();
        LibC.close(this.fd);
        this.eight.close();
    }

    private void signal() {
        this.eight.setLong(0, 1);
        LibC.write(this.fd, Pointer.nativeValue(this.eight), 8);
    }

    private void drain() {
        LibC.read(this.fd, Pointer.nativeValue(this.eight), 8);
    }

    @Test
    void tasksFromOtherThreadsRunInOrderOnTheLoopThread() throws InterruptedException {
        this.loop.start();
        List<String> ran = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 100; i++) {
            int index = i;
            this.loop.execute(() -> ran.add(index + "@" + Thread.currentThread().getName()));
        }
        await("every task", () -> ran.size() == 100);
        for (int i = 0; i < 100; i++) {
            assertThat(ran.get(i)).isEqualTo(i + "@loop-under-test");
        }
        assertThat(this.loop.inLoop()).isFalse();
    }

    @Test
    void tasksTheLoopHandsItselfRunInOrderAndBehindTasksOfOtherThreadsHandedOverBeforeThem() throws Exception {
        this.loop.start();
        List<String> ran = new CopyOnWriteArrayList<>();
        CountDownLatch otherHandedOver = new CountDownLatch(1);
        this.loop.execute(() -> {
            this.loop.execute(() -> ran.add("own 1"));
            this.loop.execute(() -> ran.add("own 2"));
            // another thread's task, handed over while the loop runs this one: the loop's next must wait behind it
            Thread other = new Thread(() -> {
                this.loop.execute(() -> ran.add("other"));
                otherHandedOver.countDown();
            });
            other.start();
            try {
                assertThat(otherHandedOver.await(10, TimeUnit.SECONDS)).isTrue();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            this.loop.execute(() -> ran.add("own 3"));
        });
        await("every task", () -> ran.size() == 4);
        assertThat(ran).containsExactly("own 1", "own 2", "other", "own 3");
    }

    @Test
    void aRegisteredFdCallsItsHandlerWhileReadableAndNotOnceUnregistered() throws Exception {
        this.loop.start();
        AtomicInteger calls = new AtomicInteger();
        CompletableFuture<Long> registration = new CompletableFuture<>();
        this.loop.execute(() -> registration.complete(this.loop.register(this.fd, (kind) -> {
            assertThat(kind).isEqualTo(7);
            calls.incrementAndGet();
            drain();
        }, 7)));
        long key = registration.get(10, TimeUnit.SECONDS);
        signal();
        await("the handler", () -> calls.get() == 1);
        CountDownLatch unregistered = new CountDownLatch(1);
        this.loop.execute(() -> {
            this.loop.unregister(this.fd, key);
            unregistered.countDown();
        });
        assertThat(unregistered.await(10, TimeUnit.SECONDS)).isTrue();
        signal();
        Thread.sleep(50);
        assertThat(calls).hasValue(1);
        drain();
    }

    @Test
    void timersRunInTheirOrderAndACancelledOneNever() {
        this.loop.start();
        List<String> ran = new CopyOnWriteArrayList<>();
        this.loop.execute(() -> {
            this.loop.schedule(() -> ran.add("late"), Duration.ofMillis(60));
            this.loop.schedule(() -> ran.add("early"), Duration.ofMillis(20));
            RpmaEventLoop.Timer cancelled = this.loop.schedule(() -> ran.add("cancelled"), Duration.ofMillis(40));
            cancelled.cancel();
        });
        await("both timers", () -> ran.size() == 2);
        assertThat(ran).containsExactly("early", "late");
    }

    @Test
    void workRunSoonRunsInTheNextRoundWithoutWaiting() {
        this.loop.start();
        List<String> ran = new CopyOnWriteArrayList<>();
        this.loop.execute(() -> {
            this.loop.runSoon(() -> ran.add("soon"));
            ran.add("now");
        });
        await("the work", () -> ran.size() == 2);
        assertThat(ran).containsExactly("now", "soon");
    }

    @Test
    void callsThatBelongToTheLoopFailElsewhereAndSayWhatToDo() {
        this.loop.start();
        assertThatThrownBy(() -> this.loop.register(this.fd, (kind) -> {
        }, 0)).isInstanceOf(IllegalStateException.class).hasMessageContaining("execute()");
        assertThatThrownBy(() -> this.loop.schedule(() -> {
        }, Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> this.loop.addBusyPoller(() -> false)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(this.loop::clockNanos).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("clockNanos");
    }

    @Test
    void theLoopsClockIsReadWhenItsRoundBeginsAfterAWaitAndWhileItWorksAndItsThreadKnowsIt() throws Exception {
        this.loop.start();
        Thread.sleep(100);
        // the loop slept; a task handed over now runs in a round that began after it was handed over
        long handedOver = System.nanoTime();
        CompletableFuture<long[]> seen = new CompletableFuture<>();
        this.loop.execute(() -> seen.complete(new long[] { this.loop.clockNanos(), System.nanoTime() }));
        long[] clocks = seen.get(10, TimeUnit.SECONDS);
        CompletableFuture<RpmaEventLoop> current = new CompletableFuture<>();
        this.loop.execute(() -> current.complete(RpmaEventLoop.current()));
        assertThat(current.get(10, TimeUnit.SECONDS)).isSameAs(this.loop);
        assertThat(RpmaEventLoop.current()).isNull();
        assertThat(clocks[0]).isGreaterThanOrEqualTo(handedOver).isLessThanOrEqualTo(clocks[1]);
        // a loop kept busy by tasks, which never sleeps, still reads it once per round
        CompletableFuture<Long> later = new CompletableFuture<>();
        long before = System.nanoTime();
        Runnable[] again = new Runnable[1];
        again[0] = () -> {
            if (this.loop.clockNanos() - before >= TimeUnit.MILLISECONDS.toNanos(50)) {
                later.complete(this.loop.clockNanos());
            }
            else {
                this.loop.runSoon(again[0]);
            }
        };
        this.loop.execute(again[0]);
        assertThat(later.get(10, TimeUnit.SECONDS) - before).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(50));
    }

    @Test
    void withoutABusyPollTheLoopLooksAtItsPollersAfterWorkUntilFourLooksInARowFindNothingAndAtItsFdsMeanwhile()
            throws InterruptedException {
        this.loop.start();
        AtomicInteger looks = new AtomicInteger();
        AtomicInteger workLeft = new AtomicInteger();
        this.loop.execute(() -> this.loop.addBusyPoller(() -> {
            looks.incrementAndGet();
            if (workLeft.get() > 0) {
                workLeft.decrementAndGet();
                return true;
            }
            return false;
        }));
        int empty = RpmaEventLoop.EMPTY_LOOKS_BEFORE_SLEEPING;
        // adding it was work: looks that found nothing
        await("the first looks", () -> looks.get() == empty);
        workLeft.set(3);
        this.loop.execute(() -> {
        });
        int afterWork = empty + 3 + empty;
        await("three looks that found work and then the empty ones", () -> looks.get() == afterWork);
        Thread.sleep(100);
        assertThat(looks).hasValue(afterWork);
        workLeft.set(Integer.MAX_VALUE);
        this.loop.execute(() -> {
        });
        // while the looks find work they go on, and the fds and timers are looked at every so many of them
        await("looks past any cap", () -> looks.get() > afterWork + 4 * RpmaEventLoop.WORKING_SPINS_PER_FD_LOOK);
        long rounds = this.loop.wakeups();
        CountDownLatch timerRan = new CountDownLatch(1);
        AtomicInteger fdCalls = new AtomicInteger();
        this.loop.execute(() -> {
            this.loop.schedule(timerRan::countDown, Duration.ZERO);
            this.loop.register(this.fd, (kind) -> {
                fdCalls.incrementAndGet();
                drain();
            }, 1);
        });
        signal();
        assertThat(timerRan.await(10, TimeUnit.SECONDS)).as("a due timer runs while the looks find work").isTrue();
        await("a readable fd's handler while the looks find work", () -> fdCalls.get() == 1);
        assertThat(this.loop.wakeups()).as("all of it within the looks, no round of the loop").isEqualTo(rounds);
        // read before the work ends, as the loop may look four more times and sleep just after; the look
        // it is in may already be the first that finds nothing
        int before = looks.get();
        workLeft.set(0);
        await("four empty looks", () -> looks.get() >= before + empty - 1);
        Thread.sleep(100);
        int settled = looks.get();
        Thread.sleep(100);
        // then it sleeps: the completion channel's event, not a look, wakes it for more
        assertThat(looks).hasValue(settled);
    }

    @Test
    void aFailingTaskDoesNotStopTheLoop() {
        this.loop.start();
        AtomicInteger after = new AtomicInteger();
        this.loop.execute(() -> {
            throw new IllegalStateException("on purpose");
        });
        this.loop.execute(after::incrementAndGet);
        await("the task after", () -> after.get() == 1);
    }

    @Test
    void theStopRunsTheTasksHandedOverBeforeItAndRefusesLaterOnes() throws InterruptedException {
        this.loop.start();
        CountDownLatch hold = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        this.loop.execute(() -> {
            try {
                hold.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        });
        this.loop.execute(ran::incrementAndGet);
        this.loop.shutdown();
        hold.countDown();
        assertThat(this.loop.awaitTermination(Duration.ofSeconds(10))).isTrue();
        assertThat(ran).hasValue(1);
        assertThatThrownBy(() -> this.loop.execute(ran::incrementAndGet)).isInstanceOf(RejectedExecutionException.class);
        assertThat(this.loop.tryExecute(ran::incrementAndGet)).isFalse();
    }

    @Test
    void anIdleLoopSleepsAndCountsItsIdleTime() throws InterruptedException {
        this.loop.start();
        Thread.sleep(200);
        long wakeups = this.loop.wakeups();
        this.loop.execute(() -> {
        });
        await("the wake-up", () -> this.loop.wakeups() > wakeups);
        // the time of a wait is counted once it ended
        assertThat(this.loop.idleNanos()).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(150));
        assertThat(this.loop.aliveNanos()).isGreaterThan(this.loop.idleNanos());
    }

    @Test
    void theWorkBeforeASleepCountsAsBusyThoughMostSleepsStartUnread() throws InterruptedException {
        this.loop.start();
        // enough sampled sleeps for the estimate to settle: the work of the first ones is counted late
        int tasks = 20 * RpmaEventLoop.SLEEP_START_SAMPLE;
        long workNanos = TimeUnit.MILLISECONDS.toNanos(2);
        for (int i = 0; i < tasks; i++) {
            CountDownLatch done = new CountDownLatch(1);
            this.loop.execute(() -> {
                long until = System.nanoTime() + workNanos;
                while (System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
                done.countDown();
            });
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            Thread.sleep(2);
        }
        long wakeups = this.loop.wakeups();
        this.loop.execute(() -> {
        });
        await("the wake-up", () -> this.loop.wakeups() > wakeups);
        long idle = this.loop.idleNanos();
        long busy = this.loop.aliveNanos() - idle;
        // the work followed a wake-up's reading, and only one sleep in SLEEP_START_SAMPLE read its start
        assertThat(busy).as("busy ns").isGreaterThan(tasks * workNanos / 2);
        assertThat(idle).as("idle ns").isGreaterThan(tasks * TimeUnit.MILLISECONDS.toNanos(2) / 2);
    }

    @Test
    void theBusyPollKeepsLookingWhileWorkComesAndSleepsABusyPollTimeAfterTheLast() throws InterruptedException {
        RpmaEventLoop busy = new RpmaEventLoop("busy-loop", Duration.ofMillis(50));
        busy.start();
        try {
            AtomicInteger work = new AtomicInteger();
            AtomicInteger looks = new AtomicInteger();
            CountDownLatch added = new CountDownLatch(1);
            busy.execute(() -> {
                busy.addBusyPoller(() -> {
                    looks.incrementAndGet();
                    return work.getAndUpdate((left) -> Math.max(0, left - 1)) > 0;
                });
                added.countDown();
            });
            assertThat(added.await(10, TimeUnit.SECONDS)).isTrue();
            work.set(1000);
            busy.execute(() -> {
            });
            await("the work found by looks", () -> work.get() == 0);
            // after the last work it looks for up to 50 ms, then sleeps: the looks stop
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int before;
            do {
                before = looks.get();
                Thread.sleep(200);
            }
            while (looks.get() != before && System.nanoTime() - deadline < 0);
            assertThat(looks.get()).as("no looks while asleep").isEqualTo(before);
        }
        finally {
            busy.shutdown();
        }
        assertThat(busy.awaitTermination(Duration.ofSeconds(10))).isTrue();
    }

    /**
     * A session that ends inside its poller's look (a failed completion) removes its poller there, and
     * may end another session with it: the same look goes on over the pollers left, the loop keeps
     * running, and the removed ones are never looked at again.
     */
    @Test
    void aPollerThatRemovesItselfAndAnotherDuringALookLeavesTheRestPolledAndTheLoopRunning() throws Exception {
        onBusyLoopWithOtherFd(Duration.ofMillis(50), (busy, other) -> {
            AtomicInteger work = new AtomicInteger();
            AtomicInteger[] looks = { new AtomicInteger(), new AtomicInteger(), new AtomicInteger(),
                new AtomicInteger() };
            AtomicBoolean endNow = new AtomicBoolean();
            CompletableFuture<int[]> removedAt = new CompletableFuture<>();
            RpmaEventLoop.BusyPoller last = () -> looks[3].incrementAndGet() < 0;
            RpmaEventLoop.BusyPoller[] second = new RpmaEventLoop.BusyPoller[1];
            second[0] = () -> {
                looks[1].incrementAndGet();
                if (endNow.get() && !removedAt.isDone()) {
                    busy.removeBusyPoller(second[0]);
                    busy.removeBusyPoller(last);
                    removedAt.complete(new int[] { looks[1].get(), looks[3].get() });
                }
                return false;
            };
            LoopTasks.runOn(busy, () -> {
                busy.addBusyPoller(workingPoller(looks[0], work));
                busy.addBusyPoller(second[0]);
                busy.addBusyPoller(() -> looks[2].incrementAndGet() < 0);
                busy.addBusyPoller(last);
            });
            endNow.set(true);
            work.set(1000);
            busy.execute(() -> {
            });
            int[] at = removedAt.get(10, TimeUnit.SECONDS);
            int firstAt = looks[0].get();
            int thirdAt = looks[2].get();
            await("the pollers left looked at again",
                    () -> looks[0].get() > firstAt + 100 && looks[2].get() > thirdAt + 100);
            assertThat(looks[1]).as("the one that removed itself").hasValue(at[0]);
            assertThat(looks[3]).as("the one it removed").hasValue(at[1]);
            LoopTasks.runOn(busy, () -> assertThat(busy.busyPollers()).isEqualTo(2));
        });
    }

    /** A poller added during a look, past the room the loop had for pollers, is looked at in turn. */
    @Test
    void aPollerAddedDuringALookPastTheRoomForPollersIsLookedAtAndTheLoopRuns() throws Exception {
        onBusyLoopWithOtherFd(Duration.ofMillis(50), (busy, other) -> {
            AtomicInteger work = new AtomicInteger();
            AtomicBoolean addNow = new AtomicBoolean();
            AtomicInteger addedLooks = new AtomicInteger();
            RpmaEventLoop.BusyPoller working = workingPoller(new AtomicInteger(), work);
            LoopTasks.runOn(busy, () -> {
                busy.addBusyPoller(() -> {
                    if (addNow.getAndSet(false)) {
                        busy.addBusyPoller(() -> addedLooks.incrementAndGet() < 0);
                    }
                    return working.pollOnce();
                });
                // as many as the loop has room for before it grows
                for (int i = 1; i < 8; i++) {
                    busy.addBusyPoller(() -> false);
                }
            });
            addNow.set(true);
            work.set(1000);
            busy.execute(() -> {
            });
            await("the added poller looked at", () -> addedLooks.get() > 10);
            LoopTasks.runOn(busy, () -> assertThat(busy.busyPollers()).isEqualTo(9));
        });
    }

    /** A poller that counts its looks and finds work while {@code work} is left, taking one each time. */
    private static RpmaEventLoop.BusyPoller workingPoller(AtomicInteger looks, AtomicInteger work) {
        return () -> {
            looks.incrementAndGet();
            return work.getAndUpdate((left) -> Math.max(0, left - 1)) > 0;
        };
    }

    /**
     * A wake-up written for a task that the same round already ran is consumed by the busy poll's look
     * at the fds; the next task handed over must still wake the sleeping loop.
     */
    @Test
    void aWakeUpConsumedByTheBusyPollDoesNotSilenceTheNextOne() throws InterruptedException {
        RpmaEventLoop busy = new RpmaEventLoop("busy-loop", Duration.ofMillis(20));
        busy.start();
        try {
            CountDownLatch ready = new CountDownLatch(1);
            busy.execute(() -> {
                busy.addBusyPoller(() -> false);
                // from another thread while this round runs its tasks: run in this round, its wake-up left behind
                Thread other = new Thread(() -> busy.execute(ready::countDown));
                other.start();
                try {
                    other.join();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(ready.await(10, TimeUnit.SECONDS)).isTrue();
            // the busy poll ends and the loop sleeps; a task handed over now must wake it
            Thread.sleep(200);
            CountDownLatch woken = new CountDownLatch(1);
            busy.execute(woken::countDown);
            assertThat(woken.await(5, TimeUnit.SECONDS)).as("the sleeping loop woken for a task").isTrue();
        }
        finally {
            busy.shutdown();
        }
        assertThat(busy.awaitTermination(Duration.ofSeconds(10))).isTrue();
    }

    /**
     * A completion channel's readiness is left to its poller while the loop spins (reading the event
     * would re-arm the queue); the loop takes it once it sleeps. Any other fd is looked at meanwhile.
     */
    @Test
    void whileItSpinsTheLoopLeavesBusyPolledFdsToTheirPollersAndLooksAtTheOthers() throws Exception {
        onBusyLoopWithOtherFd(Duration.ofMillis(20), (busy, other) -> {
            AtomicInteger work = new AtomicInteger();
            AtomicInteger looks = new AtomicInteger();
            List<String> seen = new CopyOnWriteArrayList<>();
            CountDownLatch registered = new CountDownLatch(1);
            busy.execute(() -> {
                busy.registerBusyPolled(this.fd, (kind) -> {
                    seen.add("polled fd, work left " + work.get());
                    drain();
                }, 1);
                busy.register(other, (kind) -> {
                    seen.add("other fd, work left " + work.get());
                    LibC.read(other, Pointer.nativeValue(this.eight), 8);
                }, 2);
                busy.addBusyPoller(() -> {
                    looks.incrementAndGet();
                    return work.getAndUpdate((left) -> Math.max(0, left - 1)) > 0;
                });
                registered.countDown();
            });
            assertThat(registered.await(10, TimeUnit.SECONDS)).isTrue();
            // a task wakes the loop, and the poller keeps it spinning
            work.set(Integer.MAX_VALUE);
            busy.execute(() -> {
            });
            int before = looks.get();
            await("the loop spinning", () -> looks.get() > before + 1000);
            signal();
            LibC.write(other, Pointer.nativeValue(this.eight), 8);
            await("the other fd taken while spinning", () -> !seen.isEmpty());
            Thread.sleep(50);
            assertThat(seen).singleElement().asString().startsWith("other fd");
            work.set(0);
            await("the polled fd taken once the loop sleeps", () -> seen.size() == 2);
            assertThat(seen.get(1)).isEqualTo("polled fd, work left 0");
        });
    }

    /**
     * A loop that spins without finding work (a long busy-poll time) still looks at its fds and runs
     * its timers, every {@value RpmaEventLoop#FD_LOOK_INTERVAL_MICROS} µs of spinning, not only once
     * the busy-poll time is over.
     */
    @Test
    void aLoopSpinningWithoutWorkStillTakesItsFdsAndTimersSoon() throws Exception {
        onBusyLoopWithOtherFd(Duration.ofSeconds(60), (busy, other) -> {
            AtomicInteger looks = new AtomicInteger();
            CountDownLatch taken = new CountDownLatch(1);
            CountDownLatch timer = new CountDownLatch(1);
            busy.execute(() -> {
                busy.register(other, (kind) -> {
                    LibC.read(other, Pointer.nativeValue(this.eight), 8);
                    taken.countDown();
                    // scheduled while the loop spins: a task handed over would end the spin instead
                    busy.schedule(timer::countDown, Duration.ofMillis(5));
                }, 2);
                busy.addBusyPoller(() -> {
                    looks.incrementAndGet();
                    return false;
                });
            });
            // a task wakes the loop, after which it spins for the busy-poll time: a minute
            busy.execute(() -> {
            });
            int before = looks.get();
            await("the loop spinning", () -> looks.get() > before + 100);
            long start = System.nanoTime();
            this.eight.setLong(0, 1);
            LibC.write(other, Pointer.nativeValue(this.eight), 8);
            assertThat(taken.await(10, TimeUnit.SECONDS)).as("the fd taken while spinning").isTrue();
            assertThat(timer.await(10, TimeUnit.SECONDS)).as("the timer run while spinning").isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        });
    }

    /** Runs {@code body} with a started busy-polling loop and an eventfd of its own; stops and closes both. */
    private static void onBusyLoopWithOtherFd(Duration busyPoll, BusyLoopBody body) throws Exception {
        RpmaEventLoop busy = new RpmaEventLoop("busy-loop", busyPoll);
        int other = LibC.eventfd(0, LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);
        busy.start();
        try {
            body.run(busy, other);
        }
        finally {
            busy.shutdown();
            assertThat(busy.awaitTermination(Duration.ofSeconds(10))).isTrue();
            LibC.close(other);
        }
    }

    @FunctionalInterface
    private interface BusyLoopBody {

        void run(RpmaEventLoop busy, int other) throws Exception;
    }

    @Test
    void aLoopThatNeverStartedStopsAtOnce() throws InterruptedException {
        RpmaEventLoop unstarted = new RpmaEventLoop("never", Duration.ZERO);
        unstarted.shutdown();
        assertThat(unstarted.awaitTermination(Duration.ZERO)).isTrue();
        assertThatThrownBy(unstarted::start).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aGroupAssignsNewConnectionsToTheLoopWithTheFewest() {
        RpmaEventLoopGroup group = new RpmaEventLoopGroup(3, "group-", Duration.ZERO);
        int first = group.next();
        int second = group.next();
        int third = group.next();
        assertThat(List.of(first, second, third)).containsExactlyInAnyOrder(0, 1, 2);
        group.released(second);
        assertThat(group.next()).isEqualTo(second);
        assertThat(group.owned(first)).isOne();
        group.shutdown();
        assertThat(RpmaEventLoopGroup.defaultSize()).isBetween(1, Runtime.getRuntime().availableProcessors());
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waiting for " + what).isNegative();
            try {
                Thread.sleep(1);
            }
            catch (InterruptedException ex) {
                throw new AssertionError(ex);
            }
        }
    }
}

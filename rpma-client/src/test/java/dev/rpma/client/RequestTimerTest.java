package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.server.loop.RpmaEventLoop;

class RequestTimerTest {

    private final RpmaEventLoop loop = new RpmaEventLoop("timer-test", Duration.ZERO);

    @AfterEach
    void stop() throws InterruptedException {
        this.loop.shutdown();
        this.loop.awaitTermination(Duration.ofSeconds(10));
    }

    /** A request made at {@code start} with a timeout of {@code timeoutMillis}. */
    private static PendingRequest request(long start, long timeoutMillis) {
        return new PendingRequest(PendingRequest.Kind.REQUEST, new byte[0], "", new byte[0], false,
                Duration.ofMillis(timeoutMillis), start, null);
    }

    @Test
    void sweepsByTheEarliestDeadlineAndAgainByTheEarliestOfThoseNotPassedEvenWhenASweepWatchesALaterOne()
            throws Exception {
        this.loop.start();
        long start = System.nanoTime();
        // due in 300 ms, 20 ms and an hour; the first sweep's work holds one more, due in two hours
        PendingRequest[] requests = { request(start, 300), request(start, 20), request(start, 3_600_000),
                request(start, 7_200_000) };
        boolean[] held = { true, true, true, false };
        long[] timedOutAt = new long[requests.length];
        List<Integer> timedOut = new CopyOnWriteArrayList<>();
        AtomicInteger sweeps = new AtomicInteger();
        RequestTimer timer = started((self, sweep) -> {
            sweeps.incrementAndGet();
            for (int i = 0; i < requests.length; i++) {
                if (held[i] && sweep.due(requests[i])) {
                    held[i] = false;
                    timedOut.add(i);
                    timedOutAt[i] = System.nanoTime();
                }
            }
            if (!held[3] && timedOut.size() == 1) {
                // a timed-out request's callback makes one with a later deadline
                held[3] = true;
                self.watch(requests[3].deadlineNanos);
            }
        }, (self) -> {
            for (int i = 0; i < 3; i++) {
                self.watch(requests[i].deadlineNanos);
            }
        });
        awaitSize(timedOut, 2);
        assertThat(timedOut).containsExactly(1, 0);
        assertThat(timedOutAt[1] - requests[1].deadlineNanos).isNotNegative();
        assertThat(timedOutAt[0] - requests[0].deadlineNanos).as("not put off to the later deadline the first sweep watched")
            .isNotNegative().isLessThan(TimeUnit.SECONDS.toNanos(5));
        assertThat(onLoop(timer::isSet)).as("set for the requests still held").isTrue();
        assertThat(sweeps).as("one sweep per deadline passed").hasValue(2);
    }

    @Test
    void requestsTimingOutOneAfterAnotherAreSweptAtMostThirtyTwoTimesPerTimeout() throws Exception {
        this.loop.start();
        long now = System.nanoTime();
        // 200 requests of a 3.2 s timeout, due one per millisecond from 50 ms on: a sweep per deadline
        // would be 200 sweeps; a 32nd of the timeout between sweeps makes it 3 or 4
        int count = 200;
        PendingRequest[] requests = new PendingRequest[count];
        for (int i = 0; i < count; i++) {
            requests[i] = request(now - TimeUnit.MILLISECONDS.toNanos(3200 - 50 - i), 3200);
        }
        boolean[] held = new boolean[count];
        long[] late = new long[count];
        List<Integer> timedOut = new CopyOnWriteArrayList<>();
        AtomicInteger sweeps = new AtomicInteger();
        started((self, sweep) -> {
            sweeps.incrementAndGet();
            long at = System.nanoTime();
            for (int i = 0; i < count; i++) {
                if (held[i] && sweep.due(requests[i])) {
                    held[i] = false;
                    late[i] = at - requests[i].deadlineNanos;
                    timedOut.add(i);
                }
            }
        }, (self) -> {
            for (int i = 0; i < count; i++) {
                held[i] = true;
                self.watch(requests[i].deadlineNanos);
            }
        });
        awaitSize(timedOut, count);
        assertThat(sweeps.get()).isBetween(2, 5);
        for (int i = 0; i < count; i++) {
            assertThat(late[i]).as("request %d", i).isNotNegative()
                .isLessThan(TimeUnit.MILLISECONDS.toNanos(100 + 2000));
        }
    }

    private interface Sweep {

        void run(RequestTimer self, RequestTimer sweep);
    }

    /** A timer whose sweeps run {@code sweep}, made on the loop, where {@code first} then runs. */
    private RequestTimer started(Sweep sweep, Consumer<RequestTimer> first) throws Exception {
        CompletableFuture<RequestTimer> made = new CompletableFuture<>();
        this.loop.execute(() -> {
            RequestTimer[] timer = new RequestTimer[1];
            timer[0] = new RequestTimer(this.loop, (self) -> sweep.run(timer[0], self));
            first.accept(timer[0]);
            made.complete(timer[0]);
        });
        return made.get(10, TimeUnit.SECONDS);
    }

    private <T> T onLoop(java.util.function.Supplier<T> what) throws Exception {
        CompletableFuture<T> result = new CompletableFuture<>();
        this.loop.execute(() -> result.complete(what.get()));
        return result.get(10, TimeUnit.SECONDS);
    }

    private static void awaitSize(List<?> list, int size) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (list.size() < size && System.nanoTime() < until) {
            Thread.sleep(5);
        }
    }
}

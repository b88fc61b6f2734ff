package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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

    @Test
    void sweepsByTheEarliestDeadlineAndAgainByTheEarliestOfThoseNotPassedEvenWhenASweepWatchesALaterOne()
            throws Exception {
        this.loop.start();
        long start = System.nanoTime();
        // held requests by index: due at 300 ms, 20 ms and in an hour; the first sweep's work holds one due in two
        long[] deadlines = { start + ms(300), start + ms(20), start + ms(3_600_000), start + ms(7_200_000) };
        boolean[] held = { true, true, true, false };
        long[] timedOutAt = new long[deadlines.length];
        List<Integer> timedOut = new CopyOnWriteArrayList<>();
        AtomicInteger sweeps = new AtomicInteger();
        CompletableFuture<RequestTimer> made = new CompletableFuture<>();
        this.loop.execute(() -> {
            RequestTimer[] timer = new RequestTimer[1];
            timer[0] = new RequestTimer(this.loop, (sweep) -> {
                sweeps.incrementAndGet();
                for (int i = 0; i < deadlines.length; i++) {
                    if (held[i] && sweep.due(deadlines[i])) {
                        held[i] = false;
                        timedOut.add(i);
                        timedOutAt[i] = System.nanoTime();
                    }
                }
                if (!held[3] && timedOut.size() == 1) {
                    // a timed-out request's callback makes one with a later deadline
                    held[3] = true;
                    timer[0].watch(deadlines[3]);
                }
            });
            for (int i = 0; i < 3; i++) {
                timer[0].watch(deadlines[i]);
            }
            made.complete(timer[0]);
        });
        RequestTimer timer = made.get(10, TimeUnit.SECONDS);
        long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (timedOut.size() < 2 && System.nanoTime() < waitUntil) {
            Thread.sleep(5);
        }
        assertThat(timedOut).containsExactly(1, 0);
        assertThat(timedOutAt[1] - deadlines[1]).isNotNegative();
        assertThat(timedOutAt[0] - deadlines[0]).as("not delayed to the later deadline the first sweep watched")
            .isNotNegative().isLessThan(TimeUnit.SECONDS.toNanos(5));
        CompletableFuture<Boolean> set = new CompletableFuture<>();
        this.loop.execute(() -> set.complete(timer.isSet()));
        assertThat(set.get(10, TimeUnit.SECONDS)).as("set for the requests still held").isTrue();
        assertThat(sweeps).as("one sweep per deadline passed").hasValue(2);
    }

    private static long ms(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }
}

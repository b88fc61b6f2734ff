package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.server.loop.RpmaEventLoop;

class RequestDeadlinesTest {

    private final RpmaEventLoop loop = new RpmaEventLoop("deadlines-test", Duration.ZERO);

    @AfterEach
    void stop() throws InterruptedException {
        this.loop.shutdown();
        this.loop.awaitTermination(Duration.ofSeconds(10));
    }

    private static PendingRequest request(Duration timeout, int id) {
        PendingRequest request = new PendingRequest(PendingRequest.Kind.REQUEST, new byte[0], "", new byte[0], false,
                timeout, System.nanoTime(), null);
        request.requestId = id;
        return request;
    }

    @Test
    void expiresThePassedDeadlinesEarliestFirstAndNeitherTheRemovedNorTheFutureOnes() throws Exception {
        this.loop.start();
        List<Integer> expired = new ArrayList<>();
        CompletableFuture<RequestDeadlines> made = new CompletableFuture<>();
        // the deadlines are in the past (negative timeouts), in this order of ids: 3, 0, 4, 1, 2 (earliest first)
        int[] pastMillis = { -40, -20, -10, -50, -30 };
        PendingRequest[] past = new PendingRequest[pastMillis.length];
        for (int i = 0; i < past.length; i++) {
            past[i] = request(Duration.ofMillis(pastMillis[i]), i);
        }
        PendingRequest removed = request(Duration.ofMillis(-45), 9);
        PendingRequest later = request(Duration.ofHours(1), 10);
        CompletableFuture<Void> done = new CompletableFuture<>();
        this.loop.execute(() -> {
            RequestDeadlines deadlines = new RequestDeadlines(this.loop, (request) -> {
                expired.add(request.requestId);
                if (expired.size() == past.length) {
                    done.complete(null);
                }
            });
            deadlines.add(later);
            for (PendingRequest request : past) {
                deadlines.add(request);
            }
            deadlines.add(removed);
            deadlines.remove(removed);
            made.complete(deadlines);
        });
        done.get(30, TimeUnit.SECONDS);
        RequestDeadlines deadlines = made.get();
        CompletableFuture<Boolean> stillHeld = new CompletableFuture<>();
        this.loop.execute(() -> stillHeld.complete(deadlines.size() == 1 && deadlines.holds(later)
                && !deadlines.holds(removed) && !deadlines.holds(past[0])));
        assertThat(expired).containsExactly(3, 0, 4, 1, 2);
        assertThat(stillHeld.get(30, TimeUnit.SECONDS)).isTrue();
        assertThat(removed.deadlineIndex).isEqualTo(-1);
    }
}

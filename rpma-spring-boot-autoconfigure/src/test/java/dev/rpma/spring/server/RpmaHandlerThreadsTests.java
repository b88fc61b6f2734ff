package dev.rpma.spring.server;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The handler threads of an endpoint over the scripted fake: started with the server rather than by
 * its first requests, and parked (using no CPU) once requests stop coming. Thread states are
 * observed; nothing is timed.
 */
class RpmaHandlerThreadsTests {

    private static final String HANDLER_THREAD = "rpma-default-handler-";

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void close() {
        this.harness.close();
        this.harness.fake.assertNoViolations();
    }

    @Test
    void handlerThreadsStartWithTheServerAndWaitParked() {
        this.harness.handlerThreads = 3;
        this.harness.start((request) -> request.reject());
        this.harness.await("three parked handler threads", () -> allParked(3));
        assertThat(this.harness.statistics().obtained()).isZero();
    }

    @Test
    void afterABurstEveryHandlerThreadParks() {
        this.harness.handlerThreads = 4;
        this.harness.queueCapacity = 64;
        Set<String> handledOn = ConcurrentHashMap.newKeySet();
        this.harness.start((request) -> {
            handledOn.add(Thread.currentThread().getName());
            request.reject();
        });
        int requests = 50;
        for (int i = 0; i < requests; i++) {
            this.harness.endpoint.queueRequest(("r" + i).getBytes(StandardCharsets.US_ASCII));
        }
        this.harness.await("every request rejected by the handler",
                () -> this.harness.statistics().rejected(RejectReason.HANDLER) == requests);
        assertThat(handledOn).allMatch((name) -> name.startsWith(HANDLER_THREAD));
        // a thread that kept polling for work would stay RUNNABLE
        this.harness.await("every handler thread to park", () -> allParked(4));
    }

    private boolean allParked(int expected) {
        List<Thread> threads = handlerThreads();
        return threads.size() == expected && threads.stream().allMatch((thread) -> thread.getState() == Thread.State.WAITING
                || thread.getState() == Thread.State.TIMED_WAITING);
    }

    private static List<Thread> handlerThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter((thread) -> thread.getName().startsWith(HANDLER_THREAD))
            .filter(Thread::isAlive)
            .toList();
    }
}

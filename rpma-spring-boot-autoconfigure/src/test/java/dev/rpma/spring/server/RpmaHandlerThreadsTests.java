package dev.rpma.spring.server;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.rpma.jna.testing.SchedulingPolicies;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The handler threads of an endpoint over the scripted fake: started with the server rather than by
 * its first requests, parked (using no CPU) once requests stop coming, and batch-scheduled unless
 * configured otherwise. Thread states and policies are observed; nothing is timed.
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
        Map<String, Boolean> handledOn = handleBurst(50, () -> true);
        assertThat(handledOn.keySet()).allMatch((name) -> name.startsWith(HANDLER_THREAD));
        // a thread that kept polling for work would stay RUNNABLE
        this.harness.await("every handler thread to park", () -> allParked(4));
    }

    @Test
    void handlerThreadsRunUnderTheBatchPolicySoThatWakingOneDoesNotPreemptTheAcceptor() {
        assertThat(handleBurst(20, SchedulingPolicies::ofCurrentThread).values())
            .containsOnly(SchedulingPolicies.SCHED_BATCH);
    }

    @Test
    void handlerThreadsKeepTheDefaultPolicyWhenBatchSchedulingIsOff() {
        this.harness.batchHandlerThreads = false;
        assertThat(handleBurst(20, SchedulingPolicies::ofCurrentThread).values())
            .containsOnly(SchedulingPolicies.SCHED_OTHER);
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void aHandlerThreadWhosePolicyCannotBeSetRunsAnywayAndTheFailureIsLoggedOnce(CapturedOutput output)
            throws InterruptedException {
        RpmaEndpointSettings settings = new RpmaEndpointSettings(RpmaEndpointSettings.DEFAULT_ENDPOINT,
                ServerHarness.ADDRESS, 7204, 8, 2, Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ZERO, 10);
        int eperm = 1;
        ThreadFactory factory = RpmaEndpointServer.handlerThreadFactory(settings, () -> eperm);
        AtomicInteger ran = new AtomicInteger();
        Thread first = factory.newThread(ran::incrementAndGet);
        Thread second = factory.newThread(ran::incrementAndGet);
        first.start();
        second.start();
        first.join();
        second.join();

        assertThat(ran).hasValue(2);
        assertThat(output.getAll().split("sched_setscheduler\\(SCHED_BATCH\\) failed with errno 1", -1)).hasSize(2);
        assertThat(output).contains("rpma.server.acceptor.handler-batch-scheduling=false");
    }

    /**
     * Starts the server with a handler that notes something of the thread it runs on and rejects, sends
     * it a burst of requests, and returns what each handler thread noted.
     */
    private <T> Map<String, T> handleBurst(int requests, Supplier<T> ofHandlerThread) {
        this.harness.queueCapacity = 64;
        Map<String, T> noted = new ConcurrentHashMap<>();
        this.harness.start((request) -> {
            noted.put(Thread.currentThread().getName(), ofHandlerThread.get());
            request.reject();
        });
        for (int i = 0; i < requests; i++) {
            this.harness.endpoint.queueRequest(("r" + i).getBytes(StandardCharsets.US_ASCII));
        }
        this.harness.await("every request rejected by the handler",
                () -> this.harness.statistics().rejected(RejectReason.HANDLER) == requests);
        assertThat(noted).isNotEmpty();
        return noted;
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

package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.rpma.binding.testing.SchedulingPolicies;

/**
 * An endpoint's handler threads: started with the server and parked while idle, parked again after
 * a burst, under {@code SCHED_BATCH} unless told otherwise, and running anyway, with one warning,
 * where the policy cannot be set.
 */
class HandlerPoolTest {

    private static final String HANDLER_THREAD = "rpma-default-handler-";

    /** Handler threads another test left running (a stop may leave a stuck one to the process's exit): not ours. */
    private final Set<Thread> others = Thread.getAllStackTraces().keySet().stream()
        .filter((thread) -> thread.getName().startsWith(HANDLER_THREAD))
        .collect(Collectors.toSet());

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void close() {
        this.harness.close();
        this.harness.fake.assertNoViolations();
    }

    @Test
    void handlerThreadsStartWithTheServerAndWaitParked() {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(8, 3, Duration.ofSeconds(5), Duration.ofMillis(50), 10,
                false, true, 256);
        this.harness.start(RpmaIncomingRequest::reject);
        this.harness.await("three parked handler threads", () -> allParked(3));
        assertThat(this.harness.statistics().obtained()).isZero();
    }

    @Test
    void afterABurstEveryHandlerThreadParks() {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(64, 4, Duration.ofSeconds(5), Duration.ofMillis(50),
                10, false, true, 256);
        Map<String, Boolean> handledOn = handleBurst(50, () -> true);
        assertThat(handledOn.keySet()).allMatch((name) -> name.startsWith(HANDLER_THREAD));
        // a thread that kept looking for work would stay RUNNABLE: the looks halve until the thread parks
        this.harness.await("every handler thread to park", () -> allParked(4));
    }

    @Test
    void handlerThreadsRunUnderTheBatchPolicySoThatWakingOneDoesNotPreemptTheAcceptor() {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(64, 2, Duration.ofSeconds(5), Duration.ofMillis(50),
                10, false, true, 256);
        assertThat(handleBurst(20, SchedulingPolicies::ofCurrentThread).values())
            .containsOnly(SchedulingPolicies.SCHED_BATCH);
    }

    @Test
    void handlerThreadsKeepTheDefaultPolicyWhenBatchSchedulingIsOff() {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(64, 2, Duration.ofSeconds(5), Duration.ofMillis(50),
                10, false, false, 256);
        assertThat(handleBurst(20, SchedulingPolicies::ofCurrentThread).values())
            .containsOnly(SchedulingPolicies.SCHED_OTHER);
    }

    @Test
    void aThreadWhosePolicyCannotBeSetRunsAnywayAndTheFailureIsLoggedOnce() throws InterruptedException {
        Logger logger = (Logger) LoggerFactory.getLogger(HandlerPool.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            int eperm = 1;
            HandlerPool pool = new HandlerPool("denied", 2, 4, 0, true, () -> eperm);
            pool.start();
            AtomicInteger ran = new AtomicInteger();
            pool.offer(ran::incrementAndGet);
            pool.offer(ran::incrementAndGet);
            this.harness.await("both ran", () -> ran.get() == 2);
            pool.shutdown();
            assertThat(pool.awaitTermination(Duration.ofSeconds(10))).isTrue();
            assertThat(appender.list).singleElement().satisfies((event) -> assertThat(event.getFormattedMessage())
                .contains("sched_setscheduler(SCHED_BATCH) failed with errno 1").contains("handler-batch-scheduling"));
        }
        finally {
            logger.detachAppender(appender);
        }
    }

    private <T> Map<String, T> handleBurst(int requests, Supplier<T> ofHandlerThread) {
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
        List<Thread> threads = Thread.getAllStackTraces().keySet().stream()
            .filter((thread) -> thread.getName().startsWith(HANDLER_THREAD) && !this.others.contains(thread))
            .filter(Thread::isAlive)
            .toList();
        return threads.size() == expected && threads.stream().allMatch((thread) -> thread.getState() == Thread.State.WAITING
                || thread.getState() == Thread.State.TIMED_WAITING);
    }
}

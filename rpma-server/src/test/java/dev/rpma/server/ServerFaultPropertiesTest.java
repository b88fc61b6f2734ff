package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterTry;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;

/**
 * Randomized faults: generated sequences of native results, connection handler behaviours and what
 * clients then do on their sessions, on a raw endpoint with message handlers. After each sequence the
 * server is stopped (some sequences stop it while handlers still decide) and the fake must show that
 * every obtained request was resolved exactly once, every connection deleted once on its loop, no
 * freed handle used, every not-thread-safe call made on the acceptor thread, every slot's memory
 * deregistered, and that the counters add up.
 */
class ServerFaultPropertiesTest {

    enum NativeResult {
        REQUEST, NO_EVENT, EAGAIN, EINTR, INVAL, PROVIDER, NOMEM
    }

    enum Behaviour {
        CONNECT, REJECT, REJECT_ELSEWHERE, THROW, NOTHING, LATE, DECIDE_AFTER_RETURN, CONNECT_FAILS,
        CONNECT_THEN_CLOSED, CONNECT_THEN_LOST, CONNECT_THEN_MESSAGES, CONNECT_THEN_OVERSIZED
    }

    record Step(NativeResult result, Behaviour behaviour) {
    }

    private ServerHarness harness;

    @AfterTry
    void close() {
        if (this.harness != null) {
            this.harness.close();
        }
    }

    @Property(tries = 400)
    void everyRequestIsResolvedExactlyOnceAndNothingLeaks(@ForAll("steps") List<Step> steps,
            @ForAll("capacity") int queueCapacity, @ForAll("capacity") int handlerThreads,
            @ForAll boolean stopWhileDeciding) {
        this.harness = new ServerHarness();
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(queueCapacity, handlerThreads, Duration.ofMillis(20),
                Duration.ofMillis(50), 1_000, false, true, 0);
        this.harness.gracePeriod = Duration.ofMillis(20);
        this.harness.messageHandlers.put("", (message, session) -> message);
        Map<String, Behaviour> behaviours = new ConcurrentHashMap<>();
        this.harness.start((request) -> act(request, behaviours.get(new String(request.privateData()))));
        FakeEndpoint endpoint = this.harness.endpoint;
        int id = 0;
        for (Step step : steps) {
            switch (step.result()) {
                case REQUEST -> {
                    String key = "r" + (id++);
                    behaviours.put(key, step.behaviour());
                    FakeRequest request = endpoint.queueRequest(key.getBytes());
                    if (step.behaviour() == Behaviour.CONNECT_FAILS) {
                        request.failConnect(RpmaError.PROVIDER.code(), Errno.ECONNRESET);
                    }
                }
                case NO_EVENT -> endpoint.queueNoEvent();
                case EAGAIN -> endpoint.queueProviderError(Errno.EAGAIN);
                case EINTR -> endpoint.queueProviderError(Errno.EINTR);
                case INVAL -> endpoint.queueUnexpectedEvent();
                case PROVIDER -> endpoint.queueProviderError(Errno.EIO);
                case NOMEM -> endpoint.queueOutOfMemory();
            }
        }
        if (!stopWhileDeciding) {
            this.harness.await("the script to drain", () -> endpoint.pending() == 0);
            this.harness.await("every request decided", () -> endpoint.obtainedRequests().stream()
                .allMatch((request) -> request.state() != FakeRequest.State.PENDING));
            for (FakeRequest request : endpoint.obtainedRequests()) {
                FakeConnection connection = request.connection();
                if (connection != null) {
                    client(connection, behaviours.get(new String(request.privateData())));
                }
            }
        }
        this.harness.stop();

        FakeLibRpma fake = this.harness.fake;
        fake.assertNoViolations();
        fake.assertAllFreed();
        for (FakeRequest request : endpoint.obtainedRequests()) {
            assertThat(request.state()).isIn(FakeRequest.State.CONNECTED, FakeRequest.State.DELETED,
                    FakeRequest.State.CONNECT_FAILED);
            assertThat(request.consumedOnThread()).isEqualTo("rpma-acceptor-default");
            if (request.connection() != null) {
                assertThat(request.connection().isDeleted()).isTrue();
                assertThat(request.connection().deletedOnThread()).isIn("rpma-loop-0", "rpma-acceptor-default");
            }
        }
        RpmaEndpointStatistics statistics = this.harness.statistics();
        assertThat(statistics.obtained()).isEqualTo(endpoint.obtainedRequests().size());
        if (!stopWhileDeciding) {
            long requests = steps.stream().filter((step) -> step.result() == NativeResult.REQUEST).count();
            assertThat(statistics.obtained()).isEqualTo(requests);
        }
        assertThat(statistics.accepted() + statistics.failedToConnect() + statistics.rejectedTotal())
            .isEqualTo(statistics.obtained());
        assertThat(statistics.accepted()).isEqualTo(endpoint.obtainedRequests().stream()
            .filter((request) -> request.state() == FakeRequest.State.CONNECTED).count());
        long ended = 0;
        for (RpmaSessionEnd.Reason reason : RpmaSessionEnd.Reason.values()) {
            ended += statistics.sessionsEnded(reason);
        }
        assertThat(ended).as("every accepted session ended once").isEqualTo(statistics.accepted());
        assertThat(this.harness.ended).hasSize((int) statistics.accepted());
        assertThat(statistics.activeConnections()).isZero();
        assertThat(this.harness.served().registry().reserved()).isZero();
        assertThat(fake.liveHandles(FakeLibRpma.Kind.MR_LOCAL)).as("the slots' memory deregistered").isEmpty();
    }

    /** What the client does on its session once it is connected. */
    private static void client(FakeConnection connection, Behaviour behaviour) {
        switch (behaviour) {
            case CONNECT_THEN_CLOSED -> connection.queueEvent(RpmaConnectionEvent.CLOSED)
                .queueEvent(RpmaConnectionEvent.CLOSED);
            case CONNECT_THEN_LOST -> connection.queueEvent(RpmaConnectionEvent.LOST);
            case CONNECT_THEN_MESSAGES -> {
                for (int i = 0; i < 5; i++) {
                    connection.deliver(ServerHarness.u64(i));
                }
            }
            case CONNECT_THEN_OVERSIZED -> connection.deliver(new byte[65]);
            default -> {
            }
        }
    }

    private static void act(RpmaIncomingRequest request, Behaviour behaviour) throws Exception {
        switch (behaviour) {
            case CONNECT, CONNECT_FAILS, CONNECT_THEN_CLOSED, CONNECT_THEN_LOST, CONNECT_THEN_MESSAGES,
                    CONNECT_THEN_OVERSIZED -> request.connect();
            case REJECT -> request.reject();
            case REJECT_ELSEWHERE -> {
                Thread other = new Thread(request::reject, "elsewhere");
                other.start();
                other.join();
            }
            case THROW -> throw new IllegalStateException("generated failure");
            case NOTHING -> {
            }
            case LATE -> {
                Thread.sleep(40);
                try {
                    request.connect();
                }
                catch (IllegalStateException expected) {
                    // the deadline passed
                }
            }
            case DECIDE_AFTER_RETURN -> new Thread(() -> {
                try {
                    Thread.sleep(5);
                    request.connect();
                }
                catch (IllegalStateException | InterruptedException expected) {
                    // the request was rejected when its handler returned undecided
                }
            }, "after-return").start();
        }
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<NativeResult> results = Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.just(NativeResult.REQUEST)),
                Tuple.of(1, Arbitraries.of(NativeResult.class)));
        Arbitrary<Behaviour> behaviours = Arbitraries.of(Behaviour.class);
        return Combinators.combine(results, behaviours).as(Step::new).list().ofMinSize(1).ofMaxSize(12);
    }

    @Provide
    Arbitrary<Integer> capacity() {
        return Arbitraries.integers().between(1, 4);
    }
}

package dev.rpma.spring.server;

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
import net.jqwik.api.lifecycle.AfterTry;

import dev.rpma.jna.Errno;
import dev.rpma.jna.RpmaConnectionEvent;
import dev.rpma.jna.RpmaError;
import dev.rpma.jna.testing.FakeConnection;
import dev.rpma.jna.testing.FakeEndpoint;
import dev.rpma.jna.testing.FakeLibRpma;
import dev.rpma.jna.testing.FakeRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Randomized faults: generated sequences of native results and handler behaviours. After each
 * sequence the server is stopped and the fake must show that every obtained request was resolved
 * exactly once, every connection deleted once, no freed handle used, every not-thread-safe call
 * made on the acceptor thread, and the counters add up.
 */
class RpmaAcceptorFaultPropertiesTests {

    enum NativeResult {
        REQUEST, NO_EVENT, EAGAIN, EINTR, INVAL, PROVIDER, NOMEM
    }

    enum Behaviour {
        CONNECT, REJECT, REJECT_ELSEWHERE, THROW, NOTHING, LATE, CONNECT_FAILS, CONNECT_THEN_CLOSED, CONNECT_THEN_LOST
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

    @Property(tries = 1000)
    void everyRequestIsResolvedExactlyOnceAndNothingLeaks(@ForAll("steps") List<Step> steps,
            @ForAll("queueCapacity") int queueCapacity, @ForAll("handlerThreads") int handlerThreads) {
        this.harness = new ServerHarness();
        this.harness.queueCapacity = queueCapacity;
        this.harness.handlerThreads = handlerThreads;
        this.harness.requestDeadline = Duration.ofMillis(20);
        this.harness.gracePeriod = Duration.ofMillis(20);
        this.harness.maxConsecutiveErrors = 1_000;
        Map<String, Behaviour> behaviours = new ConcurrentHashMap<>();
        this.harness.start((request) -> act(request, behaviours.get(new String(request.privateData())), this.harness.fake));
        FakeEndpoint endpoint = this.harness.endpoint;
        int id = 0;
        for (Step step : steps) {
            switch (step.result()) {
                case REQUEST -> {
                    String key = "r" + (id++);
                    behaviours.put(key, step.behaviour());
                    FakeRequest request = endpoint.queueRequest(key.getBytes());
                    if (step.behaviour() == Behaviour.CONNECT_FAILS) {
                        // may come too late for a fast acceptor: then it connects, which the invariants allow
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
        this.harness.await("the script to drain", () -> endpoint.pending() == 0);
        // settled without the shutdown's help: every request consumed, every closed or lost connection deleted
        this.harness.await("every request to be consumed and every ended connection deleted",
                () -> endpoint.obtainedRequests().stream().allMatch((request) -> settled(request, behaviours)));
        this.harness.stop();

        FakeLibRpma fake = this.harness.fake;
        fake.assertNoViolations();
        fake.assertAllFreed();
        for (FakeRequest request : endpoint.obtainedRequests()) {
            assertThat(request.state()).isIn(FakeRequest.State.CONNECTED, FakeRequest.State.DELETED,
                    FakeRequest.State.CONNECT_FAILED);
            if (request.state() == FakeRequest.State.DELETED) {
                assertThat(request.consumedOnThread()).isEqualTo("rpma-acceptor-default");
            }
            if (request.connection() != null) {
                assertThat(request.connection().isDeleted()).isTrue();
            }
        }
        RpmaEndpointStatistics statistics = this.harness.statistics();
        long requests = steps.stream().filter((step) -> step.result() == NativeResult.REQUEST).count();
        assertThat(statistics.obtained()).isEqualTo(requests).isEqualTo(endpoint.obtainedRequests().size());
        assertThat(statistics.accepted() + statistics.failedToConnect() + statistics.rejectedTotal())
                .isEqualTo(statistics.obtained());
        assertThat(statistics.accepted()).isEqualTo(endpoint.obtainedRequests().stream()
                .filter((request) -> request.state() == FakeRequest.State.CONNECTED).count());
        assertThat(statistics.activeConnections()).isZero();
        long errors = steps.stream().filter((step) -> step.result() == NativeResult.INVAL
                || step.result() == NativeResult.PROVIDER || step.result() == NativeResult.NOMEM
                || step.result() == NativeResult.EINTR).count();
        assertThat(statistics.errors().values().stream().mapToLong(Long::longValue).sum()
                - statistics.errors("rpma_conn_req_connect", "RPMA_E_PROVIDER")).isEqualTo(errors);
    }

    private static boolean settled(FakeRequest request, Map<String, Behaviour> behaviours) {
        if (request.state() == FakeRequest.State.PENDING || request.state() == FakeRequest.State.QUEUED) {
            return false;
        }
        Behaviour behaviour = behaviours.get(new String(request.privateData()));
        boolean ends = behaviour == Behaviour.CONNECT_THEN_CLOSED || behaviour == Behaviour.CONNECT_THEN_LOST;
        return !ends || request.connection() == null || request.connection().isDeleted();
    }

    private static void act(RpmaIncomingRequest request, Behaviour behaviour, FakeLibRpma fake) throws Exception {
        switch (behaviour) {
            case CONNECT -> request.connect();
            case CONNECT_THEN_CLOSED, CONNECT_THEN_LOST -> {
                int qp = request.connect().connection().qpNumber();
                FakeConnection connection = fake.connections().stream().filter((c) -> c.qpNumber() == qp).findFirst()
                        .orElseThrow();
                if (behaviour == Behaviour.CONNECT_THEN_LOST) {
                    connection.queueEvent(RpmaConnectionEvent.LOST);
                }
                else {
                    connection.queueEvent(RpmaConnectionEvent.CLOSED).queueEvent(RpmaConnectionEvent.CLOSED);
                }
            }
            case CONNECT_FAILS -> {
                try {
                    request.connect();
                }
                catch (RuntimeException expected) {
                    // counted as failed to connect
                }
            }
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
        }
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<NativeResult> results = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, Arbitraries.just(NativeResult.REQUEST)),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(NativeResult.class)));
        Arbitrary<Behaviour> behaviours = Arbitraries.of(Behaviour.class);
        return Combinators.combine(results, behaviours).as(Step::new).list().ofMinSize(1).ofMaxSize(12);
    }

    @Provide
    Arbitrary<Integer> queueCapacity() {
        return Arbitraries.integers().between(1, 4);
    }

    @Provide
    Arbitrary<Integer> handlerThreads() {
        return Arbitraries.integers().between(1, 3);
    }
}

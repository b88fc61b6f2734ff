package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterTry;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.binding.testing.FakeStall;

/**
 * Randomized faults: generated sequences of native results, connection handler behaviours and what
 * clients then do on their sessions, on a raw endpoint with message handlers on the loop or a pool.
 * Some behaviours hold things while the rest goes on: a connect decided on another thread while or
 * after its handler returns, a message handler that holds its session while the client closes it,
 * the acceptor blocked in a native call, another thread blocked in a native call on a connection;
 * they are let go before the stop or while it runs. After each sequence the server is stopped (some
 * sequences stop it while handlers still decide) and the fake must show that every obtained request
 * was resolved exactly once, every connection deleted once on its loop, no freed handle used, every
 * not-thread-safe call made on the acceptor thread, every slot's memory deregistered, and that the
 * counters add up.
 */
class ServerFaultPropertiesTest {

    enum NativeResult {
        REQUEST, NO_EVENT, EAGAIN, EINTR, INVAL, PROVIDER, NOMEM, EMFILE
    }

    enum Behaviour {
        CONNECT, REJECT, REJECT_ELSEWHERE, THROW, NOTHING, LATE, DECIDE_AFTER_RETURN, CONNECT_FAILS,
        CONNECT_THEN_CLOSED, CONNECT_THEN_LOST, CONNECT_THEN_MESSAGES, CONNECT_THEN_OVERSIZED,
        /** Another thread connects while the handler returns: either may come first. */
        CONNECT_ELSEWHERE_RACING_RETURN,
        /** Another thread connects; the handler returns once it did, before the acceptor carried it out. */
        CONNECT_ELSEWHERE_BEFORE_RETURN,
        /** The acceptor's {@code rpma_conn_req_connect} blocks until the holds are let go. */
        CONNECT_BLOCKS_IN_NATIVE_CALL,
        /** Its message handler holds the session while the client closes it (CLOSED twice). */
        CONNECT_THEN_HELD_WHILE_CLOSED,
        /** Another thread is blocked in a native call on the connection while the client closes it. */
        CONNECT_THEN_NATIVE_CALL_ELSEWHERE_WHILE_CLOSED
    }

    /**
     * What the client closes, and the loop deletes without waiting for the holds: a handler that holds
     * its session (on a pool), another thread's native call on the connection, the acceptor.
     */
    private static final Set<Behaviour> CLOSED_BY_CLIENT = EnumSet.of(Behaviour.CONNECT_THEN_CLOSED,
            Behaviour.CONNECT_THEN_LOST, Behaviour.CONNECT_THEN_HELD_WHILE_CLOSED);

    record Step(NativeResult result, Behaviour behaviour) {
    }

    private ServerHarness harness;

    /** Blocked connects of the acceptor, let go of before the clients act, or once the stop began. */
    private List<FakeStall> blockedConnects;

    /**
     * What the clients' behaviours hold (message handlers wait for the latch, other threads' native
     * calls for their stalls), let go of just before the stop, or once it began.
     */
    private List<Runnable> clientHolds;

    @AfterTry
    void close() {
        releaseHolds();
        if (this.harness != null) {
            this.harness.close();
        }
    }

    @Property(tries = 400)
    void everyRequestIsResolvedExactlyOnceAndNothingLeaks(@ForAll("steps") List<Step> steps,
            @ForAll("capacity") int queueCapacity, @ForAll("capacity") int handlerThreads,
            @ForAll boolean stopWhileDeciding, @ForAll boolean releaseWhileStopping,
            @ForAll RpmaMessageDispatch dispatch) throws InterruptedException {
        this.harness = new ServerHarness();
        this.blockedConnects = new CopyOnWriteArrayList<>();
        this.clientHolds = new CopyOnWriteArrayList<>();
        CountDownLatch held = new CountDownLatch(1);
        this.clientHolds.add(held::countDown);
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(queueCapacity, handlerThreads, Duration.ofMillis(20),
                Duration.ofMillis(50), 1_000, false, true, 0);
        this.harness.gracePeriod = Duration.ofMillis(20);
        this.harness.messages = this.harness.messages.withDispatch(dispatch, 2);
        Map<String, Behaviour> behaviours = new ConcurrentHashMap<>();
        this.harness.messageHandlers.put("", (message, session) -> {
            if (behaviours.get(new String(session.privateData())) == Behaviour.CONNECT_THEN_HELD_WHILE_CLOSED) {
                held.await();
            }
            return message;
        });
        this.harness.start((request) -> act(request, behaviours.get(new String(request.privateData()))));
        FakeEndpoint endpoint = this.harness.endpoint;
        int id = 0;
        for (Step step : steps) {
            switch (step.result()) {
                case REQUEST -> {
                    String key = "r" + (id++);
                    behaviours.put(key, step.behaviour());
                    if (step.behaviour() == Behaviour.CONNECT_BLOCKS_IN_NATIVE_CALL) {
                        this.blockedConnects.add(this.harness.fake.stallNext("rpma_conn_req_connect"));
                    }
                    // scripted before it is queued: the acceptor may take and connect it at once
                    endpoint.queueRequest(key.getBytes(), (request) -> {
                        if (step.behaviour() == Behaviour.CONNECT_FAILS) {
                            request.failConnect(RpmaError.PROVIDER.code(), Errno.ECONNRESET);
                        }
                    });
                }
                case NO_EVENT -> endpoint.queueNoEvent();
                case EAGAIN -> endpoint.queueProviderError(Errno.EAGAIN);
                case EINTR -> endpoint.queueProviderError(Errno.EINTR);
                case INVAL -> endpoint.queueUnexpectedEvent();
                case PROVIDER -> endpoint.queueProviderError(Errno.EIO);
                case NOMEM -> endpoint.queueOutOfMemory();
                case EMFILE -> endpoint.queueProviderError(Errno.EMFILE);
            }
        }
        if (!stopWhileDeciding) {
            if (!releaseWhileStopping) {
                // else a blocked connect holds the script until the stop has begun
                this.blockedConnects.forEach(FakeStall::release);
                this.harness.await("the script to drain", () -> endpoint.pending() == 0);
                this.harness.await("every request decided", () -> endpoint.obtainedRequests().stream()
                    .allMatch((request) -> request.state() != FakeRequest.State.PENDING));
            }
            List<FakeConnection> closed = new ArrayList<>();
            for (FakeRequest request : endpoint.obtainedRequests()) {
                FakeConnection connection = request.connection();
                if (connection != null) {
                    Behaviour behaviour = behaviours.get(new String(request.privateData()));
                    client(connection, behaviour);
                    if (CLOSED_BY_CLIENT.contains(behaviour)) {
                        closed.add(connection);
                    }
                }
            }
            boolean loopHeld = dispatch == RpmaMessageDispatch.LOOP
                    && behaviours.containsValue(Behaviour.CONNECT_THEN_HELD_WHILE_CLOSED);
            if (!loopHeld) {
                // liveness: whatever is held meanwhile, the loop deletes what its clients closed
                this.harness.await("the connections the clients closed deleted while the holds last",
                        () -> closed.stream().allMatch(FakeConnection::isDeleted));
            }
        }
        CountDownLatch stopped = new CountDownLatch(1);
        if (!releaseWhileStopping) {
            // a moment for the clients' closes to meet the holds
            Thread.sleep(2);
            releaseHolds();
        }
        this.harness.server.stop(stopped::countDown);
        if (releaseWhileStopping) {
            releaseHolds();
        }
        assertThat(stopped.await(30, TimeUnit.SECONDS)).as("the stop ended").isTrue();

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
        if (!stopWhileDeciding && !releaseWhileStopping) {
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

    /** Lets go of every held message handler and blocked native call; idempotent. */
    private void releaseHolds() {
        if (this.blockedConnects != null) {
            this.blockedConnects.forEach(FakeStall::release);
            this.clientHolds.forEach(Runnable::run);
        }
    }

    /** What the client (and the application, for the holds) does on its session once it is connected. */
    private void client(FakeConnection connection, Behaviour behaviour) {
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
            case CONNECT_THEN_HELD_WHILE_CLOSED -> {
                connection.deliver(ServerHarness.u64(7));
                connection.queueEvent(RpmaConnectionEvent.CLOSED).queueEvent(RpmaConnectionEvent.CLOSED);
            }
            case CONNECT_THEN_NATIVE_CALL_ELSEWHERE_WHILE_CLOSED -> {
                RpmaConnection native_ = connectionOf(connection);
                FakeStall stall = this.harness.fake.stallNext("rpma_conn_get_qp_num");
                this.clientHolds.add(stall::release);
                Thread blocked = new Thread(() -> {
                    try {
                        native_.qpNumber();
                    }
                    catch (IllegalStateException deleted) {
                        // the session ended before the call began
                    }
                }, "blocked-elsewhere");
                blocked.start();
                connection.queueEvent(RpmaConnectionEvent.CLOSED).queueEvent(RpmaConnectionEvent.CLOSED);
            }
            default -> {
            }
        }
    }

    /** The binding's connection of the session the fake's {@code connection} belongs to. */
    private RpmaConnection connectionOf(FakeConnection connection) {
        byte[] key = connection.request().privateData();
        ServerSession[] found = new ServerSession[1];
        this.harness.await("the session in the registry", () -> {
            found[0] = this.harness.served().registry().sessions().stream()
                .filter((session) -> Arrays.equals(session.privateData(), key)).findFirst().orElse(null);
            return found[0] != null;
        });
        return ServerHarness.connectionOf(found[0]);
    }

    private static void act(RpmaIncomingRequest request, Behaviour behaviour) throws Exception {
        switch (behaviour) {
            case CONNECT, CONNECT_FAILS, CONNECT_THEN_CLOSED, CONNECT_THEN_LOST, CONNECT_THEN_MESSAGES,
                    CONNECT_THEN_OVERSIZED, CONNECT_BLOCKS_IN_NATIVE_CALL, CONNECT_THEN_HELD_WHILE_CLOSED,
                    CONNECT_THEN_NATIVE_CALL_ELSEWHERE_WHILE_CLOSED -> request.connect();
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
            case CONNECT_ELSEWHERE_RACING_RETURN -> new Thread(() -> connectIfPending(request), "racing-return").start();
            case CONNECT_ELSEWHERE_BEFORE_RETURN -> {
                new Thread(() -> connectIfPending(request), "before-return").start();
                while (!request.isDecided()) {
                    // decided by the other thread, the deadline or the stop
                    Thread.onSpinWait();
                }
            }
        }
    }

    private static void connectIfPending(RpmaIncomingRequest request) {
        try {
            request.connect();
        }
        catch (IllegalStateException lost) {
            // decided before: the handler returned undecided, the deadline, the stop
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

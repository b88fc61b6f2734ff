package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.server.RpmaFraming;
import dev.rpma.server.RpmaWireMode;

/**
 * The client's {@link RpmaRequestObserver}: each request observed from the call on the calling thread
 * to its outcome, once, and the trace context it gives carried after the route of the request's frame,
 * to a server whose HELLO takes it and to no other.
 */
class RpmaClientTracingTest {

    private static final String TRACE_PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    private final FakeLibRpma fake = new FakeLibRpma();

    private final Observations observations = new Observations();

    private RpmaClient client;

    @AfterEach
    void everythingIsFreed() {
        if (this.client != null) {
            this.client.close();
        }
        this.fake.assertCleanAndClose();
    }

    private RpmaClientBuilder builder() {
        return ScriptedServer.clientOf(this.fake).address("198.18.0.1").port(7204).requestObserver(this.observations);
    }

    private ScriptedServer connect(boolean takesTraceContext) {
        this.fake.await(ScriptedServer.WAIT, () -> !this.fake.connections().isEmpty()
                && !this.fake.connections().get(0).sent().isEmpty());
        ScriptedServer server = new ScriptedServer(this.fake.connections().get(0));
        return takesTraceContext ? server.tracingHello() : server.hello();
    }

    @Test
    void theTraceContextFollowsTheRouteOfTheRequestToAServerThatTakesIt() throws Exception {
        this.client = builder().build();
        ScriptedServer server = connect(true);
        CompletableFuture<byte[]> reply = this.client.request("orders.create", "order 1".getBytes(StandardCharsets.UTF_8));
        ScriptedServer.Frame request = server.awaitRequests(1).get(0);
        assertThat(request.flags()).isEqualTo(RpmaFraming.TRACE_CONTEXT);
        assertThat(request.route()).isEqualTo("orders.create");
        assertThat(request.traceParent()).isEqualTo(TRACE_PARENT);
        assertThat(ScriptedServer.Frame.of(server.connection().sent().get(0)).flags())
            .as("the client's HELLO: it takes no trace context").isZero();
        server.reply(request.requestId(), new byte[] { 1 });
        reply.get(10, TimeUnit.SECONDS);

        Recorded observed = this.observations.only();
        assertThat(observed.started).isEqualTo("orders 198.18.0.1:7204 orders.create on " + Thread.currentThread().getName());
        assertThat(observed.stops).containsExactly(RpmaClientObserver.Outcome.SUCCESS);
        assertThat(observed.failure).isNull();
    }

    @Test
    void aServerWhoseHelloDoesNotTakeItGetsFramesWithoutIt() throws Exception {
        this.client = builder().build();
        ScriptedServer server = connect(false);
        CompletableFuture<Void> sent = this.client.send("audit", new byte[] { 7 });
        this.client.request("orders.create", new byte[] { 1 });
        sent.get(10, TimeUnit.SECONDS);
        server.connection().awaitSent(3, ScriptedServer.WAIT);
        List<ScriptedServer.Frame> frames = server.connection().sent().stream().map(ScriptedServer.Frame::of).toList();
        assertThat(frames).hasSize(3).allSatisfy((frame) -> {
            assertThat(frame.flags()).isZero();
            assertThat(frame.traceParent()).as("an older server's receives have no room for it").isNull();
        });
        assertThat(frames.get(1).type()).isEqualTo(RpmaFraming.MESSAGE);
        assertThat(frames.get(1).payload()).containsExactly(7);
    }

    @Test
    void anObservationWithoutATraceContextSendsNone() {
        this.observations.traceParent = null;
        this.client = builder().build();
        ScriptedServer server = connect(true);
        this.client.request("orders.create", new byte[] { 1 });
        ScriptedServer.Frame request = server.awaitRequests(1).get(0);
        assertThat(request.flags()).isZero();
        assertThat(request.traceParent()).isNull();
    }

    @Test
    void eachOutcomeStopsTheObservationOnceWithWhyItFailed() throws Exception {
        this.client = builder().build();
        ScriptedServer server = connect(true);
        CompletableFuture<byte[]> failing = this.client.request("fail", new byte[1]);
        server.error(server.awaitRequests(1).get(0).requestId(), "handler failed: IllegalStateException");
        assertThatThrownBy(() -> failing.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(RpmaRemoteErrorException.class);
        CompletableFuture<byte[]> late = this.client.request("slow", new byte[1],
                RpmaRequestOptions.DEFAULT.withTimeout(Duration.ofMillis(20)));
        assertThatThrownBy(() -> late.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(RpmaRequestTimeoutException.class);
        server.reply(server.awaitRequests(2).get(1).requestId(), new byte[1]);

        assertThat(this.observations.all).hasSize(2);
        Recorded remoteError = this.observations.all.get(0);
        assertThat(remoteError.stops).containsExactly(RpmaClientObserver.Outcome.REMOTE_ERROR);
        assertThat(remoteError.failure).isInstanceOf(RpmaRemoteErrorException.class);
        Recorded timedOut = this.observations.all.get(1);
        this.fake.await(ScriptedServer.WAIT, () -> server.connection().undelivered() == 0);
        assertThat(timedOut.stops).as("the late reply stops nothing again").containsExactly(RpmaClientObserver.Outcome.TIMEOUT);
        assertThat(timedOut.failure).isInstanceOf(RpmaRequestTimeoutException.class);
    }

    @Test
    void aRequestThatFailsAtOnceIsStoppedOnTheCallingThread() {
        this.fake.establishOnConnect(false);
        this.client = builder().backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)).build();
        this.fake.await(ScriptedServer.WAIT, () -> this.fake.connections().size() == 1);
        FakeConnection connection = this.fake.lastConnection();
        connection.queueEvent(RpmaConnectionEvent.REJECTED);
        this.fake.await(ScriptedServer.WAIT, () -> this.client.connectionStates()
            .get(RpmaClientConnectionState.BACKING_OFF) == 1);
        assertThatThrownBy(() -> this.client.request("a", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaConnectRejectedException.class);
        Recorded observed = this.observations.only();
        assertThat(observed.stops).containsExactly(RpmaClientObserver.Outcome.REJECTED);
        assertThat(observed.stoppedOn).isEqualTo(Thread.currentThread().getName());
    }

    @Test
    void rawExchangesAreObservedWithAnEmptyRouteAndCarryNoTraceContext() throws Exception {
        this.client = builder().mode(RpmaWireMode.RAW).build();
        this.fake.await(ScriptedServer.WAIT, () -> this.fake.connections().size() == 1);
        FakeConnection connection = this.fake.lastConnection();
        CompletableFuture<byte[]> answer = this.client.exchange(new byte[] { 1, 2 });
        connection.awaitSent(1, ScriptedServer.WAIT);
        assertThat(connection.sent().get(0)).containsExactly(1, 2);
        connection.deliver(new byte[] { 3 });
        assertThat(answer.get(10, TimeUnit.SECONDS)).containsExactly(3);
        assertThat(this.observations.only().started).startsWith("orders 198.18.0.1:7204  on ");
    }

    /** An observer that gives {@link #traceParent} to every request and records what happens to each. */
    static final class Observations implements RpmaRequestObserver {

        final List<Recorded> all = new CopyOnWriteArrayList<>();

        volatile @Nullable String traceParent = TRACE_PARENT;

        @Override
        public Recorded start(String client, String server, String route) {
            Recorded observed = new Recorded(client + " " + server + " " + route + " on " + Thread.currentThread().getName(),
                    this.traceParent);
            this.all.add(observed);
            return observed;
        }

        Recorded only() {
            assertThat(this.all).hasSize(1);
            return this.all.get(0);
        }
    }

    static final class Recorded implements RpmaRequestObserver.Observed {

        final String started;

        private final byte @Nullable [] traceParent;

        final List<RpmaClientObserver.Outcome> stops = new CopyOnWriteArrayList<>();

        volatile @Nullable Throwable failure;

        volatile @Nullable String stoppedOn;

        Recorded(String started, @Nullable String traceParent) {
            this.started = started;
            this.traceParent = (traceParent != null) ? traceParent.getBytes(StandardCharsets.US_ASCII) : null;
        }

        @Override
        public byte @Nullable [] traceParent() {
            return this.traceParent;
        }

        @Override
        public void stop(RpmaClientObserver.Outcome outcome, @Nullable Throwable failure) {
            this.failure = failure;
            this.stoppedOn = Thread.currentThread().getName();
            this.stops.add(outcome);
        }
    }
}

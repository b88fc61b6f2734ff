package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.Errno;
import dev.rpma.binding.FlushType;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.PostedOperation;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaFraming;
import dev.rpma.server.RpmaWireMode;

/**
 * The client over the scripted fake, the server played by the test ({@link ScriptedServer}): connect,
 * request and reply, correlation under reordering, the failures (reject, unreachable, timeout with
 * the late reply dropped, loss with requests in flight), the pool's replacement of a lost connection
 * on its back-off schedule, raw exchanges, one-sided operations, and that everything is freed.
 */
class RpmaClientTest {

    private static final Duration WAIT = ScriptedServer.WAIT;

    private final FakeLibRpma fake = new FakeLibRpma();

    private final Recorder recorder = new Recorder();

    private RpmaClient client;

    @AfterEach
    void everythingIsFreed() {
        if (this.client != null) {
            this.client.close();
        }
        this.fake.assertCleanAndClose();
    }

    private RpmaClientBuilder builder() {
        return ScriptedServer.clientOf(this.fake).address("198.18.0.1").port(7204).observer(this.recorder);
    }

    private ScriptedServer connect(int index) {
        await("connection " + index, () -> this.fake.connections().size() > index);
        FakeConnection connection = this.fake.connections().get(index);
        await("the client's HELLO", () -> !connection.sent().isEmpty());
        ScriptedServer.Frame hello = ScriptedServer.Frame.of(connection.sent().get(0));
        assertThat(hello.type()).isEqualTo(RpmaFraming.HELLO);
        assertThat(hello.credits()).as("4 receives, one assumed by the server").isEqualTo(3);
        return new ScriptedServer(connection).hello();
    }

    @Test
    void aRequestGoesOutWithItsRouteAndItsReplyCompletesTheFuture() throws Exception {
        this.client = builder().privateData("hi".getBytes(StandardCharsets.US_ASCII)).build();
        ScriptedServer server = connect(0);
        assertThat(server.connection().request().connectPrivateData()).asString().isEqualTo("hi");
        CompletableFuture<String> reply = this.client.request("orders.create", "order 1", String.class);
        ScriptedServer.Frame request = server.awaitRequests(1).get(0);
        assertThat(request.route()).isEqualTo("orders.create");
        assertThat(new String(request.payload(), StandardCharsets.UTF_8)).isEqualTo("order 1");
        server.reply(request.requestId(), "created 1".getBytes(StandardCharsets.UTF_8));
        assertThat(reply.get(10, TimeUnit.SECONDS)).isEqualTo("created 1");
        assertThat(this.client.inFlight()).isZero();
        assertThat(this.recorder.outcomes).containsExactly(RpmaClientObserver.Outcome.SUCCESS);
        assertThat(this.recorder.requests).containsExactly("198.18.0.1:7204 orders.create");
    }

    @Test
    void repliesInAnotherOrderFindTheirRequests() throws Exception {
        this.client = builder().build();
        ScriptedServer server = connect(0);
        List<CompletableFuture<byte[]>> replies = List.of(this.client.request("a", new byte[] { 1 }),
                this.client.request("a", new byte[] { 2 }), this.client.request("a", new byte[] { 3 }));
        List<ScriptedServer.Frame> requests = server.awaitRequests(3);
        assertThat(requests).extracting(ScriptedServer.Frame::requestId).doesNotHaveDuplicates();
        for (int i = 2; i >= 0; i--) {
            ScriptedServer.Frame request = requests.get(i);
            server.reply(request.requestId(), new byte[] { (byte) (request.payload()[0] * 10) });
        }
        assertThat(replies.get(0).get(10, TimeUnit.SECONDS)).containsExactly(10);
        assertThat(replies.get(1).get(10, TimeUnit.SECONDS)).containsExactly(20);
        assertThat(replies.get(2).get(10, TimeUnit.SECONDS)).containsExactly(30);
    }

    @Test
    void anErrorFrameFailsOnlyItsRequest() throws Exception {
        this.client = builder().build();
        ScriptedServer server = connect(0);
        CompletableFuture<byte[]> failing = this.client.request("fail", new byte[1]);
        ScriptedServer.Frame request = server.awaitRequests(1).get(0);
        server.error(request.requestId(), "handler failed: IllegalStateException");
        assertThatThrownBy(() -> failing.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(RpmaRemoteErrorException.class)
            .hasMessageContaining("route \"fail\"").hasMessageContaining("IllegalStateException");
        CompletableFuture<byte[]> next = this.client.request("echo", new byte[] { 7 });
        server.reply(server.awaitRequests(2).get(1).requestId(), new byte[] { 7 });
        assertThat(next.get(10, TimeUnit.SECONDS)).containsExactly(7);
    }

    @Test
    void aRejectedConnectionFailsTheRequestsWaitingForItAndSaysTheServerMayBeOverloaded() {
        this.fake.establishOnConnect(false);
        this.client = builder().backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)).build();
        await("the connection request", () -> this.fake.connections().size() == 1);
        CompletableFuture<byte[]> waiting = this.client.request("a", new byte[1]);
        this.fake.lastConnection().queueEvent(RpmaConnectionEvent.REJECTED);
        assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaConnectRejectedException.class).hasMessageContaining("198.18.0.1:7204")
            .hasMessageContaining("overloaded").hasMessageContaining("paused");
        await("the rejected connection deleted", () -> this.fake.lastConnection().isDeleted());
        assertThatThrownBy(() -> this.client.request("a", new byte[1]).get(10, TimeUnit.SECONDS))
            .as("while it backs off, a request fails at once with why").cause()
            .isInstanceOf(RpmaConnectRejectedException.class);
        assertThat(this.recorder.outcomes).containsOnly(RpmaClientObserver.Outcome.REJECTED);
    }

    @Test
    void anUnreachableServerIsReportedWithLibrpmasFunctionAndCode() {
        this.fake.failNext("rpma_conn_req_new", RpmaError.PROVIDER.code(), Errno.EIO);
        this.client = builder().backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)).build();
        await("the failed attempt", () -> this.client.connections().get(0).state() == RpmaClientConnectionState.BACKING_OFF);
        assertThatThrownBy(() -> this.client.request("a", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaServerUnreachableException.class).hasMessageContaining("rpma_conn_req_new")
            .satisfies((ex) -> {
                RpmaClientException failure = (RpmaClientException) ex;
                assertThat(failure.function()).isEqualTo("rpma_conn_req_new");
                assertThat(failure.error()).isEqualTo(RpmaError.PROVIDER);
            });
        assertThat(this.fake.connections()).isEmpty();
    }

    @Test
    void anUnreachableEventFailsTheWaitingRequests() {
        this.fake.establishOnConnect(false);
        this.client = builder().backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)).build();
        await("the connection request", () -> this.fake.connections().size() == 1);
        CompletableFuture<byte[]> waiting = this.client.request("a", new byte[1]);
        this.fake.lastConnection().queueEvent(RpmaConnectionEvent.UNREACHABLE);
        assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaServerUnreachableException.class).hasMessageContaining("RPMA_CONN_UNREACHABLE");
    }

    @Test
    void aTimedOutRequestFailsAndItsLateReplyIsDropped() throws Exception {
        this.client = builder().build();
        ScriptedServer server = connect(0);
        CompletableFuture<byte[]> slow = this.client.request("slow", new byte[1],
                RpmaRequestOptions.DEFAULT.withTimeout(Duration.ofMillis(50)));
        ScriptedServer.Frame request = server.awaitRequests(1).get(0);
        assertThatThrownBy(() -> slow.get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaRequestTimeoutException.class).hasMessageContaining("route \"slow\"");
        server.reply(request.requestId(), new byte[] { 1 });
        await("the late reply dropped", () -> this.recorder.lateReplies.get() == 1);
        CompletableFuture<byte[]> next = this.client.request("fast", new byte[1]);
        server.reply(server.awaitRequests(2).get(1).requestId(), new byte[] { 2 });
        assertThat(next.get(10, TimeUnit.SECONDS)).as("the connection goes on").containsExactly(2);
        assertThat(this.client.inFlight()).isZero();
    }

    @Test
    void aLostConnectionFailsItsRequestsInFlightResendsOnlyTheIdempotentOneAndIsReplaced() throws Exception {
        this.client = builder().build();
        ScriptedServer first = connect(0);
        CompletableFuture<byte[]> plain = this.client.request("create", new byte[] { 1 });
        CompletableFuture<byte[]> other = this.client.request("create", new byte[] { 2 });
        byte[] get = { 3 };
        CompletableFuture<byte[]> idempotent = this.client.request("get", get, RpmaRequestOptions.idempotentRequest());
        // the caller's array is its own again once the call returns
        get[0] = 99;
        first.awaitRequests(3);
        first.connection().peerDisconnects();
        assertThatThrownBy(() -> plain.get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaConnectionLostException.class).hasMessageContaining("RPMA_CONN_CLOSED");
        assertThatThrownBy(() -> other.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(RpmaConnectionLostException.class);
        assertThat(first.connection().awaitDeleted(WAIT)).isTrue();

        ScriptedServer second = connect(1);
        List<ScriptedServer.Frame> resent = second.awaitRequests(1);
        assertThat(resent).singleElement().satisfies((frame) -> {
            assertThat(frame.route()).isEqualTo("get");
            assertThat(frame.payload()).containsExactly(3);
        });
        second.reply(resent.get(0).requestId(), new byte[] { 33 });
        assertThat(idempotent.get(10, TimeUnit.SECONDS)).containsExactly(33);
        Thread.sleep(20);
        assertThat(second.requests()).as("the others are never sent again").hasSize(1);
        assertThat(this.client.reconnects()).isEqualTo(1);
        assertThat(this.recorder.outcomes).containsExactlyInAnyOrder(RpmaClientObserver.Outcome.LOST,
                RpmaClientObserver.Outcome.LOST, RpmaClientObserver.Outcome.SUCCESS);
    }

    @Test
    void anIdempotentRequestPostedInAReplysCallbackIsSentAgainWithWhatItsArrayHeldAtTheCall() throws Exception {
        this.client = builder().build();
        ScriptedServer first = connect(0);
        byte[] get = { 3 };
        CompletableFuture<CompletableFuture<byte[]>> made = new CompletableFuture<>();
        CompletableFuture<Integer> sentWhenTheCallReturned = new CompletableFuture<>();
        this.client.request("create", new byte[] { 1 }).whenComplete((reply, failure) -> {
            made.complete(this.client.request("get", get, RpmaRequestOptions.idempotentRequest()));
            sentWhenTheCallReturned.complete(first.requests().size());
            get[0] = 99;
        });
        first.reply(first.awaitRequests(1).get(0).requestId(), new byte[] { 2 });
        CompletableFuture<byte[]> idempotent = made.get(10, TimeUnit.SECONDS);
        assertThat(sentWhenTheCallReturned.get(10, TimeUnit.SECONDS)).as("posted within request()").isEqualTo(2);
        assertThat(first.awaitRequests(2).get(1).payload()).containsExactly(3);
        first.connection().peerDisconnects();
        ScriptedServer second = connect(1);
        List<ScriptedServer.Frame> resent = second.awaitRequests(1);
        assertThat(resent).singleElement().satisfies((frame) -> {
            assertThat(frame.route()).isEqualTo("get");
            assertThat(frame.payload()).as("its own copy, not the array the caller changed").containsExactly(3);
        });
        second.reply(resent.get(0).requestId(), new byte[] { 33 });
        assertThat(idempotent.get(10, TimeUnit.SECONDS)).containsExactly(33);
    }

    @Test
    void aRequestParkedForTheNextConnectionTimesOutWithinItsTimeoutWhileTheBackOffRuns() throws Exception {
        this.client = builder().backoff(Duration.ofSeconds(30), 2.0, Duration.ofSeconds(30)).build();
        ScriptedServer first = connect(0);
        CompletableFuture<byte[]> parked = this.client.request("get", new byte[] { 1 },
                RpmaRequestOptions.idempotentRequest().withTimeout(Duration.ofSeconds(1)));
        first.awaitRequests(1);
        first.connection().peerDisconnects();
        await("backing off", () -> this.client.connectionStates().get(RpmaClientConnectionState.BACKING_OFF) == 1);
        assertThat(parked).as("parked, not timed out while in flight").isNotDone();
        assertThatThrownBy(() -> parked.get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaRequestTimeoutException.class).hasMessageContaining("route \"get\"");
        assertThat(this.client.connectionStates()).as("the back-off still runs")
            .containsEntry(RpmaClientConnectionState.BACKING_OFF, 1);
        assertThat(this.client.inFlight()).isZero();
        assertThat(this.recorder.outcomes).containsExactly(RpmaClientObserver.Outcome.TIMEOUT);
    }

    @Test
    void aRequestWaitingForItsConnectionTimesOutAtItsOwnTimeout() {
        this.fake.establishOnConnect(false);
        this.client = builder().build();
        await("the connection request", () -> this.fake.connections().size() == 1);
        CompletableFuture<byte[]> waiting = this.client.request("a", new byte[1],
                RpmaRequestOptions.DEFAULT.withTimeout(Duration.ofMillis(100)));
        assertThatThrownBy(() -> waiting.get(3, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaRequestTimeoutException.class).hasMessageContaining("route \"a\"");
        assertThat(this.client.inFlight()).isZero();
    }

    @Test
    void aTimedOutRawExchangeKeepsItsPlaceSoThatItsLateAnswerIsDroppedAndNotTakenForTheNext() throws Exception {
        this.client = builder().mode(RpmaWireMode.RAW).requestTimeout(Duration.ofMillis(300)).build();
        await("the connection", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        FakeConnection connection = this.fake.lastConnection();
        CompletableFuture<byte[]> first = this.client.exchange(new byte[] { 41 });
        assertThatThrownBy(() -> first.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(RpmaRequestTimeoutException.class);
        CompletableFuture<byte[]> second = this.client.exchange(new byte[] { 43 });
        Thread.sleep(20);
        assertThat(connection.sent()).as("the first's answer still holds the raw window of one").hasSize(1);
        connection.deliver(new byte[] { 42 });
        await("the second message", () -> connection.sent().size() == 2);
        connection.deliver(new byte[] { 44 });
        assertThat(second.get(10, TimeUnit.SECONDS)).containsExactly(44);
        assertThat(this.recorder.lateReplies).hasValue(1);
    }

    @Test
    void aOneWayMessageWhosePostFailsGoesToAnotherConnection() throws Exception {
        this.client = builder().poolSize(2).build();
        ScriptedServer a = connect(0);
        ScriptedServer b = connect(1);
        await("both established", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 2);
        this.fake.failNext("rpma_send", RpmaError.PROVIDER);
        CompletableFuture<Void> posted = this.client.send("note", new byte[] { 7 });
        posted.get(10, TimeUnit.SECONDS);
        await("the message on the other connection", () -> messages(a) + messages(b) == 1);
        await("nothing held", () -> this.client.inFlight() == 0);
        await("the connection whose post failed replaced", () -> this.client.reconnects() > 0);
    }

    private static long messages(ScriptedServer server) {
        return server.connection().sent().stream().map(ScriptedServer.Frame::of)
            .filter((frame) -> frame.type() == RpmaFraming.MESSAGE && frame.route().equals("note")).count();
    }

    @Test
    void failedAttemptsBackOffExponentiallyUpToTheMaximumThenTheConnectionIsMade() throws Exception {
        for (int i = 0; i < 4; i++) {
            this.fake.failNext("rpma_conn_req_new", RpmaError.PROVIDER.code(), Errno.EIO);
        }
        this.client = builder().build();
        ScriptedServer server = connect(0);
        assertThat(this.recorder.delays).containsExactly(Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(4),
                Duration.ofMillis(4));
        assertThat(this.recorder.attempts).containsExactly(1, 2, 3, 4);
        assertThat(this.client.reconnects()).isEqualTo(4);
        await("established", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);

        server.connection().peerDisconnects();
        ScriptedServer replaced = connect(1);
        assertThat(this.recorder.delays).as("an established connection starts the schedule again").last()
            .isEqualTo(Duration.ofMillis(1));
        CompletableFuture<byte[]> reply = this.client.request("a", new byte[1]);
        replaced.reply(replaced.awaitRequests(1).get(0).requestId(), new byte[] { 5 });
        assertThat(reply.get(10, TimeUnit.SECONDS)).containsExactly(5);
    }

    @Test
    void requestsSpreadOverThePoolByLeastInFlight() {
        this.client = builder().poolSize(2).build();
        ScriptedServer a = connect(0);
        ScriptedServer b = connect(1);
        await("both established", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 2);
        for (int i = 0; i < 6; i++) {
            this.client.request("a", new byte[] { (byte) i });
        }
        await("six requests sent", () -> a.requests().size() + b.requests().size() == 6);
        assertThat(a.requests()).hasSize(3);
        assertThat(b.requests()).hasSize(3);
    }

    @Test
    void aRawClientExchangesWholeMessages() throws Exception {
        this.client = builder().mode(RpmaWireMode.RAW).build();
        await("the connection", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        FakeConnection connection = this.fake.lastConnection();
        CompletableFuture<byte[]> first = this.client.exchange(ByteBuffer.allocate(8).putLong(0, 41).array());
        byte[] secondPayload = ByteBuffer.allocate(8).putLong(0, 43).array();
        CompletableFuture<byte[]> second = this.client.exchange(secondPayload);
        ByteBuffer.wrap(secondPayload).putLong(0, -1);
        await("the first message", () -> connection.sent().size() == 1);
        assertThat(connection.sent().get(0)).hasSize(8);
        Thread.sleep(20);
        assertThat(connection.sent()).as("a raw window of one: the second waits for the first's answer").hasSize(1);
        connection.deliver(ByteBuffer.allocate(8).putLong(0, 42).array());
        assertThat(ByteBuffer.wrap(first.get(10, TimeUnit.SECONDS)).getLong()).isEqualTo(42);
        await("the second message", () -> connection.sent().size() == 2);
        assertThat(ByteBuffer.wrap(connection.sent().get(1)).getLong()).as("what the call was given").isEqualTo(43);
        connection.deliver(ByteBuffer.allocate(8).putLong(0, 44).array());
        assertThat(ByteBuffer.wrap(second.get(10, TimeUnit.SECONDS)).getLong()).isEqualTo(44);
        assertThatThrownBy(() -> this.client.request("a", new byte[1])).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aRequestMadeInAReplysCallbackIsSentInTheCallBeforeTheReplysReceiveIsPostedAgain() throws Exception {
        // 4 receives and a raw window of 1: the other receives take the answer to what the callback sends
        this.client = builder().mode(RpmaWireMode.RAW).build();
        await("the connection", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        FakeConnection connection = this.fake.lastConnection();
        CompletableFuture<Integer> sentWhenTheCallReturned = new CompletableFuture<>();
        CompletableFuture<Long> repostsBeforeTheCallbackEnded = new CompletableFuture<>();
        CompletableFuture<byte[]> next = new CompletableFuture<>();
        byte[] reused = { 3 };
        this.client.exchange(new byte[] { 1 }).whenComplete((reply, failure) -> {
            long before = receives(connection);
            this.client.exchange(reused).whenComplete((r, f) -> next.complete(r));
            sentWhenTheCallReturned.complete(connection.sent().size());
            reused[0] = 9;
            repostsBeforeTheCallbackEnded.complete(receives(connection) - before);
        });
        await("the first message", () -> connection.sent().size() == 1);
        long before = receives(connection);
        connection.deliver(new byte[] { 2 });
        assertThat(sentWhenTheCallReturned.get(10, TimeUnit.SECONDS)).as("posted within exchange()").isEqualTo(2);
        assertThat(repostsBeforeTheCallbackEnded.get(10, TimeUnit.SECONDS)).as("no repost before the callback ended")
            .isZero();
        assertThat(connection.sent().get(1)).as("copied into its slot in the call, before the caller reused its array")
            .containsExactly(3);
        await("the reply's receive back", () -> receives(connection) == before + 1);
        List<String> order = connection.posted().stream().map(PostedOperation::function).toList();
        assertThat(order.subList(order.size() - 2, order.size())).as("the callback's send, then the repost")
            .containsExactly("rpma_send", "rpma_recv");
        connection.deliver(new byte[] { 4 });
        assertThat(next.get(10, TimeUnit.SECONDS)).containsExactly(4);
    }

    @Test
    void withoutASpareReceiveWhatAReplysCallbackSendsFollowsTheRepostWithACopyOfItsArray() throws Exception {
        // as many receives as exchanges may wait: the answer to the callback's message needs the reply's receive
        this.client = builder().mode(RpmaWireMode.RAW).receiveSlots(2).rawWindow(2).build();
        await("the connection", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        FakeConnection connection = this.fake.lastConnection();
        CompletableFuture<Integer> sentWhenTheCallReturned = new CompletableFuture<>();
        CompletableFuture<byte[]> next = new CompletableFuture<>();
        byte[] reused = { 3 };
        this.client.exchange(new byte[] { 1 }).whenComplete((reply, failure) -> {
            this.client.exchange(reused).whenComplete((r, f) -> next.complete(r));
            sentWhenTheCallReturned.complete(connection.sent().size());
            reused[0] = 9;
        });
        await("the first message", () -> connection.sent().size() == 1);
        connection.deliver(new byte[] { 2 });
        assertThat(sentWhenTheCallReturned.get(10, TimeUnit.SECONDS)).as("not posted within exchange()").isEqualTo(1);
        await("the second message", () -> connection.sent().size() == 2);
        assertThat(connection.sent().get(1)).as("its own copy of the caller's array").containsExactly(3);
        List<String> order = connection.posted().stream().map(PostedOperation::function).toList();
        assertThat(order.subList(order.size() - 2, order.size())).as("the receive back before the callback's send")
            .containsExactly("rpma_recv", "rpma_send");
        connection.deliver(new byte[] { 4 });
        assertThat(next.get(10, TimeUnit.SECONDS)).containsExactly(4);
    }

    @Test
    void aRequestThatWaitsBehindTheRawWindowSendsWhatItsArrayHeldWhenItWasMade() throws Exception {
        this.client = builder().mode(RpmaWireMode.RAW).build();
        await("the connection", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        FakeConnection connection = this.fake.lastConnection();
        List<CompletableFuture<byte[]>> made = new CopyOnWriteArrayList<>();
        CompletableFuture<Integer> sentWhenTheCallsReturned = new CompletableFuture<>();
        byte[] reused = { 3 };
        this.client.exchange(new byte[] { 1 }).whenComplete((reply, failure) -> {
            made.add(this.client.exchange(reused));
            reused[0] = 5;
            made.add(this.client.exchange(reused));
            reused[0] = 9;
            sentWhenTheCallsReturned.complete(connection.sent().size());
        });
        await("the first message", () -> connection.sent().size() == 1);
        connection.deliver(new byte[] { 2 });
        assertThat(sentWhenTheCallsReturned.get(10, TimeUnit.SECONDS)).as("the second in the call, the third waits")
            .isEqualTo(2);
        connection.deliver(new byte[] { 4 });
        assertThat(made.get(0).get(10, TimeUnit.SECONDS)).containsExactly(4);
        await("the third message", () -> connection.sent().size() == 3);
        assertThat(connection.sent().subList(1, 3)).as("each what the array held at its call")
            .containsExactly(new byte[] { 3 }, new byte[] { 5 });
        connection.deliver(new byte[] { 6 });
        assertThat(made.get(1).get(10, TimeUnit.SECONDS)).containsExactly(6);
    }

    @Test
    void anExchangeMadeWhenAMessagePostedInTheCallIsDoneGoesOutWithoutWaitingForAnotherEvent() throws Exception {
        this.client = builder().mode(RpmaWireMode.RAW).build();
        await("the connection", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        FakeConnection connection = this.fake.lastConnection();
        CompletableFuture<byte[]> last = new CompletableFuture<>();
        this.client.exchange(new byte[] { 1 }).whenComplete((reply, failure) -> this.client.send(new byte[] { 3 })
            .whenComplete((posted, notPosted) -> this.client.exchange(new byte[] { 5 })
                .whenComplete((r, f) -> last.complete(r))));
        await("the first message", () -> connection.sent().size() == 1);
        connection.deliver(new byte[] { 2 });
        await("the message and the exchange its completion made", () -> connection.sent().size() == 3);
        assertThat(connection.sent().subList(1, 3)).containsExactly(new byte[] { 3 }, new byte[] { 5 });
        connection.deliver(new byte[] { 6 });
        assertThat(last.get(10, TimeUnit.SECONDS)).containsExactly(6);
    }

    @Test
    void requestsMadeInACallbackOnTheLoopAreCountedAtOnceAndReleasedWhenAnswered() throws Exception {
        this.client = builder().mode(RpmaWireMode.RAW).build();
        await("the connection", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        FakeConnection connection = this.fake.lastConnection();
        List<CompletableFuture<byte[]>> made = new CopyOnWriteArrayList<>();
        CompletableFuture<Integer> countedInCallback = new CompletableFuture<>();
        this.client.exchange(new byte[] { 1 }).whenComplete((reply, failure) -> {
            made.add(this.client.exchange(new byte[] { 3 }));
            made.add(this.client.exchange(new byte[] { 5 }));
            countedInCallback.complete(this.client.inFlight());
        });
        await("the first message", () -> connection.sent().size() == 1);
        connection.deliver(new byte[] { 2 });
        assertThat(countedInCallback.get(10, TimeUnit.SECONDS)).as("the answered one no longer, both new ones at once")
            .isEqualTo(2);
        await("the second message", () -> connection.sent().size() == 2);
        connection.deliver(new byte[] { 4 });
        assertThat(made.get(0).get(10, TimeUnit.SECONDS)).containsExactly(4);
        await("one left", () -> this.client.inFlight() == 1);
        await("the third message", () -> connection.sent().size() == 3);
        connection.deliver(new byte[] { 6 });
        assertThat(made.get(1).get(10, TimeUnit.SECONDS)).containsExactly(6);
        await("none left", () -> this.client.inFlight() == 0);
        assertThat(this.client.connections().get(0).inFlight()).isZero();
    }

    private static long receives(FakeConnection connection) {
        return connection.posted().stream().filter((op) -> op.function().equals("rpma_recv")).count();
    }

    @Test
    void oneSidedOperationsUseTheRegionOfTheAcceptsCommonDataAndCompleteOnTheirCompletions() throws Exception {
        this.fake.establishOnConnect(false);
        RpmaPeer serverPeer = Rpma.using(this.fake).openPeer("198.18.0.1", PeerRole.SERVER);
        ByteBuffer serverMemory = ByteBuffer.allocateDirect(64);
        // flushable to visibility: librpma's rpma_flush refuses a region without that usage (RPMA_E_NOSUPP)
        try (serverPeer; RpmaMemoryRegion exposed = serverPeer.register(serverMemory, MemoryUsage.READ_SRC,
                MemoryUsage.WRITE_DST, MemoryUsage.FLUSH_TYPE_VISIBILITY)) {
            this.client = builder().mode(RpmaWireMode.RAW).build();
            await("the connection request", () -> this.fake.connections().size() == 1);
            FakeConnection connection = this.fake.lastConnection();
            connection.privateData(RpmaCommonData.of(exposed.descriptor()).encode());
            connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
            await("established", () -> this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
            RpmaClientConnection pooled = this.client.connection();
            assertThat(pooled.commonData()).isNotNull();

            ByteBuffer local = ByteBuffer.allocateDirect(64);
            RpmaPeer clientPeer = Rpma.using(this.fake).openPeer("198.18.0.1", PeerRole.CLIENT);
            try (clientPeer; RpmaMemoryRegion mine = clientPeer.register(local, MemoryUsage.READ_DST,
                    MemoryUsage.WRITE_SRC)) {
                CompletableFuture<Void> read = pooled.read(mine, 0, 8, 16);
                CompletableFuture<Void> flush = pooled.flush(0, 64, FlushType.VISIBILITY);
                await("both posted", () -> connection.posted().stream()
                    .filter((op) -> !op.function().equals("rpma_recv")).count() == 2);
                List<PostedOperation> posted = connection.posted().stream()
                    .filter((op) -> op.function().startsWith("rpma_read") || op.function().equals("rpma_flush")).toList();
                assertThat(posted).extracting(PostedOperation::function).containsExactly("rpma_read", "rpma_flush");
                assertThat(read).isNotDone();
                for (PostedOperation op : posted) {
                    connection.completionQueue().queueSuccess(op.context(), 2, 0);
                }
                read.get(10, TimeUnit.SECONDS);
                flush.get(10, TimeUnit.SECONDS);
                assertThat(pooled.inFlight()).isZero();
                this.client.close();
            }
        }
    }

    @Test
    void theConnectionListenerHearsTheAcceptOfAConnectionTheServerEndsAtOnceAndWhyItEnded() throws Exception {
        this.fake.establishOnConnect(false);
        RpmaPeer serverPeer = Rpma.using(this.fake).openPeer("198.18.0.1", PeerRole.SERVER);
        try (serverPeer; RpmaMemoryRegion exposed = serverPeer.register(ByteBuffer.allocateDirect(48),
                MemoryUsage.READ_SRC)) {
            byte[] accept = RpmaCommonData.of(exposed.descriptor()).encode();
            List<String> heard = new CopyOnWriteArrayList<>();
            List<RpmaClientException> ends = new CopyOnWriteArrayList<>();
            this.client = builder().mode(RpmaWireMode.RAW).backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1))
                .connectionListener(new RpmaClientConnectionListener() {

                    @Override
                    public void established(RpmaClientConnection connection) {
                        heard.add(java.util.Arrays.equals(connection.privateData(), accept) + " "
                                + (connection.commonData() != null) + " " + connection.remoteRegionSize());
                    }

                    @Override
                    public void ended(RpmaClientConnection connection, RpmaClientException why) {
                        heard.add(connection.privateData().length + " " + connection.remoteRegionSize());
                        ends.add(why);
                    }
                })
                .build();
            await("the connection request", () -> this.fake.connections().size() == 1);
            FakeConnection connection = this.fake.lastConnection();
            connection.privateData(accept);
            // example 01's server: it disconnects as soon as the connection is established
            connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
            connection.queueEvent(RpmaConnectionEvent.CLOSED);
            await("the end", () -> ends.size() == 1);
            assertThat(heard).containsExactly("true true 48", "0 0");
            assertThat(ends.get(0)).isInstanceOf(RpmaConnectionLostException.class).hasMessageContaining("RPMA_CONN_CLOSED");
            assertThat(this.client.connectionStates()).containsEntry(RpmaClientConnectionState.BACKING_OFF, 1);
            this.client.close();
        }
    }

    @Test
    void theConnectionListenerHearsARejectionAndNothingWhenTheClientCloses() {
        this.fake.establishOnConnect(false);
        List<RpmaClientException> ends = new CopyOnWriteArrayList<>();
        AtomicInteger established = new AtomicInteger();
        this.client = builder().connectionListener(new RpmaClientConnectionListener() {

            @Override
            public void established(RpmaClientConnection connection) {
                established.incrementAndGet();
            }

            @Override
            public void ended(RpmaClientConnection connection, RpmaClientException why) {
                ends.add(why);
            }
        }).build();
        await("the connection request", () -> this.fake.connections().size() == 1);
        this.fake.lastConnection().queueEvent(RpmaConnectionEvent.REJECTED);
        await("the rejection", () -> ends.size() == 1);
        assertThat(ends.get(0)).isInstanceOf(RpmaConnectRejectedException.class);
        await("the next attempt", () -> this.fake.connections().size() == 2);
        this.fake.lastConnection().queueEvent(RpmaConnectionEvent.ESTABLISHED);
        await("established", () -> established.get() == 1);
        this.client.close();
        assertThat(ends).as("a client that closes tells nothing").hasSize(1);
    }

    @Test
    void closeFailsWhatIsPendingAndFreesEverythingOnce() {
        this.client = builder().poolSize(2).build();
        ScriptedServer server = connect(0);
        connect(1);
        CompletableFuture<byte[]> pending = this.client.request("a", new byte[1]);
        await("sent", () -> this.client.inFlight() == 1);
        this.client.close();
        this.client.close();
        assertThatThrownBy(() -> pending.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(RpmaClientClosedException.class);
        assertThat(server.connection().disconnects()).isEqualTo(1);
        assertThatThrownBy(() -> this.client.request("a", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaClientClosedException.class);
        assertThat(this.client.connectionStates()).containsEntry(RpmaClientConnectionState.CLOSED, 2);
    }

    @Test
    void aBlockingRequestThrowsHowItFailed() {
        this.fake.establishOnConnect(false);
        this.client = builder().build();
        await("the connection request", () -> this.fake.connections().size() == 1);
        assertThatThrownBy(() -> this.client.requestBlocking("a", new byte[1], Duration.ofMillis(30)))
            .isInstanceOf(RpmaRequestTimeoutException.class);
    }

    private void await(String what, BooleanSupplier condition) {
        if (!this.fake.await(WAIT, condition)) {
            throw new AssertionError("Waited " + WAIT + " for " + what);
        }
    }

    /** Records what the client reports. */
    static final class Recorder implements RpmaClientObserver {

        final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

        /** {@code server route} of each request that ended. */
        final List<String> requests = new CopyOnWriteArrayList<>();

        final List<Duration> delays = new CopyOnWriteArrayList<>();

        final List<Integer> attempts = new CopyOnWriteArrayList<>();

        final AtomicInteger lateReplies = new AtomicInteger();

        @Override
        public void requestCompleted(String client, String server, String route, Outcome outcome, long nanos) {
            this.outcomes.add(outcome);
            this.requests.add(server + " " + route);
        }

        @Override
        public void reconnectScheduled(String client, int attempt, Duration delay) {
            this.attempts.add(attempt);
            this.delays.add(delay);
        }

        @Override
        public void lateReplyDropped(String client) {
            this.lateReplies.incrementAndGet();
        }
    }
}

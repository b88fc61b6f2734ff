package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.FlushType;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaMessageDispatch;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaRegionDefinition;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.RpmaSessionEnd;

/**
 * The client's behaviour through its public API against the real server over one
 * {@link FakeLibRpma#loopback()}, where {@link RpmaClientTest} plays the server by script: routing,
 * remote errors, credits under load, timeouts with a slow server, a lost connection, a rejected one,
 * one-sided access to an exposed region, server-initiated messages. Each test ends with librpma's
 * rules kept and everything freed on both sides.
 */
class RpmaClientLoopbackTest {

    private static final int PORT = 7400;

    private static final Duration WAIT = LoopbackServer.WAIT;

    private static final int IBV_WC_RETRY_EXC_ERR = 12;

    private final FakeLibRpma fake = FakeLibRpma.loopback();

    private final RpmaClientTest.Recorder recorder = new RpmaClientTest.Recorder();

    private final List<AutoCloseable> open = new ArrayList<>();

    private LoopbackServer server;

    @AfterEach
    void everythingIsFreed() throws Exception {
        for (int i = this.open.size() - 1; i >= 0; i--) {
            this.open.get(i).close();
        }
        if (this.server != null) {
            this.server.close();
        }
        this.fake.assertNoViolations();
        this.fake.assertAllFreed();
        this.fake.close();
    }

    private <T extends AutoCloseable> T open(T closeable) {
        this.open.add(closeable);
        return closeable;
    }

    private LoopbackServer serve(RpmaEndpointSettings.Messages messages, RpmaRequestHandler handler,
            Map<String, RpmaMessageListener> listeners, RpmaRegionDefinition... regions) {
        this.server = LoopbackServer.start(this.fake, PORT, 1, messages, handler, listeners, List.of(regions));
        return this.server;
    }

    private LoopbackServer serve(Map<String, RpmaMessageListener> listeners) {
        return serve(RpmaEndpointSettings.Messages.DEFAULTS, RpmaIncomingRequest::connect, listeners);
    }

    private RpmaClient client(RpmaClientBuilder builder) {
        return open(builder.observer(this.recorder).build());
    }

    private RpmaClientBuilder builder() {
        return this.server.client("loopback");
    }

    private static String text(ByteBuffer message) {
        return StandardCharsets.UTF_8.decode(message).toString();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** The server's side of the client's newest connection. */
    private FakeConnection serverSide() {
        List<FakeConnection> connections = this.fake.connections();
        for (int i = connections.size() - 1; i >= 0; i--) {
            if (connections.get(i).request().isServerSide()) {
                return connections.get(i);
            }
        }
        throw new AssertionError("No connection was accepted");
    }

    @Test
    void requestsReachTheHandlerOfTheirRouteAndPrivateDataTravelsBothWays() throws Exception {
        RpmaRequestHandler handler = (request) -> {
            request.attributes().put("tenant", new String(request.privateData(), StandardCharsets.US_ASCII));
            request.connect(bytes("welcome"));
        };
        serve(RpmaEndpointSettings.Messages.DEFAULTS, handler, Map.of(
                "upper", (message, session) -> bytes(text(message).toUpperCase(java.util.Locale.ROOT) + " for "
                        + session.attributes().get("tenant")),
                "length", (message, session) -> session.newMessage().putInt(message.remaining()).flip()));
        RpmaClient client = client(builder().privateData(bytes("acme")));
        assertThat(client.request("upper", "order 1", String.class).get(10, TimeUnit.SECONDS))
            .isEqualTo("ORDER 1 for acme");
        byte[] length = client.request("length", new byte[42]).get(10, TimeUnit.SECONDS);
        assertThat(ByteBuffer.wrap(length).order(ByteOrder.LITTLE_ENDIAN).getInt()).isEqualTo(42);
        assertThat(client.connection().privateData()).asString(StandardCharsets.UTF_8).isEqualTo("welcome");
        assertThat(client.connection().commonData()).as("no struct common_data in it").isNull();
        assertThat(this.recorder.outcomes).containsOnly(RpmaClientObserver.Outcome.SUCCESS).hasSize(2);
    }

    @Test
    void aHandlerThatThrowsAndARouteWithoutHandlerAnswerWithRemoteErrorsAndTheConnectionGoesOn() throws Exception {
        LoopbackServer server = serve(Map.of("fail", (message, session) -> {
            throw new IllegalStateException("out of stock");
        }, "echo", (message, session) -> message, "huge", (message, session) -> new byte[5000]));
        RpmaClient client = client(builder());
        assertThatThrownBy(() -> client.request("fail", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOfSatisfying(RpmaRemoteErrorException.class, (ex) -> {
                assertThat(ex).hasMessageContaining("route \"fail\"");
                assertThat(ex.remoteMessage()).as("the type, never the message, which may quote the client's bytes")
                    .isEqualTo("handler failed: IllegalStateException");
            });
        assertThatThrownBy(() -> client.request("nowhere", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOfSatisfying(RpmaRemoteErrorException.class,
                    (ex) -> assertThat(ex.remoteMessage()).isEqualTo("no handler for route \"nowhere\""));
        assertThatThrownBy(() -> client.request("huge", new byte[1]).get(10, TimeUnit.SECONDS))
            .as("a reply larger than max-message-size").cause()
            .isInstanceOfSatisfying(RpmaRemoteErrorException.class,
                    (ex) -> assertThat(ex.remoteMessage()).isEqualTo("handler failed: IllegalArgumentException"));
        assertThat(client.request("echo", bytes("still here")).get(10, TimeUnit.SECONDS)).asString(StandardCharsets.UTF_8)
            .isEqualTo("still here");
        assertThat(server.statistics().handlerFailures()).isEqualTo(2);
        assertThat(client.reconnects()).isZero();
        assertThat(this.recorder.outcomes).containsExactly(RpmaClientObserver.Outcome.REMOTE_ERROR,
                RpmaClientObserver.Outcome.REMOTE_ERROR, RpmaClientObserver.Outcome.REMOTE_ERROR,
                RpmaClientObserver.Outcome.SUCCESS);
    }

    @Test
    void underLoadNeitherSideEverSendsWithoutAReceivePostedOnTheOther() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger handled = new AtomicInteger();
        RpmaEndpointSettings.Messages messages = RpmaEndpointSettings.Messages.DEFAULTS
            .withSlots(RpmaEndpointSettings.Messages.MIN_FRAMED_RECEIVE_SLOTS, 2)
            .withDispatch(RpmaMessageDispatch.POOL, 1);
        LoopbackServer server = serve(messages, RpmaIncomingRequest::connect, Map.of("hold", (message, session) -> {
            handled.incrementAndGet();
            release.await();
            return message;
        }, "echo", (message, session) -> message));
        RpmaClient client = client(builder().receiveSlots(3).sendSlots(2));
        client.request("echo", new byte[1]).get(10, TimeUnit.SECONDS);
        // the loopback holds a send without a receive on the other side (receiver not ready) instead of
        // failing it: with the framing's credits, none may ever wait there
        FakeConnection serverSide = serverSide();
        FakeConnection clientSide = serverSide.peer();
        AtomicBoolean loaded = new AtomicBoolean(true);
        AtomicInteger overruns = new AtomicInteger();
        Thread watcher = new Thread(() -> {
            while (loaded.get()) {
                if (clientSide.sendsWaitingForPeer() > 0 || serverSide.sendsWaitingForPeer() > 0) {
                    overruns.incrementAndGet();
                }
                Thread.onSpinWait();
            }
        });
        watcher.start();
        List<CompletableFuture<byte[]>> replies = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            replies.add(client.request("hold", new byte[] { (byte) i }));
        }
        server.await("the handler holding the first request", () -> handled.get() == 1);
        assertThat(client.inFlight()).isEqualTo(200);
        assertThat(server.statistics().messagesReceived()).as("the first request, and no more than the"
                + " credits of 3 receives allow").isLessThanOrEqualTo(1 + 3);
        release.countDown();
        for (int i = 0; i < replies.size(); i++) {
            assertThat(replies.get(i).get(10, TimeUnit.SECONDS)).containsExactly((byte) i);
        }
        loaded.set(false);
        watcher.join();
        assertThat(overruns).as("samples with a send waiting for a receive").hasValue(0);
        assertThat(handled).hasValue(200);
    }

    @Test
    void aFramedClientNeedsThreeReceiveSlotsSinceWithTwoTheCreditsCanStall() {
        serve(Map.of("echo", (message, session) -> message));
        // with 2, the load above stalls for good: the server holds one credit and needs two for a reply,
        // the client has one receive to grant and grants two at a time
        assertThatThrownBy(() -> builder().receiveSlots(2).build()).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("receive-slots must be at least 3 in FRAMED mode");
        client(builder().mode(dev.rpma.server.RpmaWireMode.RAW).receiveSlots(2)).close();
    }

    @Test
    void aSlowServerTimesTheRequestOutItsLateReplyIsDroppedAndTheConnectionGoesOn() throws Exception {
        serve(Map.of("echo", (message, session) -> message));
        RpmaClient client = client(builder());
        assertThat(client.request("echo", new byte[] { 1 }).get(10, TimeUnit.SECONDS)).containsExactly(1);
        FakeConnection serverSide = serverSide().delay(Duration.ofMillis(300));
        CompletableFuture<byte[]> slow = client.request("echo", new byte[] { 2 },
                RpmaRequestOptions.DEFAULT.withTimeout(Duration.ofMillis(50)));
        assertThatThrownBy(() -> slow.get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaRequestTimeoutException.class).hasMessageContaining("route \"echo\"");
        this.server.await("the late reply dropped", () -> this.recorder.lateReplies.get() == 1);
        serverSide.delay(Duration.ZERO);
        assertThat(client.request("echo", new byte[] { 3 }).get(10, TimeUnit.SECONDS)).containsExactly(3);
        assertThat(client.reconnects()).isZero();
        assertThat(this.recorder.outcomes).containsExactly(RpmaClientObserver.Outcome.SUCCESS,
                RpmaClientObserver.Outcome.TIMEOUT, RpmaClientObserver.Outcome.SUCCESS);
    }

    @Test
    void aLostConnectionFailsTheRequestsInFlightResendsTheIdempotentOneAndThePoolConnectsAgain() throws Exception {
        CountDownLatch holding = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger handled = new AtomicInteger();
        LoopbackServer server = serve(RpmaEndpointSettings.Messages.DEFAULTS.withDispatch(RpmaMessageDispatch.POOL, 1),
                RpmaIncomingRequest::connect, Map.of("create", (message, session) -> {
                    holding.countDown();
                    release.await();
                    return message;
                }, "get", (message, session) -> {
                    handled.incrementAndGet();
                    return new byte[] { (byte) (message.get(0) * 11) };
                }));
        RpmaClient client = client(builder().backoff(Duration.ofMillis(1), 2.0, Duration.ofMillis(4)));
        CompletableFuture<byte[]> first = client.request("create", new byte[] { 1 });
        server.await("the first request held by its handler", () -> holding.getCount() == 1);
        CompletableFuture<byte[]> second = client.request("create", new byte[] { 2 });
        CompletableFuture<byte[]> idempotent = client.request("get", new byte[] { 3 },
                RpmaRequestOptions.idempotentRequest());
        server.await("all three received", () -> server.statistics().messagesReceived() >= 3);
        serverSide().lose();
        release.countDown();
        assertThatThrownBy(() -> first.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(RpmaConnectionLostException.class);
        assertThatThrownBy(() -> second.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(RpmaConnectionLostException.class);
        assertThat(idempotent.get(10, TimeUnit.SECONDS)).as("sent again on the next connection").containsExactly(33);
        assertThat(client.reconnects()).isEqualTo(1);
        server.await("the server counted the loss",
                () -> server.statistics().sessionsEnded(RpmaSessionEnd.Reason.LOST) == 1);
        assertThat(client.request("create", new byte[] { 4 }).get(10, TimeUnit.SECONDS)).containsExactly(4);
        assertThat(server.server.endpoint(LoopbackServer.ENDPOINT).activeConnections()).isOne();
    }

    @Test
    void aFailedCompletionOfTheClientsSendFailsTheRequestAsLostAndThePoolConnectsAgain() throws Exception {
        serve(Map.of("echo", (message, session) -> message));
        RpmaClient client = client(builder().backoff(Duration.ofMillis(1), 2.0, Duration.ofMillis(4)));
        assertThat(client.request("echo", new byte[] { 1 }).get(10, TimeUnit.SECONDS)).containsExactly(1);
        serverSide().peer().failNextCompletion(IBV_WC_RETRY_EXC_ERR);
        assertThatThrownBy(() -> client.request("echo", new byte[] { 2 }).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaConnectionLostException.class);
        this.server.await("connected again",
                () -> client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        assertThat(client.request("echo", new byte[] { 3 }).get(10, TimeUnit.SECONDS)).containsExactly(3);
        assertThat(client.reconnects()).isEqualTo(1);
    }

    @Test
    void aConnectionTheServerRejectsFailsTheWaitingRequestAndTheNextAttemptIsAccepted() throws Exception {
        AtomicInteger decided = new AtomicInteger();
        serve(RpmaEndpointSettings.Messages.DEFAULTS, (request) -> {
            if (decided.getAndIncrement() == 0) {
                request.reject();
            }
            else {
                request.connect();
            }
        }, Map.of("echo", (message, session) -> message));
        RpmaClient client = client(builder().backoff(Duration.ofMillis(200), 2.0, Duration.ofMillis(200)));
        assertThatThrownBy(() -> client.request("echo", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaConnectRejectedException.class).hasMessageContaining("192.0.2.1:" + PORT);
        this.server.await("accepted at the next attempt",
                () -> client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        assertThat(client.request("echo", new byte[] { 9 }).get(10, TimeUnit.SECONDS)).containsExactly(9);
        assertThat(this.server.statistics().rejectedTotal()).isOne();
    }

    @Test
    void aConnectionRejectedOrUnreachableOnTheWayFailsTheRequestAsSuch() {
        LoopbackServer server = serve(Map.of("echo", (message, session) -> message));
        this.fake.rejectNext(PORT);
        RpmaClient rejected = client(builder().name("rejected").backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)));
        assertThatThrownBy(() -> rejected.request("echo", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaConnectRejectedException.class);
        this.fake.unreachableNext(PORT);
        RpmaClient unreachable = client(builder().name("unreachable").backoff(Duration.ofHours(1), 2.0,
                Duration.ofHours(1)));
        assertThatThrownBy(() -> unreachable.request("echo", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaServerUnreachableException.class).hasMessageContaining("RPMA_CONN_UNREACHABLE");
        assertThat(server.statistics().obtained()).as("neither request reached the server").isZero();
    }

    @Test
    void aClientOfAPortNobodyListensOnIsRejected() {
        serve(Map.of("echo", (message, session) -> message));
        RpmaClient client = client(RpmaClient.builder(this.server.rpma).address(LoopbackServer.ADDRESS).port(PORT + 1)
            .backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)));
        assertThatThrownBy(() -> client.request("echo", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaConnectRejectedException.class);
    }

    @Test
    void oneSidedOperationsReadWriteAndFlushTheRegionTheServerExposes() throws Exception {
        ByteBuffer exposed = ByteBuffer.allocateDirect(64);
        exposed.put(0, bytes("catalog v1"));
        RpmaRegionDefinition region = new RpmaRegionDefinition("data", exposed,
                EnumSet.of(MemoryUsage.READ_SRC, MemoryUsage.WRITE_DST, MemoryUsage.FLUSH_TYPE_VISIBILITY), Set.of());
        serve(RpmaEndpointSettings.Messages.DEFAULTS, (request) -> request.connect(request.commonData("data").encode()),
                Map.of("echo", (message, session) -> message), region);
        RpmaClient client = client(builder());
        this.server.await("established", () -> client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        RpmaClientConnection connection = client.connection();
        assertThat(connection.commonData()).isNotNull();
        ByteBuffer buffer = ByteBuffer.allocateDirect(64);
        try (RpmaMemoryRegion local = client.register(buffer, MemoryUsage.READ_DST, MemoryUsage.WRITE_SRC)) {
            connection.read(local, 8, 0, 10).get(10, TimeUnit.SECONDS);
            byte[] read = new byte[10];
            buffer.get(8, read);
            assertThat(read).asString(StandardCharsets.UTF_8).isEqualTo("catalog v1");

            buffer.put(32, bytes("written"));
            connection.write(16, local, 32, 7).get(10, TimeUnit.SECONDS);
            connection.atomicWrite(24, 0x0102030405060708L).get(10, TimeUnit.SECONDS);
            connection.flush(16, 16, FlushType.VISIBILITY).get(10, TimeUnit.SECONDS);
            byte[] written = new byte[7];
            exposed.get(16, written);
            assertThat(written).asString(StandardCharsets.UTF_8).isEqualTo("written");
            assertThat(exposed.order(ByteOrder.LITTLE_ENDIAN).getLong(24)).isEqualTo(0x0102030405060708L);
            assertThat(connection.inFlight()).isZero();
            assertThat(client.request("echo", new byte[] { 5 }).get(10, TimeUnit.SECONDS))
                .as("messages and one-sided operations share the connection").containsExactly(5);
        }
    }

    @Test
    void aRegionOfAnotherPeerIsRefusedByTheDeviceAndEndsTheConnection() throws Exception {
        RpmaRegionDefinition region = RpmaRegionDefinition.readOnly("data", ByteBuffer.allocateDirect(64));
        serve(RpmaEndpointSettings.Messages.DEFAULTS, (request) -> request.connect(request.commonData("data").encode()),
                Map.of(), region);
        // raw: an endpoint without message handlers sends no HELLO
        RpmaClient client = client(builder().mode(dev.rpma.server.RpmaWireMode.RAW)
            .backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)));
        this.server.await("established", () -> client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        RpmaPeer otherPeer = this.server.rpma.openPeer(LoopbackServer.ADDRESS, PeerRole.CLIENT);
        try (otherPeer; RpmaMemoryRegion foreign = otherPeer.register(ByteBuffer.allocateDirect(64), MemoryUsage.READ_DST)) {
            assertThatThrownBy(() -> client.connection().read(foreign, 0, 0, 8).get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOf(RpmaConnectionLostException.class)
                .hasMessageContaining("rpma_read completed with IBV_WC_LOC_PROT_ERR (4): the local region is not registered"
                        + " with the client's peer");
            this.server.await("the connection ended",
                    () -> client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 0);
        }
    }

    @Test
    void theFlushTypeFollowsThePeerConfigurationTheAcceptCarries() throws Exception {
        RpmaRegionDefinition region = new RpmaRegionDefinition("data", ByteBuffer.allocateDirect(64),
                EnumSet.of(MemoryUsage.WRITE_DST, MemoryUsage.FLUSH_TYPE_VISIBILITY), Set.of());
        byte[] declaresDirectWrite = { 1 };
        serve(RpmaEndpointSettings.Messages.DEFAULTS, (request) -> {
            RpmaCommonData common = request.commonData("data");
            byte[] peerConfig = new String(request.privateData(), StandardCharsets.US_ASCII).equals("pmem")
                    ? declaresDirectWrite : new byte[0];
            request.connect(new RpmaCommonData(common.dataOffset(), common.memoryRegionDescriptor(), peerConfig).encode());
        }, Map.of(), region);
        RpmaClient plain = client(builder().name("plain").mode(dev.rpma.server.RpmaWireMode.RAW));
        RpmaClient pmem = client(builder().name("pmem").mode(dev.rpma.server.RpmaWireMode.RAW)
            .privateData("pmem".getBytes(StandardCharsets.US_ASCII)));
        this.server.await("established", () -> plain.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1
                && pmem.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        assertThat(plain.connection().flushType()).as("without a peer configuration").isEqualTo(FlushType.VISIBILITY);
        assertThat(pmem.connection().flushType()).as("direct write to PMem declared and applied")
            .isEqualTo(FlushType.PERSISTENT);
        plain.connection().flush(0, 8, plain.connection().flushType()).get(10, TimeUnit.SECONDS);
    }

    @Test
    void writingARegionTheServerExposesForReadingFailsWithTheRemoteAccessErrorNamed() throws Exception {
        ByteBuffer exposed = ByteBuffer.allocateDirect(64);
        RpmaRegionDefinition region = RpmaRegionDefinition.readOnly("data", exposed);
        serve(RpmaEndpointSettings.Messages.DEFAULTS, (request) -> request.connect(request.commonData("data").encode()),
                Map.of(), region);
        RpmaClient client = client(builder().mode(dev.rpma.server.RpmaWireMode.RAW)
            .backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)));
        this.server.await("established", () -> client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        ByteBuffer buffer = ByteBuffer.allocateDirect(8).put(0, bytes("intruder"));
        try (RpmaMemoryRegion local = client.register(buffer, MemoryUsage.WRITE_SRC)) {
            assertThatThrownBy(() -> client.connection().write(0, local, 0, 8).get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOf(RpmaConnectionLostException.class)
                .hasMessageContaining("rpma_write completed with IBV_WC_REM_ACCESS_ERR (10): the server's region does not"
                        + " allow this operation");
        }
        assertThat(exposed.getLong(0)).as("the region the write was refused").isZero();
    }

    @Test
    void theServersOwnMessagesReachTheClientsListenerInOrder() throws Exception {
        List<String> received = new java.util.concurrent.CopyOnWriteArrayList<>();
        serve(Map.of("subscribe", (message, session) -> {
            for (int i = 0; i < 20; i++) {
                session.send(bytes("event " + i));
            }
            return bytes("subscribed");
        }));
        RpmaClient client = client(builder().receiveSlots(3)
            .messageListener((message, connection) -> received.add(new String(message, StandardCharsets.UTF_8))));
        assertThat(client.request("subscribe", new byte[1]).get(10, TimeUnit.SECONDS)).asString(StandardCharsets.UTF_8)
            .isEqualTo("subscribed");
        this.server.await("every event", () -> received.size() == 20);
        assertThat(received).containsExactlyElementsOf(java.util.stream.IntStream.range(0, 20)
            .mapToObj((i) -> "event " + i).toList());
    }

    @Test
    void aSessionTheServerClosesIsReplacedByThePool() throws Exception {
        serve(Map.of("bye", (message, session) -> {
            session.close();
            return null;
        }, "echo", (message, session) -> message));
        RpmaClient client = client(builder().backoff(Duration.ofMillis(1), 2.0, Duration.ofMillis(4)));
        assertThat(client.request("echo", new byte[] { 1 }).get(10, TimeUnit.SECONDS)).containsExactly(1);
        assertThatThrownBy(() -> client.request("bye", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaConnectionLostException.class);
        this.server.await("connected again", () -> client.reconnects() == 1
                && client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 1);
        assertThat(client.request("echo", new byte[] { 2 }).get(10, TimeUnit.SECONDS)).containsExactly(2);
        assertThat(this.server.statistics().sessionsEnded(RpmaSessionEnd.Reason.CLOSED_BY_SERVER)).isOne();
    }

    @Test
    void requestsSpreadOverThePooledConnectionsAndEachSessionServesItsShare() throws Exception {
        LoopbackServer server = serve(Map.of("where", (message, session) -> ByteBuffer.allocate(8)
            .order(ByteOrder.LITTLE_ENDIAN).putLong(0, session.id())));
        RpmaClient client = client(builder().poolSize(3));
        server.await("three established", () -> client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 3);
        List<CompletableFuture<byte[]>> replies = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            replies.add(client.request("where", new byte[1]));
        }
        Set<Long> sessions = new java.util.HashSet<>();
        for (CompletableFuture<byte[]> reply : replies) {
            sessions.add(ByteBuffer.wrap(reply.get(10, TimeUnit.SECONDS)).order(ByteOrder.LITTLE_ENDIAN).getLong());
        }
        assertThat(sessions).hasSize(3);
        assertThat(server.server.endpoint(LoopbackServer.ENDPOINT).sessions())
            .allSatisfy((session) -> assertThat(session.messagesSent()).isPositive());
    }

    @Test
    void closingTheClientFailsWhatItWaitsForAndTheServerSeesItsSessionsClosed() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        LoopbackServer server = serve(RpmaEndpointSettings.Messages.DEFAULTS.withDispatch(RpmaMessageDispatch.POOL, 1),
                RpmaIncomingRequest::connect, Map.of("hold", (message, session) -> {
                    release.await();
                    return message;
                }));
        RpmaClient client = builder().poolSize(2).build();
        // a connection still connecting is deleted at once, and its session then ends by a flushed receive
        // or by CLOSED, whichever the server's loop sees first: this test is about established ones
        server.await("both established",
                () -> client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 2);
        CompletableFuture<byte[]> pending = client.request("hold", new byte[1]);
        server.await("the request held by its handler", () -> server.statistics().messagesReceived() >= 1);
        client.close();
        release.countDown();
        assertThatThrownBy(() -> pending.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(RpmaClientClosedException.class);
        server.await("both sessions ended", () -> server.statistics().sessionsEnded(RpmaSessionEnd.Reason.CLOSED) == 2);
    }
}

package dev.rpma.server;

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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeStall;

/**
 * A session's reads of its client's memory ({@link RpmaSession#read}) over the loopback fake, in the
 * shape of librpma's example 03-read-to-persistent: the client registers a {@code struct hello_t}
 * (a 4-byte {@code enum lang_t}, then 1024 bytes of string) with READ_SRC and connects with
 * {@code struct common_data} describing it; the server reads the string into its region. The
 * loopback copies the bytes and checks both regions' usages as a device does.
 */
class SessionReadTest {

    private static final String ADDRESS = "192.0.2.1";

    private static final int PORT = 7211;

    private static final int OTHER_PORT = 7212;

    private static final Duration WAIT = ServerHarness.WAIT;

    private static final int HELLO_STR_OFFSET = 4;

    private static final int HELLO_STR_SIZE = 1024;

    private final FakeLibRpma fake = FakeLibRpma.loopback();

    private final Rpma rpma = Rpma.using(this.fake);

    /** The server's region the reads land in. */
    private final ByteBuffer log = ByteBuffer.allocateDirect(4096);

    private final List<RpmaSession> established = new CopyOnWriteArrayList<>();

    private final List<RpmaSessionEnd> ended = new CopyOnWriteArrayList<>();

    /** Run on the session's loop when it is established. */
    private volatile Consumer<RpmaSession> onEstablished = (session) -> {
    };

    private RpmaServer server;

    private final List<AutoCloseable> clients = new ArrayList<>();

    @AfterEach
    void everythingNativeIsFreedOnce() throws Exception {
        for (int i = this.clients.size() - 1; i >= 0; i--) {
            this.clients.get(i).close();
        }
        if (this.server != null) {
            this.server.close();
        }
        this.fake.assertNoViolations();
        this.fake.assertAllFreed();
        this.fake.close();
    }

    /**
     * A server with endpoint {@code default} on {@link #PORT} (and {@code other} on {@link #OTHER_PORT}),
     * regions {@code log} (WRITE_DST, endpoint {@code default}), {@code greeting} (READ_SRC) and
     * {@code elsewhere} (WRITE_DST, endpoint {@code other}); requests connected as they come.
     *
     * @param room queue places beyond what the data path needs, or {@code null} for librpma's defaults;
     *     an endpoint without message handlers always has librpma's
     */
    private void start(Map<String, RpmaMessageListener> handlers, @Nullable Integer room) {
        RpmaEndpointSettings.Messages raw = RpmaEndpointSettings.Messages.DEFAULTS.withMode(RpmaWireMode.RAW)
            .withMaxMessageSize(64);
        RpmaEndpointSettings endpoint = new RpmaEndpointSettings(RpmaEndpointSettings.DEFAULT_ENDPOINT, ADDRESS, PORT)
            .withMessages(raw);
        RpmaEndpointSettings other = new RpmaEndpointSettings("other", ADDRESS, OTHER_PORT);
        List<RpmaRegionDefinition> regions = List.of(
                new RpmaRegionDefinition("log", this.log, EnumSet.of(MemoryUsage.WRITE_DST, MemoryUsage.READ_SRC),
                        Set.of(RpmaEndpointSettings.DEFAULT_ENDPOINT)),
                RpmaRegionDefinition.readOnly("greeting", ByteBuffer.allocateDirect(64)),
                new RpmaRegionDefinition("elsewhere", ByteBuffer.allocateDirect(64), EnumSet.of(MemoryUsage.WRITE_DST),
                        Set.of("other")));
        RpmaServerSettings settings = RpmaServerSettings.of(List.of(endpoint, other))
            .withEventLoops(1, Duration.ZERO)
            .withGracePeriod(Duration.ZERO)
            .withRegions(regions);
        this.server = RpmaServer.listen(this.rpma, settings, new RpmaServer.Components() {

            @Override
            public RpmaRequestHandler handler(String name) {
                return RpmaIncomingRequest::connect;
            }

            @Override
            public Map<String, RpmaMessageListener> messageListeners(String name) {
                return name.equals(RpmaEndpointSettings.DEFAULT_ENDPOINT) ? handlers : Map.of();
            }

            @Override
            public @Nullable RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings settings,
                    RpmaQueueSizes needed) {
                if (room == null || !needed.isNeeded()) {
                    return null;
                }
                return rpma.newConnectionConfig().cqSize(needed.cq() + room).sqSize(needed.sq() + room)
                    .rqSize(needed.rq());
            }

            @Override
            public List<RpmaSessionListener> sessionListeners(String name) {
                return List.of(new RpmaSessionListener() {

                    @Override
                    public void sessionEstablished(RpmaSession session) {
                        SessionReadTest.this.established.add(session);
                        SessionReadTest.this.onEstablished.accept(session);
                    }

                    @Override
                    public void sessionEnded(RpmaSession session, RpmaSessionEnd end) {
                        SessionReadTest.this.ended.add(end);
                    }
                });
            }
        });
        this.server.start();
    }

    private void start() {
        start(Map.of(), null);
    }

    /** Example 03's client: its hello_t registered with {@code usages}, described in its connect's private data. */
    private final class Client implements AutoCloseable {

        final ByteBuffer hello = ByteBuffer.allocateDirect(HELLO_STR_OFFSET + HELLO_STR_SIZE)
            .order(ByteOrder.LITTLE_ENDIAN);

        final RpmaPeer peer;

        final RpmaMemoryRegion region;

        final RpmaConnection connection;

        Client(int port, String text, MemoryUsage... usages) {
            this.hello.putInt(0, 0x0A0B0C0D);
            this.hello.put(HELLO_STR_OFFSET, text.getBytes(StandardCharsets.US_ASCII));
            this.peer = SessionReadTest.this.rpma.openPeer("192.0.2.2", PeerRole.CLIENT);
            this.region = this.peer.register(this.hello, usages);
            RpmaConnectionRequest request = this.peer.newConnectionRequest(ADDRESS, port, null);
            try {
                this.connection = request.connect(
                        new RpmaCommonData(HELLO_STR_OFFSET, this.region.descriptor(), new byte[0]).encode());
            }
            finally {
                request.close();
            }
            this.connection.configureEventsBlocking(false);
            SessionReadTest.this.clients.add(this);
            assertThat(nextEvent()).isEqualTo(RpmaConnectionEvent.ESTABLISHED);
        }

        RpmaConnectionEvent nextEvent() {
            RpmaConnectionEvent[] event = new RpmaConnectionEvent[1];
            await("a connection event", () -> (event[0] = this.connection.nextEvent()) != null);
            return event[0];
        }

        byte[] string() {
            byte[] bytes = new byte[HELLO_STR_SIZE];
            this.hello.get(HELLO_STR_OFFSET, bytes);
            return bytes;
        }

        @Override
        public void close() {
            this.connection.close();
            this.region.close();
            this.peer.close();
        }
    }

    private Client connect(String text, MemoryUsage... usages) {
        return new Client(PORT, text, usages);
    }

    private RpmaSession awaitSession(int count) {
        await("session " + count + " established", () -> this.established.size() >= count);
        return this.established.get(count - 1);
    }

    private void await(String what, BooleanSupplier condition) {
        if (!this.fake.await(WAIT, condition)) {
            throw new AssertionError("Waited " + WAIT + " for " + what);
        }
    }

    private byte[] logBytes(int offset, int length) {
        byte[] bytes = new byte[length];
        this.log.get(offset, bytes);
        return bytes;
    }

    private static RpmaCommonData commonData(RpmaSession session) {
        return RpmaCommonData.decode(session.privateData());
    }

    private static RpmaReadException failure(CompletableFuture<Void> read) {
        assertThat(read).isDone();
        Throwable cause = read.handle((value, ex) -> ex).join();
        assertThat(cause).isInstanceOf(RpmaReadException.class);
        return (RpmaReadException) cause;
    }

    @Test
    void aReadPutsTheClientsStringIntoTheRegionAndCompletesOnTheSessionsLoop() throws Exception {
        start();
        Client client = connect("Hello world!", MemoryUsage.READ_SRC);
        RpmaSession session = awaitSession(1);
        RpmaCommonData data = commonData(session);
        assertThat(data.dataOffset()).isEqualTo(HELLO_STR_OFFSET);

        // the completion cannot be taken before the test has its callback in place
        FakeStall poll = this.fake.stallNext("rpma_cq_get_wc");
        CompletableFuture<Void> read = session.read(data.memoryRegionDescriptor(), data.dataOffset(), "log", 512,
                HELLO_STR_SIZE);
        List<String> completedOn = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> after = read.thenRun(() -> completedOn.add(Thread.currentThread().getName()));
        assertThat(poll.awaitEntered(WAIT)).isTrue();
        assertThat(read).isNotDone();
        poll.release();
        after.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(completedOn).singleElement().asString().startsWith("rpma-loop-");
        assertThat(logBytes(512, HELLO_STR_SIZE)).isEqualTo(client.string());
        assertThat(new String(logBytes(512, 12), StandardCharsets.US_ASCII)).isEqualTo("Hello world!");
        assertThat(logBytes(0, 512)).as("nothing outside the read's range").containsOnly(0);

        // the enum before the string, by the same descriptor: one remote region for both reads
        session.read(data.memoryRegionDescriptor(), 0, "log", 0, 4).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(this.log.order(ByteOrder.LITTLE_ENDIAN).getInt(0)).isEqualTo(0x0A0B0C0D);
        assertThat(this.fake.calls("rpma_mr_remote_from_descriptor")).isOne();
        assertThat(this.fake.calls("rpma_mr_remote_delete")).isZero();

        session.close();
        assertThat(client.nextEvent()).isEqualTo(RpmaConnectionEvent.CLOSED);
        client.connection.disconnect();
        await("the session ended", () -> this.ended.size() == 1);
        assertThat(this.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.CLOSED_BY_SERVER);
        assertThat(this.fake.calls("rpma_mr_remote_delete")).as("deleted once, when the session ended").isOne();
        assertThat(this.server.endpoint(RpmaEndpointSettings.DEFAULT_ENDPOINT).statistics()
            .failedCompletions(RpmaEndpointStatistics.WorkRequest.READ)).isZero();
    }

    @Test
    void theArgumentsAreCheckedOnTheCallersThreadSayingWhatToDo() {
        start();
        connect("Hello world!", MemoryUsage.READ_SRC);
        RpmaSession session = awaitSession(1);
        byte[] descriptor = commonData(session).memoryRegionDescriptor();

        assertThatThrownBy(() -> session.read(descriptor, 4, "log", 0, 0))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("read at least one byte");
        assertThatThrownBy(() -> session.read(descriptor, 4, "nowhere", 0, 8))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("No region is named 'nowhere'");
        assertThatThrownBy(() -> session.read(descriptor, 4, "elsewhere", 0, 8))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("Region 'elsewhere' is not exposed to endpoint 'default'");
        assertThatThrownBy(() -> session.read(descriptor, 4, "greeting", 0, 8))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("no WRITE_DST")
            .hasMessageContaining("Read into a write-dst region");
        assertThatThrownBy(() -> session.read(descriptor, 4, "log", 4090, 8))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("A read of 8 bytes at offset 4090 is outside region 'log' of 4096 bytes");
        assertThatThrownBy(() -> session.read(descriptor, 4, "log", -1, 8))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside region 'log'");
        assertThatThrownBy(() -> session.read(new byte[20], 4, "log", 0, 8))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("descriptor is 21 bytes");
        assertThatThrownBy(() -> session.read(descriptor, 4, "log", 0, 1025))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("A read of 1025 bytes at offset 4 is outside the client's region of 1028 bytes"
                    + " (rpma_mr_remote_get_size)");
        assertThatThrownBy(() -> session.read(descriptor, -4, "log", 0, 8))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside the client's region");
        assertThat(this.fake.calls("rpma_read")).as("nothing was posted").isZero();

        session.close();
        await("the session ended", () -> this.ended.size() == 1);
        assertThatThrownBy(() -> session.read(descriptor, 4, "log", 0, 8))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("only an established session reads");
        assertThat(this.fake.calls("rpma_mr_remote_delete")).isOne();
    }

    @Test
    void aClientRegionWithoutReadSrcFailsTheReadWithTheRemoteAccessErrorAndEndsTheSession() throws Exception {
        start();
        Client client = connect("not for reading", MemoryUsage.WRITE_SRC);
        RpmaSession session = awaitSession(1);
        RpmaCommonData data = commonData(session);
        FakeStall poll = this.fake.stallNext("rpma_cq_get_wc");
        CompletableFuture<Void> read = session.read(data.memoryRegionDescriptor(), data.dataOffset(), "log", 0,
                HELLO_STR_SIZE);
        // as the sample's handler does: close whatever became of the read
        read.whenComplete((done, failed) -> session.close());
        assertThat(poll.awaitEntered(WAIT)).isTrue();
        poll.release();
        await("the read failed", read::isDone);
        RpmaReadException failure = failure(read);
        assertThat(failure).hasMessageContaining("rpma_read of 1024 bytes")
            .hasMessageContaining("completed with IBV_WC_REM_ACCESS_ERR (10): the client's region does not allow it");
        assertThat(failure.completionStatus()).hasValue(10);
        assertThat(logBytes(0, HELLO_STR_SIZE)).containsOnly(0);

        // the queue pair is in the error state: the session ends for it, before the read's callback closes it
        await("the session ended", () -> this.ended.size() == 1);
        assertThat(this.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.ERROR);
        assertThat(this.ended.get(0).detail()).contains("IBV_WC_REM_ACCESS_ERR");
        assertThat(client.nextEvent()).isIn(RpmaConnectionEvent.CLOSED, RpmaConnectionEvent.LOST);
        assertThat(this.server.endpoint(RpmaEndpointSettings.DEFAULT_ENDPOINT).statistics()
            .failedCompletions(RpmaEndpointStatistics.WorkRequest.READ)).isOne();
        assertThat(this.fake.calls("rpma_mr_remote_delete")).isOne();
    }

    @Test
    void readsInFlightAndWaitingWhenTheSessionEndsFailAndTheRemoteRegionIsDeletedOnce() {
        start();
        List<CompletableFuture<Void>> reads = new CopyOnWriteArrayList<>();
        // on the loop: the reads are posted (their completions not yet taken) and the session ends in one turn
        this.onEstablished = (session) -> {
            RpmaCommonData data = commonData(session);
            for (int i = 0; i < 12; i++) {
                reads.add(session.read(data.memoryRegionDescriptor(), data.dataOffset() + i, "log", i * 8, 8));
            }
            session.close();
        };
        Client client = connect("Hello world!", MemoryUsage.READ_SRC);
        await("the session ended", () -> this.ended.size() == 1);
        assertThat(reads).hasSize(12).allSatisfy((read) -> assertThat(read).isCompletedExceptionally());
        List<String> messages = reads.stream().map((read) -> failure(read).getMessage()).toList();
        // librpma's default queues (sq 10, cq 10) hold 10 reads of a session without data path
        assertThat(messages.subList(0, 10)).allSatisfy((message) -> assertThat(message)
            .contains("did not complete: session").contains("ended (closed-by-server").endsWith("with it in flight"));
        assertThat(messages.subList(10, 12)).allSatisfy((message) -> assertThat(message)
            .contains("was not posted").endsWith("while it waited"));
        assertThat(reads).allSatisfy((read) -> assertThat(failure(read).completionStatus()).isEmpty());
        assertThat(this.fake.calls("rpma_read")).isEqualTo(10);
        assertThat(this.fake.calls("rpma_mr_remote_from_descriptor")).isOne();
        assertThat(this.fake.calls("rpma_mr_remote_delete")).isOne();
        assertThat(client.nextEvent()).isEqualTo(RpmaConnectionEvent.CLOSED);
    }

    @Test
    void readsBeyondWhatTheQueuesHoldWaitOnTheLoopAndEachLandsInItsRange() throws Exception {
        start();
        List<CompletableFuture<Void>> reads = new CopyOnWriteArrayList<>();
        this.onEstablished = (session) -> {
            RpmaCommonData data = commonData(session);
            for (int i = 0; i < 40; i++) {
                reads.add(session.read(data.memoryRegionDescriptor(), data.dataOffset() + i, "log", 1024 + i * 2, 1));
            }
        };
        String text = "0123456789abcdefghijklmnopqrstuvwxyzABCD";
        connect(text, MemoryUsage.READ_SRC);
        await("40 reads", () -> reads.size() == 40);
        CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        for (int i = 0; i < 40; i++) {
            assertThat((char) this.log.get(1024 + i * 2)).as("read " + i).isEqualTo(text.charAt(i));
            assertThat(this.log.get(1025 + i * 2)).isZero();
        }
        // the loopback refuses a post beyond the send queue (ENOMEM), which would have ended the session
        assertThat(this.ended).isEmpty();
        assertThat(this.fake.calls("rpma_read")).isEqualTo(40);
    }

    @Test
    void aSessionWithADataPathReadsWhenItsQueuesHaveRoomAndSaysWhatToRaiseWhenNot() throws Exception {
        start(Map.of("", (message, session) -> null), 4);
        Client client = connect("with messages", MemoryUsage.READ_SRC);
        RpmaSession session = awaitSession(1);
        RpmaCommonData data = commonData(session);
        List<CompletableFuture<Void>> reads = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            reads.add(session.read(data.memoryRegionDescriptor(), data.dataOffset(), "log", 2048 + i * 16, 13));
        }
        CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        for (int i = 0; i < 6; i++) {
            assertThat(new String(logBytes(2048 + i * 16, 13), StandardCharsets.US_ASCII)).isEqualTo("with messages");
        }
        assertThat(this.ended).isEmpty();
        client.connection.disconnect();
        await("the session ended", () -> this.ended.size() == 1);
        this.server.close();

        this.established.clear();
        start(Map.of("", (message, s) -> null), 0);
        connect("no room", MemoryUsage.READ_SRC);
        RpmaSession cramped = awaitSession(1);
        assertThatThrownBy(() -> cramped.read(data.memoryRegionDescriptor(), 4, "log", 0, 7))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("have no room for reads")
            .hasMessageContaining("Raise the endpoint's connection sq-size and cq-size");
    }

    @Test
    void aRegionClientsMayWriteIsRegisteredAsAReadDestinationTooAndNoOtherIs() {
        start();
        RpmaRegions regions = this.server.regions();
        byte readDst = (byte) MemoryUsage.READ_DST.flag();
        assertThat(regions.descriptor("log", RpmaEndpointSettings.DEFAULT_ENDPOINT)[20])
            .isEqualTo((byte) (MemoryUsage.WRITE_DST.flag() | MemoryUsage.READ_SRC.flag() | readDst));
        assertThat(regions.descriptor("greeting", RpmaEndpointSettings.DEFAULT_ENDPOINT)[20])
            .as("READ_SRC alone: READ_DST would let peers write it over iWARP")
            .isEqualTo((byte) MemoryUsage.READ_SRC.flag());
        assertThat(regions.definition("log").usages()).as("the declared usages stay as declared")
            .doesNotContain(MemoryUsage.READ_DST);
    }

    @Test
    void aReadOfAnotherThreadIsPostedOnTheLoop() throws Exception {
        start();
        connect("from a pool", MemoryUsage.READ_SRC);
        RpmaSession session = awaitSession(1);
        RpmaCommonData data = commonData(session);
        CompletableFuture<Void> read = CompletableFuture
            .supplyAsync(() -> session.read(data.memoryRegionDescriptor(), data.dataOffset(), "log", 3000, 11))
            .thenCompose((future) -> future);
        read.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(new String(logBytes(3000, 11), StandardCharsets.US_ASCII)).isEqualTo("from a pool");
        assertThat(this.fake.threadsCalling("rpma_read")).singleElement().asString().startsWith("rpma-loop-");
    }
}

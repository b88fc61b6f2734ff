package dev.rpma.sample;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.rpma.binding.CompletionMode;
import dev.rpma.binding.FlushType;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.RpmaCompletion;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.RpmaRemoteMemoryRegion;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaRemoteErrorException;
import dev.rpma.sampleclient.PingPongResult;
import dev.rpma.sampleclient.SampleClient;
import dev.rpma.sampleclient.SampleClientException;
import dev.rpma.sampleclient.SampleClientException.Failure;
import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaRegions;
import dev.rpma.spring.boot.test.RpmaLoopback;
import dev.rpma.spring.boot.test.RpmaTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The whole sample app, with its own {@code application.yml}, on the in-JVM loopback of librpma: the
 * Java sample client speaks the three example protocols to it with the assertions of the soft-RoCE
 * end-to-end tests ({@code dev.rpma.sample.e2e.SampleAppEndToEndTests}), with no RDMA device; clients
 * of the persistent endpoints write, flush and ask for durability as librpma's examples 04, 05 and
 * 09 do, and the app reads a client's memory as example 03's server does; {@code RpmaClient} sends
 * framed requests to the echo endpoint. The clients dial the address the e2e tests use; on the
 * loopback only the port decides.
 */
@RpmaTest(properties = "rpma.server.shutdown.grace-period=0")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SampleAppLoopbackTests {

    /** The soft-RoCE VM's address, as the e2e tests dial it: on the loopback any address reaches the app. */
    private static final String SERVER = "198.18.0.1";

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static final int PING_PONG_ROUNDS = 10_000;

    private static final int ECHO_PORT = 7210;

    private static final int ECHO_REQUESTS = 200;

    private static final int READ_TO_PERSISTENT_PORT = 7211;

    @DynamicPropertySource
    static void persistentRegionInATemporaryFile(DynamicPropertyRegistry registry) throws IOException {
        // the context outlives the class (Spring caches it), so the file goes when the JVM exits
        Path directory = Files.createTempDirectory("sample-app-loopback");
        directory.toFile().deleteOnExit();
        Path region = directory.resolve("persistent.region");
        region.toFile().deleteOnExit();
        registry.add("rpma.server.regions.persistent.path", region::toString);
    }

    @Autowired
    RpmaLoopback loopback;

    @Autowired
    MeterRegistry meters;

    @Autowired
    RpmaRegions regions;

    private SampleClient client;

    @BeforeAll
    void openTheClient() {
        this.client = SampleClient.open(this.loopback.rpma(), SERVER, TIMEOUT);
    }

    @AfterAll
    void closeTheClient() {
        this.client.close();
    }

    @AfterEach
    void noRuleOfLibrpmaWasBroken() {
        this.loopback.assertNoViolations();
    }

    @Test
    void helloExchangesTheExamplesGreetingsInThePrivateData() {
        assertThat(this.client.hello(ExampleProtocols.HELLO_PORT)).isEqualTo(ExampleProtocols.SERVER_GREETING);
    }

    @Test
    void helloRejectsAStrangersGreeting() {
        assertThatThrownBy(() -> this.client.hello(ExampleProtocols.HELLO_PORT, "Hello stranger!"))
            .isInstanceOfSatisfying(SampleClientException.class,
                    (ex) -> assertThat(ex.failure()).isEqualTo(Failure.REJECTED));
    }

    @Test
    void readGetsTheExposedRegion() {
        assertThat(this.client.read(ExampleProtocols.READ_PORT)).isEqualTo(ExampleProtocols.READ_CONTENT);
    }

    @Test
    void pingPongAnswersTenThousandRoundsEachWithTheCounterPlusOne() {
        double roundsBefore = this.meters.counter("sample.pingpong.rounds").count();
        double doneBefore = this.meters.counter("sample.pingpong.sessions", "outcome", "done").count();
        PingPongResult result = this.client.pingPong(ExampleProtocols.PING_PONG_PORT, 1000, PING_PONG_ROUNDS);
        assertThat(result.rounds()).isEqualTo(PING_PONG_ROUNDS);
        assertThat(result.lastReply()).isEqualTo(1000 + PING_PONG_ROUNDS);
        // the client's I_M_DONE reaches the handler before its disconnect: the session ends done
        assertThat(this.loopback.nativeLayer().await(TIMEOUT,
                () -> this.meters.counter("sample.pingpong.sessions", "outcome", "done").count() == doneBefore + 1))
            .as("the ping-pong session ended done").isTrue();
        assertThat(this.meters.counter("sample.pingpong.rounds").count()).isEqualTo(roundsBefore + PING_PONG_ROUNDS);
    }

    @Test
    void writeAndFlushPutTheClientsBytesIntoThePersistentRegionAsExamples04And05Do() {
        ByteBuffer buffer = ByteBuffer.allocateDirect(64);
        try (RpmaPeer peer = this.loopback.rpma().openPeer(SERVER, PeerRole.CLIENT);
                RpmaMemoryRegion local = peer.register(buffer, MemoryUsage.WRITE_SRC, MemoryUsage.READ_DST)) {
            buffer.put(0, ascii("written by 04"));
            try (ExampleConnection write = new ExampleConnection(peer, 7207)) {
                assertThat(write.common.peerConfigDescriptor()).as("example 04's server sends no peer configuration")
                    .isEmpty();
                // example 04's client makes its write durable with a read after it
                write.connection.write(write.remote, 0, local, 0, 13, CompletionMode.ALWAYS, 1);
                write.connection.read(local, 32, write.remote, 0, 8, CompletionMode.ALWAYS, 2);
                assertThat(write.complete(2)).extracting(RpmaCompletion::context).containsExactly(1L, 2L);
            }
            buffer.put(0, ascii("written by 05"));
            try (ExampleConnection flush = new ExampleConnection(peer, 7208)) {
                assertThat(flush.common.peerConfigDescriptor()).as("no direct write to PMem on a plain file: "
                        + "example 05's client flushes to visibility").containsExactly(0);
                flush.connection.write(flush.remote, 4096, local, 0, 13, CompletionMode.ALWAYS, 3);
                flush.connection.flush(flush.remote, 4096, 13, FlushType.VISIBILITY, CompletionMode.ALWAYS, 4);
                assertThat(flush.complete(2)).extracting(RpmaCompletion::context).containsExactly(3L, 4L);
            }
        }
        assertThat(bytes(0, 13)).isEqualTo(ascii("written by 04"));
        assertThat(bytes(4096, 13)).isEqualTo(ascii("written by 05"));
    }

    @Test
    void gpspmAnswersAFlushRequestWithItsContextAfterTheWrittenRange() {
        // [0, 16) the data, [16, 40) the flush request, [40, 48) the reply
        ByteBuffer buffer = ByteBuffer.allocateDirect(48).order(ByteOrder.LITTLE_ENDIAN);
        try (RpmaPeer peer = this.loopback.rpma().openPeer(SERVER, PeerRole.CLIENT);
                RpmaMemoryRegion local = peer.register(buffer, MemoryUsage.WRITE_SRC, MemoryUsage.SEND,
                        MemoryUsage.RECV);
                ExampleConnection gpspm = new ExampleConnection(peer, 7209)) {
            buffer.put(0, ascii("written by 09"));
            buffer.putLong(16, 8192).putLong(24, 13).putLong(32, 0xF01DL);
            gpspm.connection.receive(local, 40, 8, 5);
            gpspm.connection.write(gpspm.remote, 8192, local, 0, 13, CompletionMode.ALWAYS, 6);
            gpspm.connection.send(local, 16, 24, CompletionMode.ALWAYS, 7);
            assertThat(gpspm.complete(3)).extracting(RpmaCompletion::context).containsExactlyInAnyOrder(5L, 6L, 7L);
            assertThat(buffer.getLong(40)).as("the flush request's op_context").isEqualTo(0xF01DL);
        }
        assertThat(bytes(8192, 13)).isEqualTo(ascii("written by 09"));
    }

    @Test
    void readToPersistentReadsTheClientsStringIntoThePersistentRegionThenDisconnectsAsExample03sServerDoes() {
        // example 03's client: struct hello_t { enum lang_t lang; char str[1024]; }, registered READ_SRC
        ByteBuffer hello = ByteBuffer.allocateDirect(4 + ReadToPersistentHandler.HELLO_STR_SIZE)
            .order(ByteOrder.LITTLE_ENDIAN);
        byte[] text = ascii("read by the server, " + System.nanoTime());
        hello.putInt(0, 1).put(4, text);
        try (RpmaPeer peer = this.loopback.rpma().openPeer(SERVER, PeerRole.CLIENT);
                RpmaMemoryRegion region = peer.register(hello, MemoryUsage.READ_SRC)) {
            RpmaConnectionRequest request = peer.newConnectionRequest(SERVER, READ_TO_PERSISTENT_PORT, null);
            RpmaConnection connection;
            try {
                connection = request.connect(new RpmaCommonData(4, region.descriptor(), new byte[0]).encode());
            }
            finally {
                request.close();
            }
            try {
                connection.configureEventsBlocking(false);
                assertThat(nextEvent(connection)).isEqualTo(RpmaConnectionEvent.ESTABLISHED);
                // the server reads, makes it durable and disconnects; the client answers that CLOSED
                assertThat(nextEvent(connection)).isEqualTo(RpmaConnectionEvent.CLOSED);
                connection.disconnect();
            }
            finally {
                connection.close();
            }
        }
        byte[] expected = new byte[ReadToPersistentHandler.HELLO_STR_SIZE];
        System.arraycopy(text, 0, expected, 0, text.length);
        assertThat(bytes(ReadToPersistentHandler.OFFSET, ReadToPersistentHandler.HELLO_STR_SIZE)).isEqualTo(expected);
        assertThat(bytes(ReadToPersistentHandler.OFFSET - 4, 4)).as("the string alone, not the enum before it")
            .containsOnly(0);
    }

    @Test
    void theEchoEndpointAnswersEveryFramedRequestOfAPoolWithItsOwnReplyAndARouteWithoutHandlerWithAnError()
            throws Exception {
        try (RpmaClient client = RpmaClient.builder(this.loopback.rpma())
            .name("echo")
            .address(SERVER)
            .port(ECHO_PORT)
            .poolSize(2)
            .requestTimeout(TIMEOUT)
            .build()) {
            List<CompletableFuture<String>> replies = new ArrayList<>();
            for (int i = 0; i < ECHO_REQUESTS; i++) {
                replies.add(client.request("upper", "request " + i + " of the loopback", String.class));
            }
            for (int i = 0; i < ECHO_REQUESTS; i++) {
                assertThat(replies.get(i).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("the reply to request " + i)
                    .isEqualTo("REQUEST " + i + " OF THE LOOPBACK");
            }
            byte[] payload = { 0, 1, (byte) 0x80, (byte) 0xFF };
            assertThat(client.request("echo", payload).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(payload);
            assertThatThrownBy(() -> client.request("nowhere", payload).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                .cause()
                .isInstanceOfSatisfying(RpmaRemoteErrorException.class,
                        (ex) -> assertThat(ex.remoteMessage()).isEqualTo("no handler for route \"nowhere\""));
            assertThat(client.request("upper", "still here", String.class).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                .isEqualTo("STILL HERE");
            assertThat(client.reconnects()).as("connection attempts after the first").isZero();
        }
    }

    private RpmaConnectionEvent nextEvent(RpmaConnection connection) {
        RpmaConnectionEvent[] event = new RpmaConnectionEvent[1];
        assertThat(this.loopback.nativeLayer().await(TIMEOUT, () -> (event[0] = connection.nextEvent()) != null))
            .as("a connection event").isTrue();
        return event[0];
    }

    private byte[] bytes(int offset, int length) {
        byte[] bytes = new byte[length];
        this.regions.memory(PersistentHandler.REGION).get(offset, bytes);
        return bytes;
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * A client's connection to a persistent endpoint: the region the accept's {@code struct common_data}
     * names, the completions of what the client posts, and librpma's client teardown (disconnect, wait
     * for CLOSED, delete).
     */
    private final class ExampleConnection implements AutoCloseable {

        final RpmaConnection connection;

        final RpmaCommonData common;

        final RpmaRemoteMemoryRegion remote;

        private final RpmaCompletions batch = new RpmaCompletions(8);

        ExampleConnection(RpmaPeer peer, int port) {
            RpmaConnectionRequest request = peer.newConnectionRequest(SERVER, port, null);
            try {
                this.connection = request.connect(null);
            }
            finally {
                request.close();
            }
            this.connection.configureEventsBlocking(false);
            assertThat(nextEvent()).isEqualTo(RpmaConnectionEvent.ESTABLISHED);
            this.common = RpmaCommonData.decode(this.connection.privateData());
            this.remote = SampleAppLoopbackTests.this.loopback.rpma().remoteMemoryRegion(
                    this.common.memoryRegionDescriptor());
        }

        private RpmaConnectionEvent nextEvent() {
            return SampleAppLoopbackTests.this.nextEvent(this.connection);
        }

        /** The next {@code count} completions, each a success. */
        List<RpmaCompletion> complete(int count) {
            List<RpmaCompletion> completed = new ArrayList<>();
            // the loopback queues a completion inside the call that causes it: polling finds it
            assertThat(SampleAppLoopbackTests.this.loopback.nativeLayer().await(TIMEOUT, () -> {
                int got = this.connection.completionQueue().poll(this.batch);
                for (int i = 0; i < got; i++) {
                    completed.add(this.batch.get(i));
                }
                return completed.size() >= count;
            })).as(count + " completions within " + TIMEOUT).isTrue();
            assertThat(completed).allSatisfy((completion) -> assertThat(completion.isSuccess()).as(completion.toString())
                .isTrue());
            return completed;
        }

        @Override
        public void close() {
            try {
                this.connection.disconnect();
                assertThat(nextEvent()).isEqualTo(RpmaConnectionEvent.CLOSED);
            }
            finally {
                this.remote.close();
                this.connection.close();
            }
        }
    }
}

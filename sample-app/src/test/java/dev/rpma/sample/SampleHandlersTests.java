package dev.rpma.sample;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.test.context.ConfigDataApplicationContextInitializer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.binding.testing.PostedOperation;
import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaSessionEnd;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's handlers with the sample's own {@code application.yml}, over the scripted
 * librpma fake: what they accept and reject, the private data they send, the region they expose,
 * the ping-pong's exchanges and how each protocol's sessions end. Real RDMA is the end-to-end tests'
 * job ({@code dev.rpma.sample.e2e}).
 */
class SampleHandlersTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final FakeLibRpma fake = new FakeLibRpma().requireNonBlockingEndpointFd(true);

    private final MeterRegistry meters = new SimpleMeterRegistry();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withInitializer(new ConfigDataApplicationContextInitializer())
        .withConfiguration(AutoConfigurations.of(PropertyPlaceholderAutoConfiguration.class, RpmaAutoConfiguration.class))
        .withBean("fakeRpma", Rpma.class, () -> Rpma.using(this.fake))
        .withBean(MeterRegistry.class, () -> this.meters)
        .withBean(HelloHandler.class)
        .withBean(ReadHandler.class)
        .withBean(PingPongHandler.class)
        .withBean(PersistentHandler.class)
        .withBean(FlushByMessageHandler.class)
        .withBean(EchoHandler.class)
        .withBean(ReadToPersistentHandler.class)
        .withPropertyValues("rpma.server.address=198.18.0.1", "rpma.server.shutdown.grace-period=0",
                "rpma.server.regions.persistent.path=" + regionFile());

    @TempDir
    static Path files;

    private static Path regionFile() {
        return files.resolve("persistent.region");
    }

    @AfterEach
    void nothingNativeLeakedOrMisused() {
        this.fake.assertCleanAndClose();
    }

    @Test
    void theApplicationsConfigurationServesSixExampleProtocolsAndAFramedEndpoint() {
        this.runner.run((context) -> {
            RpmaServer server = context.getBean(RpmaServer.class);
            assertThat(server.endpoints()).containsOnlyKeys("default", "read", "pingpong", "write", "flush", "gpspm",
                    EchoHandler.ENDPOINT, ReadToPersistentHandler.ENDPOINT);
            assertThat(server.endpoint("default").hasMessageHandlers()).isFalse();
            assertThat(server.endpoint("read").hasMessageHandlers()).isFalse();
            RpmaEndpointSettings pingPong = server.endpoint("pingpong").settings();
            assertThat(pingPong.port()).isEqualTo(ExampleProtocols.PING_PONG_PORT);
            assertThat(pingPong.messages().mode()).isEqualTo(RpmaWireMode.RAW);
            assertThat(pingPong.messages().maxMessageSize()).isEqualTo(ExampleProtocols.MESSAGE_SIZE);
            assertThat(pingPong.limits().idleTimeout()).isEqualTo(Duration.ofMinutes(5));
            RpmaEndpointSettings echo = server.endpoint(EchoHandler.ENDPOINT).settings();
            assertThat(echo.port()).isEqualTo(7210);
            assertThat(echo.messages().mode()).isEqualTo(RpmaWireMode.FRAMED);
            assertThat(server.endpoint(EchoHandler.ENDPOINT).hasMessageHandlers()).isTrue();
            RpmaEndpointSettings readToPersistent = server.endpoint(ReadToPersistentHandler.ENDPOINT).settings();
            assertThat(readToPersistent.port()).isEqualTo(7211);
            assertThat(readToPersistent.messages().mode()).isEqualTo(RpmaWireMode.RAW);
            assertThat(server.endpoint(ReadToPersistentHandler.ENDPOINT).hasMessageHandlers()).isFalse();
            assertThat(server.regions().definition(PersistentHandler.REGION).serves(ReadToPersistentHandler.ENDPOINT))
                .isTrue();
            assertThat(server.regions().names()).containsExactlyInAnyOrder(ReadHandler.REGION, PersistentHandler.REGION);
        });
    }

    @Test
    void writeAndFlushHandTheirClientsThePersistentRegionAsExamples04And05Do() throws IOException {
        this.runner.run((context) -> {
            FakeRequest write = this.fake.endpointAt("198.18.0.1", 7207).queueRequest(new byte[0]);
            FakeRequest flush = this.fake.endpointAt("198.18.0.1", 7208).queueRequest(new byte[0]);
            assertThat(write.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            assertThat(flush.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            RpmaCommonData forWrite = RpmaCommonData.decode(write.connectPrivateData());
            RpmaCommonData forFlush = RpmaCommonData.decode(flush.connectPrivateData());
            assertThat(forWrite.peerConfigDescriptor()).as("example 04's server sends no peer configuration").isEmpty();
            assertThat(forFlush.peerConfigDescriptor()).as("05's: no direct write to PMem on a plain file")
                .containsExactly(0);
            assertThat(forFlush.memoryRegionDescriptor()).isEqualTo(forWrite.memoryRegionDescriptor());
            Pointer descriptor = descriptor(forFlush.memoryRegionDescriptor());
            assertThat(descriptor.getLong(8)).isEqualTo(1024 * 1024);
            assertThat(descriptor.getByte(20)).as("WRITE_DST | READ_SRC | FLUSH_TYPE_VISIBILITY, and READ_DST for"
                    + " read-to-persistent's reads").isEqualTo((byte) (8 | 1 | 16 | 2));
            // what a client's rpma_write leaves in the region is in the file
            new Pointer(descriptor.getLong(0)).write(0, "Hello world!".getBytes(StandardCharsets.US_ASCII), 0, 12);
            write.connection().queueEvent(RpmaConnectionEvent.CLOSED);
            flush.connection().queueEvent(RpmaConnectionEvent.CLOSED);
            assertThat(flush.connection().awaitDeleted(WAIT)).isTrue();
        });
        assertThat(Files.readAllBytes(regionFile())).hasSize(1024 * 1024).startsWith("Hello world!".getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void gpspmMakesTheRequestedRangeDurableThenAnswersWithTheOperationsContext() {
        this.runner.run((context) -> {
            FakeRequest request = this.fake.endpointAt("198.18.0.1", 7209).queueRequest(new byte[0]);
            assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            RpmaCommonData data = RpmaCommonData.decode(request.connectPrivateData());
            assertThat(data.peerConfigDescriptor()).containsExactly(0);
            FakeConnection connection = request.connection();
            connection.deliver(flushRequest(4096, 1024, 0xF01DL));
            assertThat(connection.awaitSent(1, WAIT)).isTrue();
            assertThat(connection.sent()).extracting(SampleHandlersTests::value).containsExactly(0xF01DL);

            // a range outside the region ends only that session, and nothing is answered
            connection.deliver(flushRequest(1024 * 1024 - 8, 16, 7));
            assertThat(connection.awaitDisconnected(WAIT)).isTrue();
            assertThat(connection.sent()).hasSize(1);
            connection.queueEvent(RpmaConnectionEvent.CLOSED);
            assertThat(connection.awaitDeleted(WAIT)).isTrue();
        });
    }

    @Test
    void helloAnswersTheExamplesGreetingWithItsOwnThenDisconnectsAsTheExampleServerDoes() {
        this.runner.run((context) -> {
            byte[] padded = Arrays.copyOf(ExampleProtocols.cString("Hello server!"), 56);
            FakeRequest request = this.fake.endpointAt("198.18.0.1", 7204).queueRequest(padded);
            assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            assertThat(request.connectPrivateData()).isEqualTo("Hello client!\0".getBytes(StandardCharsets.US_ASCII));
            FakeConnection connection = request.connection();
            // after ESTABLISHED the server disconnects, and deletes on the CLOSED that follows (as the client sees)
            assertThat(connection.awaitDisconnected(WAIT)).isTrue();
            assertThat(connection.awaitDeleted(WAIT)).isTrue();
            RpmaServer server = context.getBean(RpmaServer.class);
            assertThat(this.fake.await(WAIT, () -> server.endpoint("default").statistics()
                .sessionsEnded(RpmaSessionEnd.Reason.CLOSED_BY_SERVER) == 1)).isTrue();
        });
    }

    @Test
    void helloRejectsAnyOtherGreeting() {
        this.runner.run((context) -> {
            FakeRequest request = this.fake.endpointAt("198.18.0.1", 7204)
                .queueRequest(ExampleProtocols.cString("Hello stranger!"));
            assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);
            RpmaServer server = context.getBean(RpmaServer.class);
            assertThat(this.fake.await(WAIT,
                    () -> server.endpoint("default").statistics().rejected(RejectReason.HANDLER) == 1)).isTrue();
        });
    }

    /**
     * A greeting that tries to forge log lines (LF, CR, CR LF, an escape sequence, every control byte)
     * is logged escaped on the one line of the handler's rejection; no line of the output starts with
     * it, and the rejection line holds no control character.
     */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void helloLogsAHostileGreetingEscapedOnItsOwnLine(CapturedOutput output) {
        // within the 32 bytes the handler shows
        byte[] forging = "\nFORGED 1\rFORGED 2\r\nFORGED\u001b[J".getBytes(StandardCharsets.ISO_8859_1);
        byte[] controls = new byte[33];
        for (int b = 0; b < 0x20; b++) {
            controls[b] = (byte) b;
        }
        controls[32] = 0x7f;
        this.runner.run((context) -> {
            RpmaServer server = context.getBean(RpmaServer.class);
            for (byte[] greeting : List.of(forging, controls)) {
                FakeRequest request = this.fake.endpointAt("198.18.0.1", 7204).queueRequest(greeting);
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);
            }
            assertThat(this.fake.await(WAIT,
                    () -> server.endpoint("default").statistics().rejected(RejectReason.HANDLER) == 2)).isTrue();
        });
        List<String> lines = List.of(output.getAll().split("\r\n|\r|\n"));
        assertThat(lines).noneMatch((line) -> line.startsWith("FORGED"));
        List<String> rejections = lines.stream().filter((line) -> line.contains("hello: rejecting")).toList();
        assertThat(rejections).hasSize(2)
            .allSatisfy((line) -> assertThat(line.chars().filter((c) -> c < 0x20 && c != '\t' || c == 0x7f))
                .isEmpty());
        assertThat(rejections.get(0)).contains("\"\\x0aFORGED 1\\x0dFORGED 2\\x0d\\x0aFORGED\\x1b[J\"");
        assertThat(rejections.get(1)).contains("\\x00\\x01\\x02").contains("\\x1f...(1 more bytes)");
    }

    @Test
    void readHandsEveryClientTheDescriptorOfTheOneSharedRegionAndReturnsAtOnce() {
        this.runner.run((context) -> {
            FakeRequest first = this.fake.endpointAt("198.18.0.1", 7205).queueRequest(new byte[0]);
            FakeRequest second = this.fake.endpointAt("198.18.0.1", 7205).queueRequest(new byte[0]);
            assertThat(first.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            assertThat(second.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            assertThat(first.connectPrivateData()).hasSize(RpmaCommonData.SIZE)
                .isEqualTo(second.connectPrivateData());
            RpmaCommonData data = RpmaCommonData.decode(first.connectPrivateData());
            assertThat(data.dataOffset()).isZero();
            assertThat(data.peerConfigDescriptor()).isEmpty();
            Pointer descriptor = descriptor(data.memoryRegionDescriptor());
            long size = descriptor.getLong(8);
            assertThat(size).isEqualTo(14);
            assertThat(descriptor.getByte(20)).as("usage: READ_SRC only").isEqualTo((byte) 1);
            byte[] exposed = new Pointer(descriptor.getLong(0)).getByteArray(0, (int) size);
            assertThat(exposed).isEqualTo("Hello client!\0".getBytes(StandardCharsets.US_ASCII));
            // no handler thread waits for a read connection: the handler returned with the accept
            RpmaServer server = context.getBean(RpmaServer.class);
            assertThat(server.endpoint("read").queueSize()).isZero();

            first.connection().queueEvent(RpmaConnectionEvent.CLOSED);
            assertThat(first.connection().awaitDeleted(WAIT)).isTrue();
            // the region stays for the other client
            assertThat(new Pointer(descriptor.getLong(0)).getByteArray(0, (int) size)).isEqualTo(exposed);
        });
    }

    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void readToPersistentRejectsARequestWithoutTheExamplesCommonDataSayingWhy(CapturedOutput output) {
        byte[] noRegion = new RpmaCommonData(4, new byte[20], new byte[0]).encode();
        this.runner.run((context) -> {
            RpmaServer server = context.getBean(RpmaServer.class);
            for (byte[] privateData : List.of(ExampleProtocols.cString("Hello server!"), noRegion)) {
                FakeRequest request = this.fake.endpointAt("198.18.0.1", 7211).queueRequest(privateData);
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);
            }
            assertThat(this.fake.await(WAIT, () -> server.endpoint(ReadToPersistentHandler.ENDPOINT).statistics()
                .rejected(RejectReason.HANDLER) == 2)).isTrue();
        });
        assertThat(output.getAll())
            .contains("read-to-persistent: rejecting a request: its 14 bytes of private data are fewer than struct"
                    + " common_data's 28")
            .contains("read-to-persistent: rejecting a request: its struct common_data says mr_desc_size 20, not 21");
    }

    @Test
    void pingPongPostsReceivesBeforeAcceptingAndAnswersEachCounterWithItsSuccessorUntilIAmDone() {
        this.runner.run((context) -> {
            FakeRequest request = this.fake.endpointAt("198.18.0.1", 7206).queueRequest(new byte[0]);
            assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            List<PostedOperation> before = request.receives();
            assertThat(before).isNotEmpty().allSatisfy((receive) -> {
                assertThat(receive.function()).isEqualTo("rpma_conn_req_recv");
                assertThat(receive.length()).isEqualTo(ExampleProtocols.MESSAGE_SIZE);
            });
            FakeConnection connection = request.connection();
            connection.deliver(counter(41));
            assertThat(connection.awaitSent(1, WAIT)).isTrue();
            connection.deliver(counter(99));
            assertThat(connection.awaitSent(2, WAIT)).isTrue();
            assertThat(connection.sent()).extracting(SampleHandlersTests::value).containsExactly(42L, 100L);
            assertThat(this.fake.threadsCalling("rpma_send")).allSatisfy(
                    (thread) -> assertThat(thread).startsWith("rpma-loop-"));

            connection.deliver(counter(ExampleProtocols.I_M_DONE));
            assertThat(connection.awaitDisconnected(WAIT)).as("the server disconnects after I_M_DONE").isTrue();
            connection.queueEvent(RpmaConnectionEvent.CLOSED);
            assertThat(connection.awaitDeleted(WAIT)).isTrue();
            assertThat(this.fake.await(WAIT, () -> sessions("done") == 1)).isTrue();
            assertThat(connection.sent()).as("nothing answers I_M_DONE").hasSize(2);
            assertThat(this.meters.get("sample.pingpong.rounds").counter().count()).isEqualTo(2);
            assertThat(sessions("closed")).isZero();
        });
    }

    @Test
    void concurrentPingPongSessionsEachKeepTheirOwnCounter() {
        this.runner.run((context) -> {
            FakeConnection first = connect(7206);
            FakeConnection second = connect(7206);
            first.deliver(counter(7));
            second.deliver(counter(1000));
            assertThat(first.awaitSent(1, WAIT)).isTrue();
            assertThat(second.awaitSent(1, WAIT)).isTrue();
            assertThat(value(first.sent().get(0))).isEqualTo(8);
            assertThat(value(second.sent().get(0))).isEqualTo(1001);
        });
    }

    @Test
    void aMessageOfTheWrongSizeEndsOnlyItsOwnSessionAsFailed() {
        this.runner.run((context) -> {
            FakeConnection bad = connect(7206);
            FakeConnection good = connect(7206);
            bad.deliver(new byte[] { 1, 2, 3 });
            assertThat(bad.awaitDisconnected(WAIT)).isTrue();
            bad.queueEvent(RpmaConnectionEvent.CLOSED);
            assertThat(this.fake.await(WAIT, () -> sessions("failed") == 1)).isTrue();
            good.deliver(counter(1));
            assertThat(good.awaitSent(1, WAIT)).isTrue();
            assertThat(value(good.sent().get(0))).isEqualTo(2);
        });
    }

    @Test
    void aPingPongSessionWhoseClientDisconnectsEndsAsClosed() {
        this.runner.run((context) -> {
            FakeConnection connection = connect(7206);
            connection.deliver(counter(5));
            assertThat(connection.awaitSent(1, WAIT)).isTrue();
            connection.peerDisconnects();
            assertThat(connection.awaitDeleted(WAIT)).isTrue();
            assertThat(this.fake.await(WAIT, () -> sessions("closed") == 1)).isTrue();
            assertThat(sessions("done")).isZero();
            assertThat(this.meters.get("sample.pingpong.rounds").counter().count()).isOne();
        });
    }

    private FakeConnection connect(int port) {
        FakeRequest request = this.fake.endpointAt("198.18.0.1", port).queueRequest(new byte[0]);
        assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
        return request.connection();
    }

    private double sessions(String outcome) {
        return this.meters.get("sample.pingpong.sessions").tag("outcome", outcome).counter().count();
    }

    private static byte[] counter(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value).array();
    }

    private static byte[] flushRequest(long offset, long length, long operationContext) {
        return ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN).putLong(offset).putLong(length)
            .putLong(operationContext).array();
    }

    private static long value(byte[] message) {
        assertThat(message).hasSize(8);
        return ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    private static Pointer descriptor(byte[] bytes) {
        Memory memory = new Memory(bytes.length);
        memory.write(0, bytes, 0, bytes.length);
        return memory;
    }
}

package dev.rpma.sample;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.rpma.client.protocol.CommonData;
import dev.rpma.client.protocol.ExampleProtocols;
import dev.rpma.jna.Rpma;
import dev.rpma.jna.RpmaConnectionEvent;
import dev.rpma.jna.testing.FakeCompletionQueue;
import dev.rpma.jna.testing.FakeConnection;
import dev.rpma.jna.testing.FakeLibRpma;
import dev.rpma.jna.testing.FakeRequest;
import dev.rpma.jna.testing.PostedOperation;
import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;
import dev.rpma.spring.server.RejectReason;
import dev.rpma.spring.server.RpmaServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's three handlers in the starter, over the scripted librpma fake: what they accept and
 * reject, the private data they send, the memory they register, post and free, and the ping-pong's
 * exchanges. Real RDMA is the end-to-end tests' job ({@code dev.rpma.sample.e2e}).
 */
class SampleHandlersTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final int IBV_WC_SEND = 0;

    private static final int IBV_WC_RECV = 128;

    private static final int IBV_WC_WR_FLUSH_ERR = 5;

    private final FakeLibRpma fake = new FakeLibRpma().requireNonBlockingEndpointFd(true);

    private final MeterRegistry meters = new SimpleMeterRegistry();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(PropertyPlaceholderAutoConfiguration.class, RpmaAutoConfiguration.class))
        .withBean("fakeRpma", Rpma.class, () -> Rpma.using(this.fake))
        .withBean(MeterRegistry.class, () -> this.meters)
        .withBean(HelloHandler.class)
        .withBean(ReadHandler.class)
        .withBean(PingPongHandler.class)
        .withPropertyValues("rpma.server.address=198.18.0.1", "rpma.server.endpoints.read.port=7205",
                "rpma.server.endpoints.pingpong.port=7206", "rpma.server.shutdown.grace-period=0");

    @AfterEach
    void nothingNativeLeakedOrMisused() {
        try {
            this.fake.assertNoViolations();
            this.fake.assertAllFreed();
        }
        finally {
            this.fake.close();
        }
    }

    @Test
    void helloAnswersTheExamplesGreetingWithItsOwn() {
        this.runner.run((context) -> {
            byte[] padded = Arrays.copyOf(ExampleProtocols.cString("Hello server!"), 56);
            FakeRequest request = this.fake.endpointAt("198.18.0.1", 7204).queueRequest(padded);
            assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            assertThat(request.connectPrivateData()).isEqualTo("Hello client!\0".getBytes(StandardCharsets.US_ASCII));
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

    @Test
    void readSendsTheDescriptorOfItsRegisteredStringAndFreesTheRegionWhenTheConnectionCloses() {
        this.runner.run((context) -> {
            FakeRequest request = this.fake.endpointAt("198.18.0.1", 7205).queueRequest(new byte[0]);
            assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            CommonData data = CommonData.decode(request.connectPrivateData());
            assertThat(request.connectPrivateData()).hasSize(CommonData.SIZE);
            assertThat(data.dataOffset()).isZero();
            assertThat(data.peerConfigDescriptor()).isEmpty();
            Pointer descriptor = descriptor(data.memoryRegionDescriptor());
            long size = descriptor.getLong(8);
            assertThat(size).isEqualTo(14);
            assertThat(descriptor.getByte(20)).as("usage: READ_SRC only").isEqualTo((byte) 1);
            byte[] exposed = new Pointer(descriptor.getLong(0)).getByteArray(0, (int) size);
            assertThat(exposed).isEqualTo("Hello client!\0".getBytes(StandardCharsets.US_ASCII));
            assertThat(this.fake.liveHandles(FakeLibRpma.Kind.MR_LOCAL)).as("kept while the client may read").hasSize(1);

            FakeConnection connection = request.connection();
            connection.queueEvent(RpmaConnectionEvent.CLOSED);
            assertThat(connection.awaitDeleted(WAIT)).isTrue();
            assertThat(this.fake.await(WAIT, () -> this.fake.liveHandles(FakeLibRpma.Kind.MR_LOCAL).isEmpty())).isTrue();
        });
    }

    @Test
    void pingPongPostsAReceiveBeforeAcceptingAndAnswersEachCounterWithItsSuccessorUntilIAmDone() {
        this.runner.run((context) -> {
            FakeRequest request = this.fake.endpointAt("198.18.0.1", 7206).queueRequest(new byte[0]);
            assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            List<PostedOperation> before = request.receives();
            assertThat(before).singleElement().satisfies((receive) -> {
                assertThat(receive.function()).isEqualTo("rpma_conn_req_recv");
                assertThat(receive.length()).isEqualTo(8);
            });
            Pointer received = memoryOf(before.get(0).localRegion());
            FakeConnection connection = request.connection();

            for (long value : new long[] { 41, 99 }) {
                int postedBefore = connection.posted().size();
                received.setLong(0, value);
                connection.completionQueue().queueSuccess(before.get(0).context(), IBV_WC_RECV, 8);
                assertThat(this.fake.await(WAIT, () -> connection.posted().size() == postedBefore + 2)).isTrue();
                List<PostedOperation> posted = connection.posted().subList(postedBefore, postedBefore + 2);
                assertThat(posted).extracting(PostedOperation::function).containsExactly("rpma_recv", "rpma_send");
                PostedOperation send = posted.get(1);
                assertThat(send.length()).isEqualTo(8);
                assertThat(send.flags()).as("RPMA_F_COMPLETION_ALWAYS").isEqualTo(3);
                assertThat(memoryOf(send.localRegion()).getLong(0)).isEqualTo(value + 1);
                connection.completionQueue().queueSuccess(send.context(), IBV_WC_SEND, 0);
            }
            received.setLong(0, ExampleProtocols.I_M_DONE);
            connection.completionQueue().queueSuccess(before.get(0).context(), IBV_WC_RECV, 8);

            assertThat(connection.awaitDisconnected(WAIT)).as("the server disconnects after I_M_DONE").isTrue();
            assertThat(connection.awaitDeleted(WAIT)).isTrue();
            assertThat(this.fake.await(WAIT, () -> this.fake.liveHandles(FakeLibRpma.Kind.MR_LOCAL).isEmpty())).isTrue();
            assertThat(this.meters.get("sample.pingpong.rounds").counter().count()).isEqualTo(2);
            assertThat(sessions("done")).isEqualTo(1);
            assertThat(sessions("closed")).isZero();
        });
    }

    @Test
    void oneLoopServesConcurrentPingPongSessionsEachWithItsOwnCounter() {
        this.runner.run((context) -> {
            FakeRequest first = this.fake.endpointAt("198.18.0.1", 7206).queueRequest(new byte[0]);
            FakeRequest second = this.fake.endpointAt("198.18.0.1", 7206).queueRequest(new byte[0]);
            assertThat(first.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            assertThat(second.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            FakeRequest[] requests = { first, second };
            long[] values = { 7, 1000 };
            for (int i = 0; i < 2; i++) {
                memoryOf(requests[i].receives().get(0).localRegion()).setLong(0, values[i]);
                requests[i].connection().completionQueue().queueSuccess(requests[i].receives().get(0).context(),
                        IBV_WC_RECV, 8);
            }
            for (int i = 0; i < 2; i++) {
                FakeConnection connection = requests[i].connection();
                assertThat(this.fake.await(WAIT, () -> connection.posted().size() == 2)).isTrue();
                PostedOperation send = connection.posted().get(1);
                assertThat(memoryOf(send.localRegion()).getLong(0)).isEqualTo(values[i] + 1);
                connection.completionQueue().queueSuccess(send.context(), IBV_WC_SEND, 0);
            }
            for (FakeRequest request : requests) {
                memoryOf(request.receives().get(0).localRegion()).setLong(0, ExampleProtocols.I_M_DONE);
                request.connection().completionQueue().queueSuccess(request.receives().get(0).context(), IBV_WC_RECV, 8);
            }
            for (FakeRequest request : requests) {
                assertThat(request.connection().awaitDeleted(WAIT)).isTrue();
            }
            assertThat(this.fake.await(WAIT, () -> this.fake.liveHandles(FakeLibRpma.Kind.MR_LOCAL).isEmpty())).isTrue();
            assertThat(this.fake.await(WAIT, () -> sessions("done") == 2)).isTrue();
            assertThat(this.meters.get("sample.pingpong.rounds").counter().count()).isEqualTo(2);
            assertThat(this.fake.threadsCalling("rpma_send")).containsExactly("sample-pingpong-loop");
        });
    }

    @Test
    void theLoopKeepsServingASessionAfterAnEarlierOneEnded() {
        this.runner.run((context) -> {
            FakeRequest first = this.fake.endpointAt("198.18.0.1", 7206).queueRequest(new byte[0]);
            FakeRequest second = this.fake.endpointAt("198.18.0.1", 7206).queueRequest(new byte[0]);
            FakeRequest third = this.fake.endpointAt("198.18.0.1", 7206).queueRequest(new byte[0]);
            for (FakeRequest request : new FakeRequest[] { first, second, third }) {
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            }
            // the first one the loop took ends while the others go on
            memoryOf(first.receives().get(0).localRegion()).setLong(0, ExampleProtocols.I_M_DONE);
            first.connection().completionQueue().queueSuccess(first.receives().get(0).context(), IBV_WC_RECV, 8);
            assertThat(first.connection().awaitDeleted(WAIT)).isTrue();
            assertThat(this.fake.await(WAIT, () -> sessions("done") == 1)).isTrue();
            for (FakeRequest request : new FakeRequest[] { second, third }) {
                memoryOf(request.receives().get(0).localRegion()).setLong(0, 41);
                request.connection().completionQueue().queueSuccess(request.receives().get(0).context(), IBV_WC_RECV, 8);
                FakeConnection connection = request.connection();
                assertThat(this.fake.await(WAIT, () -> connection.posted().size() == 2)).isTrue();
                assertThat(memoryOf(connection.posted().get(1).localRegion()).getLong(0)).isEqualTo(42);
            }
        });
    }

    @Test
    void aPingPongSessionWhoseConnectionClosesEndsAsClosedAndFreesItsBuffers() {
        this.runner.run((context) -> {
            FakeRequest request = this.fake.endpointAt("198.18.0.1", 7206).queueRequest(new byte[0]);
            assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            FakeConnection connection = request.connection();
            // what a disconnect does to the receive the session keeps posted
            connection.completionQueue().queue(flushedReceive(request.receives().get(0).context()));
            connection.queueEvent(RpmaConnectionEvent.CLOSED);
            assertThat(connection.awaitDeleted(WAIT)).isTrue();
            assertThat(this.fake.await(WAIT, () -> this.fake.liveHandles(FakeLibRpma.Kind.MR_LOCAL).isEmpty())).isTrue();
            assertThat(this.fake.await(WAIT, () -> sessions("closed") == 1)).isTrue();
            assertThat(sessions("done")).isZero();
            assertThat(this.meters.get("sample.pingpong.rounds").counter().count()).isZero();
        });
    }

    private double sessions(String outcome) {
        return this.meters.get("sample.pingpong.sessions").tag("outcome", outcome).counter().count();
    }

    /** The registered memory of a local region of the fake ({@code rpma_mr_get_ptr}). */
    private Pointer memoryOf(long region) {
        try (Memory out = new Memory(8)) {
            assertThat(this.fake.rpma_mr_get_ptr(region, Pointer.nativeValue(out))).isZero();
            return new Pointer(out.getLong(0));
        }
    }

    private static Pointer descriptor(byte[] bytes) {
        Memory memory = new Memory(bytes.length);
        memory.write(0, bytes, 0, bytes.length);
        return memory;
    }

    /** The posted receive, flushed by a disconnect ({@code IBV_WC_WR_FLUSH_ERR}). */
    private static FakeCompletionQueue.Completion flushedReceive(long context) {
        return new FakeCompletionQueue.Completion(context, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 0, 0, 0, 0, 0);
    }
}

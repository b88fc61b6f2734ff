package dev.rpma.sampleclient;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.sampleclient.SampleClientException.Failure;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.binding.CompletionStatus;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.testing.FakeCompletionQueue;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.PostedOperation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SampleClient} over the scripted librpma fake, which plays the server: what the client
 * sends, how it reads the server's answers, and that every outcome leaves nothing allocated.
 */
class SampleClientTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final int IBV_WC_SEND = 0;

    private static final int IBV_WC_RDMA_READ = 2;

    private static final int IBV_WC_RECV = 128;

    private final FakeLibRpma fake = new FakeLibRpma().establishOnConnect(false);

    private final ExecutorService executor = Executors.newSingleThreadExecutor();

    private final SampleClient client = SampleClient.open(Rpma.using(this.fake), "198.18.0.1", WAIT);

    @AfterEach
    void nothingNativeLeakedOrMisused() throws InterruptedException {
        try {
            this.executor.shutdownNow();
            assertThat(this.executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
            this.client.close();
            this.fake.assertNoViolations();
            this.fake.assertAllFreed();
        }
        finally {
            this.fake.close();
        }
    }

    @Test
    void helloSendsTheGreetingWithItsNulAndReturnsTheServersUpToItsNul() throws Exception {
        Future<String> reply = this.executor.submit(() -> this.client.hello(ExampleProtocols.HELLO_PORT));
        FakeConnection connection = awaitConnection();
        assertThat(connection.request().port()).isEqualTo("7204");
        assertThat(connection.request().connectPrivateData()).isEqualTo(ExampleProtocols.cString("Hello server!"));
        connection.privateData(java.util.Arrays.copyOf(ExampleProtocols.cString("Hello client!"), 196));
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(reply.get(30, TimeUnit.SECONDS)).isEqualTo("Hello client!");
        assertThat(connection.disconnects()).as("a client disconnects before deleting").isEqualTo(1);
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void aRejectedRequestFailsAsRejectedAndDeletesTheConnection() throws Exception {
        Future<String> reply = this.executor.submit(() -> this.client.hello(ExampleProtocols.HELLO_PORT, "Hi"));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.REJECTED);
        assertThat(failure(reply)).isEqualTo(Failure.REJECTED);
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void aServerThatNeverAnswersFailsAsTimeout() throws Exception {
        try (SampleClient impatient = SampleClient.open(Rpma.using(this.fake), "198.18.0.1", Duration.ofMillis(200))) {
            Future<String> reply = this.executor.submit(() -> impatient.hello(ExampleProtocols.HELLO_PORT));
            assertThat(failure(reply)).isEqualTo(Failure.TIMEOUT);
            assertThat(this.fake.lastConnection().isDeleted()).isTrue();
        }
    }

    @Test
    void readReadsTheRegionTheServerDescribesWithRpmaRead() throws Exception {
        Future<String> content = this.executor.submit(() -> this.client.read(ExampleProtocols.READ_PORT));
        FakeConnection connection = awaitConnection();
        connection.privateData(RpmaCommonData.of(descriptor(0x7f00_1000L, 14, 0x1234, 1)).encode());
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(this.fake.await(WAIT, () -> !connection.posted().isEmpty())).isTrue();
        PostedOperation read = connection.posted().get(0);
        assertThat(read.function()).isEqualTo("rpma_read");
        assertThat(read.length()).isEqualTo(14);
        assertThat(read.remoteOffset()).isZero();
        memoryOf(read.localRegion()).write(0, ExampleProtocols.cString("Hello client!"), 0, 14);
        connection.completionQueue().queueSuccess(read.context(), IBV_WC_RDMA_READ, 14);
        assertThat(content.get(30, TimeUnit.SECONDS)).isEqualTo("Hello client!");
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void readRefusesPrivateDataWithoutAMemoryRegion() throws Exception {
        Future<String> content = this.executor.submit(() -> this.client.read(ExampleProtocols.READ_PORT));
        FakeConnection connection = awaitConnection();
        connection.privateData(ExampleProtocols.cString("Hello client!"));
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(failure(content)).isEqualTo(Failure.PROTOCOL);
        assertThat(connection.posted()).isEmpty();
    }

    @Test
    void pingPongSendsEachReplyBackAndEndsWithIAmDone() throws Exception {
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT, 40, 2));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        for (int round = 0; round < 2; round++) {
            int seen = round * 2;
            assertThat(this.fake.await(WAIT, () -> connection.posted().size() == seen + 2)).isTrue();
            List<PostedOperation> posted = connection.posted().subList(seen, seen + 2);
            assertThat(posted).extracting(PostedOperation::function).containsExactly("rpma_recv", "rpma_send");
            long sent = ByteBuffer.wrap(connection.sent().get(round)).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
            assertThat(sent).isEqualTo(40 + round);
            // the fake completed the signaled send; the server's answer fills the posted receive
            assertThat(connection.deliver(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, sent + 1)
                .array())).isTrue();
        }
        assertThat(this.fake.await(WAIT, () -> connection.posted().size() == 5)).isTrue();
        PostedOperation done = connection.posted().get(4);
        assertThat(done.function()).isEqualTo("rpma_send");
        assertThat(ByteBuffer.wrap(connection.sent().get(2)).order(ByteOrder.LITTLE_ENDIAN).getLong(0)).as("I_M_DONE")
            .isEqualTo(-1L);
        PingPongResult finished = result.get(30, TimeUnit.SECONDS);
        assertThat(finished.rounds()).isEqualTo(2);
        assertThat(finished.lastReply()).isEqualTo(42);
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void theServersCloseRightAfterIAmDoneEndsTheSessionNormally() throws Exception {
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT, 0, 0));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(this.fake.await(WAIT, () -> connection.posted().size() == 1)).isTrue();
        // the server got I_M_DONE and disconnected before the acknowledgement completed the send here
        connection.queueEvent(RpmaConnectionEvent.CLOSED);
        assertThat(result.get(30, TimeUnit.SECONDS).rounds()).isZero();
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void aReplyThatIsNotTheSuccessorIsAProtocolError() throws Exception {
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT, 7, 1));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(this.fake.await(WAIT, () -> connection.posted().size() == 2)).isTrue();
        List<PostedOperation> posted = connection.posted();
        ByteBuffer wrong = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 9);
        memoryOf(posted.get(0).localRegion()).write(0, wrong.array(), 0, 8);
        connection.completionQueue().queueSuccess(posted.get(1).context(), IBV_WC_SEND, 0);
        connection.completionQueue().queueSuccess(posted.get(0).context(), IBV_WC_RECV, 8);
        assertThat(failure(result)).isEqualTo(Failure.PROTOCOL);
    }

    @Test
    void aServerThatClosesTheConnectionDuringTheHoldEndsItAsConnectionLost() throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT,
                PingPongOptions.of(0, 0).holding(Duration.ofMinutes(5), null, holding::countDown)));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(holding.await(30, TimeUnit.SECONDS)).isTrue();
        connection.queueEvent(RpmaConnectionEvent.CLOSED);
        assertThat(failure(result)).isEqualTo(Failure.CONNECTION_LOST);
        assertThat(connection.posted()).as("no I_M_DONE on a closed connection").isEmpty();
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void aServerThatClosesTheConnectionMidRoundEndsItAsConnectionLost() throws Exception {
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT, 0, 1));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(this.fake.await(WAIT, () -> connection.posted().size() == 2)).isTrue();
        // a server's disconnect completes nothing this side posted: only the event tells
        connection.queueEvent(RpmaConnectionEvent.CLOSED);
        assertThat(failure(result)).isEqualTo(Failure.CONNECTION_LOST);
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void aReleasedHoldFinishesTheSession() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT,
                PingPongOptions.of(0, 0).holding(Duration.ofMinutes(5), release, release::countDown)));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(this.fake.await(WAIT, () -> connection.posted().size() == 1)).isTrue();
        connection.completionQueue().queueSuccess(connection.posted().get(0).context(), IBV_WC_SEND, 0);
        assertThat(result.get(30, TimeUnit.SECONDS).rounds()).isZero();
    }

    /**
     * A failed completion is named by what the client posted (its context), not by its opcode, which
     * verbs leaves undefined on error: a failed receive, often reported with opcode 0 (SEND), is the receive.
     */
    @Test
    void aFailedReceiveIsReportedAsTheReceiveWhateverItsOpcode() throws Exception {
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT, 7, 1));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(this.fake.await(WAIT, () -> connection.posted().size() == 2)).isTrue();
        List<PostedOperation> posted = connection.posted();
        connection.completionQueue().queueSuccess(posted.get(1).context(), IBV_WC_SEND, 0);
        connection.completionQueue().queue(new FakeCompletionQueue.Completion(posted.get(0).context(),
                CompletionStatus.REM_ACCESS_ERR, IBV_WC_SEND, 0, 0, 0, 0, 0, 0));
        assertThatThrownBy(() -> result.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(SampleClientException.class)
            .cause().hasMessage("The receive completed with IBV_WC_REM_ACCESS_ERR (10)")
            .satisfies((ex) -> assertThat(((SampleClientException) ex).failure()).isEqualTo(Failure.CONNECTION_LOST));
    }

    private FakeConnection awaitConnection() {
        assertThat(this.fake.await(WAIT, () -> !this.fake.connections().isEmpty())).as("the client connected").isTrue();
        return this.fake.lastConnection();
    }

    private static Failure failure(Future<?> future) throws InterruptedException {
        try {
            future.get(30, TimeUnit.SECONDS);
        }
        catch (ExecutionException ex) {
            assertThat(ex.getCause()).isInstanceOf(SampleClientException.class);
            return ((SampleClientException) ex.getCause()).failure();
        }
        catch (java.util.concurrent.TimeoutException ex) {
            throw new AssertionError("the client did not finish", ex);
        }
        throw new AssertionError("the client succeeded");
    }

    /** The registered memory of one of the client's regions ({@code rpma_mr_get_ptr}). */
    private Pointer memoryOf(long region) {
        try (Memory out = new Memory(8)) {
            assertThat(this.fake.rpma_mr_get_ptr(region, Pointer.nativeValue(out))).isZero();
            return new Pointer(out.getLong(0));
        }
    }

    /** A 21-byte memory region descriptor: u64 address, u64 length, u32 rkey, u8 usage. */
    private static byte[] descriptor(long address, long length, int rkey, int usage) {
        return ByteBuffer.allocate(21).order(ByteOrder.LITTLE_ENDIAN).putLong(address).putLong(length).putInt(rkey)
            .put((byte) usage).array();
    }
}

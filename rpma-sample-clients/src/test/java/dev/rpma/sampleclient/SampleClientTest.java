package dev.rpma.sampleclient;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
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

import dev.rpma.binding.CompletionStatus;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.testing.FakeCompletionQueue;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.PostedOperation;
import dev.rpma.sampleclient.SampleClientException.Failure;
import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.server.RpmaCommonData;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SampleClient} over the scripted librpma fake, which plays the server: what the client sends
 * on the wire, how it reads the server's answers, how each failure of its {@code RpmaClient} becomes a
 * {@link Failure}, and that every outcome leaves nothing allocated.
 */
class SampleClientTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final int IBV_WC_SEND = 0;

    private static final int IBV_WC_RDMA_READ = 2;

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
    void helloSendsTheGreetingWithItsNulAndReturnsTheServersOnceTheServerDisconnects() throws Exception {
        Future<String> reply = this.executor.submit(() -> this.client.hello(ExampleProtocols.HELLO_PORT));
        FakeConnection connection = awaitConnection();
        assertThat(connection.request().port()).isEqualTo("7204");
        assertThat(connection.request().connectPrivateData()).isEqualTo(ExampleProtocols.cString("Hello server!"));
        connection.privateData(Arrays.copyOf(ExampleProtocols.cString("Hello client!"), 196));
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(this.fake.await(Duration.ofMillis(300), reply::isDone))
            .as("example 01's client waits for the server's disconnect").isFalse();
        connection.queueEvent(RpmaConnectionEvent.CLOSED);
        assertThat(reply.get(30, TimeUnit.SECONDS)).isEqualTo("Hello client!");
        assertThat(connection.disconnects()).as("the client's disconnect answers the server's").isEqualTo(1);
        assertThat(connection.isDeleted()).isTrue();
        assertThat(this.fake.connections()).as("the call's connection is never made again").hasSize(1);
        assertThat(connection.sent()).as("the client sends no message").isEmpty();
    }

    @Test
    void helloReadsTheGreetingOfAServerThatDisconnectsRightAfterTheAccept() throws Exception {
        Future<String> reply = this.executor.submit(() -> this.client.hello(ExampleProtocols.HELLO_PORT));
        FakeConnection connection = awaitConnection();
        connection.privateData(ExampleProtocols.cString("Hello client!"));
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        connection.queueEvent(RpmaConnectionEvent.CLOSED);
        assertThat(reply.get(30, TimeUnit.SECONDS)).isEqualTo("Hello client!");
    }

    @Test
    void aRejectedRequestFailsAsRejectedAndDeletesTheConnection() throws Exception {
        Future<String> reply = this.executor.submit(() -> this.client.hello(ExampleProtocols.HELLO_PORT, "Hi"));
        FakeConnection connection = awaitConnection();
        assertThat(connection.request().connectPrivateData()).isEqualTo(ExampleProtocols.cString("Hi"));
        connection.queueEvent(RpmaConnectionEvent.REJECTED);
        assertThat(failure(reply)).isEqualTo(Failure.REJECTED);
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void anUnreachableServerFailsAsUnreachable() throws Exception {
        Future<String> content = this.executor.submit(() -> this.client.read(ExampleProtocols.READ_PORT));
        awaitConnection().queueEvent(RpmaConnectionEvent.UNREACHABLE);
        assertThat(failure(content)).isEqualTo(Failure.UNREACHABLE);
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
    void helloFailsAsTimeoutWhenTheServerNeverDisconnects() throws Exception {
        try (SampleClient impatient = SampleClient.open(Rpma.using(this.fake), "198.18.0.1", Duration.ofMillis(300))) {
            Future<String> reply = this.executor.submit(() -> impatient.hello(ExampleProtocols.HELLO_PORT));
            FakeConnection connection = awaitConnection();
            connection.privateData(ExampleProtocols.cString("Hello client!"));
            connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
            assertThat(failure(reply)).isEqualTo(Failure.TIMEOUT);
            assertThat(connection.isDeleted()).isTrue();
        }
    }

    @Test
    void readReadsTheRegionTheServerDescribesWithOneRpmaReadThenDisconnects() throws Exception {
        Future<String> content = this.executor.submit(() -> this.client.read(ExampleProtocols.READ_PORT));
        FakeConnection connection = awaitConnection();
        connection.privateData(RpmaCommonData.of(descriptor(0x7f00_1000L, 14, 0x1234, 1)).encode());
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(this.fake.await(WAIT, () -> !reads(connection).isEmpty())).isTrue();
        PostedOperation read = reads(connection).get(0);
        assertThat(read.length()).isEqualTo(14);
        assertThat(read.remoteOffset()).isZero();
        memoryOf(read.localRegion()).write(0, ExampleProtocols.cString("Hello client!"), 0, 14);
        connection.completionQueue().queueSuccess(read.context(), IBV_WC_RDMA_READ, 14);
        assertThat(content.get(30, TimeUnit.SECONDS)).isEqualTo("Hello client!");
        assertThat(reads(connection)).hasSize(1);
        assertThat(connection.disconnects()).as("the client disconnects, as example 02's does").isEqualTo(1);
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void readRefusesPrivateDataWithoutAMemoryRegion() throws Exception {
        Future<String> content = this.executor.submit(() -> this.client.read(ExampleProtocols.READ_PORT));
        FakeConnection connection = awaitConnection();
        connection.privateData(ExampleProtocols.cString("Hello client!"));
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(failure(content)).isEqualTo(Failure.PROTOCOL);
        assertThat(reads(connection)).isEmpty();
    }

    @Test
    void readRefusesARegionLargerThanItsBuffer() throws Exception {
        Future<String> content = this.executor.submit(() -> this.client.read(ExampleProtocols.READ_PORT));
        FakeConnection connection = awaitConnection();
        connection.privateData(RpmaCommonData.of(descriptor(0x7f00_1000L, SampleClient.READ_BUFFER_SIZE + 1, 0x1234, 1))
            .encode());
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThatThrownBy(() -> content.get(30, TimeUnit.SECONDS)).cause().isInstanceOf(SampleClientException.class)
            .hasMessageContaining("1025 bytes after offset 0");
        assertThat(reads(connection)).isEmpty();
    }

    @Test
    void pingPongSendsEachCounterAsEightLittleEndianBytesAndEndsWithIAmDone() throws Exception {
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT,
                40, 2));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        for (int round = 0; round < 2; round++) {
            assertThat(connection.awaitSent(round + 1, WAIT)).isTrue();
            byte[] sent = connection.sent().get(round);
            assertThat(sent).hasSize(8);
            assertThat(littleEndian(sent)).isEqualTo(40 + round);
            assertThat(connection.deliver(message(littleEndian(sent) + 1))).isTrue();
        }
        assertThat(connection.awaitSent(3, WAIT)).isTrue();
        assertThat(connection.sent().get(2)).as("I_M_DONE").isEqualTo(message(-1L));
        assertThat(this.fake.await(Duration.ofMillis(300), result::isDone))
            .as("the client waits for the server's disconnect after I_M_DONE").isFalse();
        connection.queueEvent(RpmaConnectionEvent.CLOSED);
        PingPongResult finished = result.get(30, TimeUnit.SECONDS);
        assertThat(finished.rounds()).isEqualTo(2);
        assertThat(finished.lastReply()).isEqualTo(42);
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void aReplyThatIsNotTheSuccessorIsAProtocolError() throws Exception {
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT,
                7, 1));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(connection.awaitSent(1, WAIT)).isTrue();
        connection.deliver(message(9));
        assertThatThrownBy(() -> result.get(30, TimeUnit.SECONDS)).cause().isInstanceOf(SampleClientException.class)
            .hasMessage("Round 1: sent 7, the server answered 9 instead of 8");
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void aServerThatClosesTheConnectionDuringTheHoldEndsItAsConnectionLost() throws Exception {
        HeldCall held = startHolding();
        Future<PingPongResult> result = held.result();
        FakeConnection connection = held.connection();
        connection.queueEvent(RpmaConnectionEvent.CLOSED);
        assertThat(failure(result)).isEqualTo(Failure.CONNECTION_LOST);
        assertThat(connection.sent()).as("no I_M_DONE on a closed connection").isEmpty();
        assertThat(connection.isDeleted()).isTrue();
    }

    @Test
    void aServerThatClosesTheConnectionMidRoundEndsItAsConnectionLost() throws Exception {
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT,
                0, 1));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(connection.awaitSent(1, WAIT)).isTrue();
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
        assertThat(connection.awaitSent(1, WAIT)).isTrue();
        assertThat(connection.sent().get(0)).as("I_M_DONE").isEqualTo(message(-1L));
        connection.queueEvent(RpmaConnectionEvent.CLOSED);
        assertThat(result.get(30, TimeUnit.SECONDS).rounds()).isZero();
    }

    @Test
    void aFailedReceiveEndsTheSessionAsConnectionLost() throws Exception {
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT,
                7, 1));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(connection.awaitSent(1, WAIT)).isTrue();
        // the client posts its receives on the request, before the connect
        PostedOperation receive = connection.request().receives().get(0);
        // verbs leaves a failed completion's opcode undefined, often SEND: the client goes by what it posted
        connection.completionQueue().queue(new FakeCompletionQueue.Completion(receive.context(),
                CompletionStatus.REM_ACCESS_ERR, IBV_WC_SEND, 0, 0, 0, 0, 0, 0));
        assertThatThrownBy(() -> result.get(30, TimeUnit.SECONDS)).cause().isInstanceOf(SampleClientException.class)
            .hasMessageContaining("a receive completed with IBV_WC_REM_ACCESS_ERR (10)")
            .satisfies((ex) -> assertThat(((SampleClientException) ex).failure()).isEqualTo(Failure.CONNECTION_LOST));
    }

    @Test
    void closingTheClientEndsTheCallsInProgressAndRefusesNewOnes() throws Exception {
        HeldCall held = startHolding();
        Future<PingPongResult> result = held.result();
        FakeConnection connection = held.connection();
        this.client.close();
        assertThat(failure(result)).isEqualTo(Failure.CONNECTION_LOST);
        assertThat(connection.disconnects()).isEqualTo(1);
        assertThat(connection.isDeleted()).isTrue();
        assertThatThrownBy(() -> this.client.hello(ExampleProtocols.HELLO_PORT))
            .isInstanceOfSatisfying(SampleClientException.class,
                    (ex) -> assertThat(ex.failure()).isEqualTo(Failure.CONNECTION_LOST));
        assertThat(this.fake.connections()).hasSize(1);
    }

    /** A ping-pong call of no rounds holding its established connection. */
    private record HeldCall(Future<PingPongResult> result, FakeConnection connection) {
    }

    private HeldCall startHolding() throws Exception {
        CountDownLatch holding = new CountDownLatch(1);
        Future<PingPongResult> result = this.executor.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT,
                PingPongOptions.of(0, 0).holding(Duration.ofMinutes(5), null, holding::countDown)));
        FakeConnection connection = awaitConnection();
        connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
        assertThat(holding.await(30, TimeUnit.SECONDS)).isTrue();
        return new HeldCall(result, connection);
    }

    private FakeConnection awaitConnection() {
        assertThat(this.fake.await(WAIT, () -> !this.fake.connections().isEmpty())).as("the client connected").isTrue();
        return this.fake.lastConnection();
    }

    private static List<PostedOperation> reads(FakeConnection connection) {
        return connection.posted().stream().filter((op) -> op.function().equals("rpma_read")).toList();
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

    private static byte[] message(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value).array();
    }

    private static long littleEndian(byte[] message) {
        return ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
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

package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.binding.testing.FakeCompletionQueue;
import dev.rpma.binding.testing.FakeConnection;

/**
 * The data path of {@link dev.rpma.binding.testing.FakeLibRpma} through the typed API: completion
 * channels with the verbs arming rules, receives filled by the other side's messages, sends read
 * from registered memory, queue limits, and what a broken queue pair flushes. The event loops are
 * tested on this model, so it is held to what a device does.
 */
class FakeDataPathTest {

    private static final int IBV_WC_SEND = 0;

    private static final int IBV_WC_RECV = 128;

    private static final int IBV_WC_LOC_LEN_ERR = 1;

    private static final int IBV_WC_WR_FLUSH_ERR = 5;

    private final FakeRig rig = new FakeRig();

    private final RpmaCompletions batch = new RpmaCompletions(16);

    @AfterEach
    void close() {
        this.rig.close();
    }

    private RpmaConnection nonBlockingConnection() {
        RpmaConnection connection = this.rig.connection();
        FileDescriptors.setBlocking(connection.completionQueue().fd(), false);
        return connection;
    }

    @Test
    void anArmedQueueReportsOneEventAndReArmingDoesNotReportWhatIsAlreadyQueued() {
        RpmaConnection connection = nonBlockingConnection();
        FakeCompletionQueue cq = this.rig.fake.lastConnection().completionQueue();
        assertThat(cq.isArmed()).as("librpma arms a new queue").isTrue();

        cq.queueSuccess(1, IBV_WC_SEND, 0);
        cq.queueSuccess(2, IBV_WC_SEND, 0);
        assertThat(cq.pendingEvents()).as("one event for both: the first disarmed the queue").isOne();
        assertThat(cq.isArmed()).isFalse();

        assertThat(connection.completionQueue().await()).isTrue();
        assertThat(cq.isArmed()).isTrue();
        assertThat(connection.completionQueue().await()).as("no second event").isFalse();
        // both completions are still there after the re-arm, reported by no event: only a drain finds them
        assertThat(connection.completionQueue().poll(this.batch)).isEqualTo(2);

        cq.queueSuccess(3, IBV_WC_SEND, 0);
        assertThat(cq.pendingEvents()).as("a completion after the re-arm raises an event").isOne();
        assertThat(connection.completionQueue().poll(this.batch)).isOne();
        assertThat(cq.pendingEvents()).as("taking completions leaves the event").isOne();
    }

    @Test
    void theChannelFdIsReadableExactlyWhileAnEventIsThere() {
        RpmaConnection connection = nonBlockingConnection();
        FakeCompletionQueue cq = this.rig.fake.lastConnection().completionQueue();
        int fd = connection.completionQueue().fd();
        try (dev.rpma.binding.io.Epoll epoll = new dev.rpma.binding.io.Epoll(1)) {
            epoll.add(fd, 1);
            assertThat(epoll.await(0)).isZero();
            cq.queueSuccess(1, IBV_WC_SEND, 0);
            assertThat(epoll.await(0)).isOne();
            connection.completionQueue().await();
            assertThat(epoll.await(0)).isZero();
            epoll.remove(fd);
        }
    }

    @Test
    void waitingOnABlockingChannelWithoutAnEventIsCaught() {
        RpmaConnection connection = this.rig.connection();
        assertThatThrownBy(() -> connection.completionQueue().await()).isInstanceOf(AssertionError.class)
            .hasMessageContaining("would block");
        this.rig.fake.clearViolations();
    }

    @Test
    void aMessageFillsTheOldestReceiveAndCompletesWithItsLength() {
        RpmaConnection connection = nonBlockingConnection();
        FakeConnection peer = this.rig.fake.lastConnection();
        ByteBuffer memory = ByteBuffer.allocateDirect(32).order(ByteOrder.LITTLE_ENDIAN);
        RpmaMemoryRegion region = this.rig.track(this.rig.peer.register(memory, MemoryUsage.RECV));
        connection.receive(region, 0, 16, 10);
        connection.receive(region, 16, 16, 11);
        assertThat(peer.postedReceives()).isEqualTo(2);

        assertThat(peer.deliver(new byte[] { 1, 2, 3 })).isTrue();
        assertThat(connection.completionQueue().poll(this.batch)).isOne();
        assertThat(this.batch.context(0)).isEqualTo(10);
        assertThat(this.batch.opcodeValue(0)).isEqualTo(IBV_WC_RECV);
        assertThat(this.batch.byteLength(0)).isEqualTo(3);
        assertThat(memory.get(0)).isEqualTo((byte) 1);
        assertThat(memory.get(2)).isEqualTo((byte) 3);
        assertThat(peer.postedReceives()).isOne();
    }

    @Test
    void aMessageWithoutAReceiveWaitsForTheNextOne() {
        RpmaConnection connection = nonBlockingConnection();
        FakeConnection peer = this.rig.fake.lastConnection();
        ByteBuffer memory = ByteBuffer.allocateDirect(8);
        RpmaMemoryRegion region = this.rig.track(this.rig.peer.register(memory, MemoryUsage.RECV));
        assertThat(peer.deliver(new byte[] { 9 })).isFalse();
        assertThat(peer.undelivered()).isOne();
        assertThat(connection.completionQueue().poll(this.batch)).isZero();

        connection.receive(region, 0, 8, 5);
        assertThat(peer.undelivered()).isZero();
        assertThat(connection.completionQueue().poll(this.batch)).isOne();
        assertThat(this.batch.byteLength(0)).isOne();
        assertThat(memory.get(0)).isEqualTo((byte) 9);
    }

    @Test
    void receivesPostedOnTheRequestWaitOnTheConnection() {
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        ByteBuffer memory = ByteBuffer.allocateDirect(8);
        RpmaMemoryRegion region = this.rig.track(this.rig.peer.register(memory, MemoryUsage.RECV));
        request.receive(region, 0, 8, 42);
        RpmaConnection connection = this.rig.track(request.connect());
        FileDescriptors.setBlocking(connection.completionQueue().fd(), false);
        assertThat(this.rig.fake.lastConnection().deliver(new byte[] { 4, 2 })).isTrue();
        assertThat(connection.completionQueue().poll(this.batch)).isOne();
        assertThat(this.batch.context(0)).isEqualTo(42);
        assertThat(memory.get(1)).isEqualTo((byte) 2);
    }

    @Test
    void aMessageLongerThanItsReceiveFailsItAndBreaksTheQueuePair() {
        RpmaConnection connection = nonBlockingConnection();
        FakeConnection peer = this.rig.fake.lastConnection();
        RpmaMemoryRegion region = this.rig.region(16, MemoryUsage.RECV);
        connection.receive(region, 0, 8, 1);
        connection.receive(region, 8, 8, 2);
        peer.deliver(new byte[9]);
        assertThat(connection.completionQueue().poll(this.batch)).isEqualTo(2);
        assertThat(this.batch.status(0)).isEqualTo(IBV_WC_LOC_LEN_ERR);
        assertThat(this.batch.context(0)).isEqualTo(1);
        assertThat(this.batch.status(1)).as("the other receive is flushed").isEqualTo(IBV_WC_WR_FLUSH_ERR);
        assertThat(this.batch.opcodeValue(1)).as("undefined for an error completion")
            .isEqualTo(FakeConnection.FLUSHED_OPCODE);
        assertThat(peer.isBroken()).isTrue();
        assertThat(peer.deliver(new byte[1])).isFalse();
    }

    @Test
    void aSendReadsItsRegisteredBytesAndASignaledOneCompletes() {
        RpmaConnection connection = nonBlockingConnection();
        FakeConnection peer = this.rig.fake.lastConnection();
        ByteBuffer memory = ByteBuffer.allocateDirect(16);
        RpmaMemoryRegion region = this.rig.track(this.rig.peer.register(memory, MemoryUsage.SEND));
        memory.put(4, (byte) 7).put(5, (byte) 8);
        connection.send(region, 4, 2, CompletionMode.ALWAYS, 77);
        connection.send(region, 4, 1, CompletionMode.ON_ERROR, 78);
        assertThat(peer.sent()).containsExactly(new byte[] { 7, 8 }, new byte[] { 7 });
        assertThat(connection.completionQueue().poll(this.batch)).as("the unsignaled send completes silently").isOne();
        assertThat(this.batch.context(0)).isEqualTo(77);
        assertThat(this.batch.opcodeValue(0)).isEqualTo(IBV_WC_SEND);
    }

    @Test
    void aFullSendQueueRefusesUntilASignaledCompletionIsTaken() {
        RpmaConnection connection = nonBlockingConnection();
        RpmaMemoryRegion region = this.rig.region(8, MemoryUsage.SEND);
        // librpma's default send queue holds 10; unsignaled sends keep their slots until a signaled one completes
        for (int i = 0; i < 9; i++) {
            connection.send(region, 0, 8, CompletionMode.ON_ERROR, i);
        }
        connection.send(region, 0, 8, CompletionMode.ALWAYS, 9);
        assertThatThrownBy(() -> connection.send(region, 0, 8, CompletionMode.ALWAYS, 10))
            .isInstanceOfSatisfying(RpmaException.class, (ex) -> {
                assertThat(ex.error()).isEqualTo(RpmaError.PROVIDER);
                assertThat(ex.errno()).isEqualTo(Errno.ENOMEM);
            });
        assertThat(connection.completionQueue().poll(this.batch)).isOne();
        connection.send(region, 0, 8, CompletionMode.ALWAYS, 11);
    }

    @Test
    void aFullReceiveQueueRefuses() {
        RpmaConnection connection = nonBlockingConnection();
        RpmaMemoryRegion region = this.rig.region(8, MemoryUsage.RECV);
        for (int i = 0; i < 10; i++) {
            connection.receive(region, 0, 8, i);
        }
        assertThatThrownBy(() -> connection.receive(region, 0, 8, 10)).isInstanceOfSatisfying(RpmaException.class,
                (ex) -> assertThat(ex.errno()).isEqualTo(Errno.ENOMEM));
    }

    @Test
    void aSendWaitsForTheOtherSidesReceiveWhenThoseAreCounted() {
        RpmaConnection connection = nonBlockingConnection();
        FakeConnection peer = this.rig.fake.lastConnection().peerReceives(1);
        RpmaMemoryRegion region = this.rig.region(8, MemoryUsage.SEND);
        connection.send(region, 0, 8, CompletionMode.ALWAYS, 1);
        connection.send(region, 0, 8, CompletionMode.ALWAYS, 2);
        assertThat(peer.sent()).hasSize(1);
        assertThat(peer.sendsWaitingForPeer()).isOne();
        assertThat(connection.completionQueue().poll(this.batch)).isOne();
        peer.grantPeerReceives(1);
        assertThat(peer.awaitSent(2, Duration.ofSeconds(1))).isTrue();
        assertThat(connection.completionQueue().poll(this.batch)).isOne();
        assertThat(this.batch.context(0)).isEqualTo(2);
    }

    @Test
    void aDisconnectFlushesPostedReceivesAndWaitingSends() {
        RpmaConnection connection = nonBlockingConnection();
        FakeConnection peer = this.rig.fake.lastConnection().peerReceives(0);
        RpmaMemoryRegion receive = this.rig.region(8, MemoryUsage.RECV);
        RpmaMemoryRegion send = this.rig.region(8, MemoryUsage.SEND);
        connection.receive(receive, 0, 8, 1);
        connection.send(send, 0, 8, CompletionMode.ALWAYS, 2);
        connection.disconnect();
        assertThat(connection.completionQueue().poll(this.batch)).isEqualTo(2);
        assertThat(this.batch.status(0)).isEqualTo(IBV_WC_WR_FLUSH_ERR);
        assertThat(this.batch.status(1)).isEqualTo(IBV_WC_WR_FLUSH_ERR);
        connection.receive(receive, 0, 8, 3);
        assertThat(connection.completionQueue().poll(this.batch)).as("posting on a broken queue pair flushes").isOne();
        assertThat(this.batch.context(0)).isEqualTo(3);
        assertThat(peer.sent()).isEmpty();
    }

    @Test
    void receivesCompleteOnTheReceiveQueueWhenThereIsOne() {
        try (RpmaConnectionConfig config = this.rig.rpma.newConnectionConfig().rcqSize(4)) {
            this.rig.script.queueRequest(new byte[] { 1 });
            RpmaConnection connection = this.rig.track(this.rig.endpoint.nextConnectionRequest(config).connect());
            RpmaMemoryRegion region = this.rig.region(8, MemoryUsage.RECV);
            connection.receive(region, 0, 8, 1);
            this.rig.fake.lastConnection().deliver(new byte[] { 1 });
            assertThat(connection.completionQueue().poll(this.batch)).isZero();
            assertThat(connection.receiveCompletionQueue().poll(this.batch)).isOne();
        }
    }

    @Test
    void misusedRegionsAndOverrunQueuesAreViolations() {
        RpmaConnection connection = nonBlockingConnection();
        RpmaMemoryRegion sendOnly = this.rig.region(8, MemoryUsage.SEND);
        RpmaMemoryRegion receiveOnly = this.rig.region(8, MemoryUsage.RECV);
        assertThatThrownBy(() -> connection.receive(sendOnly, 0, 8, 1)).isInstanceOf(AssertionError.class)
            .hasMessageContaining("RPMA_MR_USAGE_RECV");
        assertThatThrownBy(() -> connection.send(receiveOnly, 0, 8, CompletionMode.ALWAYS, 1))
            .isInstanceOf(AssertionError.class).hasMessageContaining("RPMA_MR_USAGE_SEND");
        assertThatThrownBy(() -> connection.receive(receiveOnly, 4, 8, 1)).isInstanceOf(AssertionError.class)
            .hasMessageContaining("outside the region");
        this.rig.fake.clearViolations();

        FakeCompletionQueue cq = this.rig.fake.lastConnection().completionQueue();
        for (int i = 0; i <= 10; i++) {
            cq.queueSuccess(i, IBV_WC_SEND, 0);
        }
        assertThat(this.rig.fake.violations()).singleElement().asString().contains("overrun");
        this.rig.fake.clearViolations();
        connection.completionQueue().poll(this.batch);
    }
}

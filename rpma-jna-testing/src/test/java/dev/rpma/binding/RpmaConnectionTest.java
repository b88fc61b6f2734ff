package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.io.FdPoller;
import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.binding.testing.FakeCompletionQueue;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeStall;
import dev.rpma.binding.testing.PostedOperation;

/** {@link RpmaConnection} over the scripted fake: events, private data, queues, data path, teardown. */
class RpmaConnectionTest {

    private final FakeRig rig = new FakeRig();

    @AfterEach
    void close() {
        this.rig.close();
    }

    @Test
    void eventsInOrderThenNullWhenNoneIsWaiting() {
        RpmaConnection connection = this.rig.connection();
        FakeConnection scripted = this.rig.fake.lastConnection();

        assertThat(connection.nextEvent()).isEqualTo(RpmaConnectionEvent.ESTABLISHED);
        assertThat(connection.nextEvent()).as("EAGAIN").isNull();
        scripted.queueEventFailure(RpmaError.NO_EVENT.code(), Errno.ENODATA);
        assertThat(connection.nextEvent()).as("NO_EVENT").isNull();
        scripted.queueEvent(RpmaConnectionEvent.CLOSED).queueEvent(RpmaConnectionEvent.CLOSED);
        assertThat(connection.nextEvent()).isEqualTo(RpmaConnectionEvent.CLOSED);
        assertThat(connection.nextEvent()).as("CLOSED may come twice").isEqualTo(RpmaConnectionEvent.CLOSED);
        scripted.queueEventCode(17);
        assertThat(connection.nextEvent()).isEqualTo(RpmaConnectionEvent.UNDEFINED);
    }

    @Test
    void eventFailuresThrow() {
        RpmaConnection connection = this.rig.connection();
        FakeConnection scripted = this.rig.fake.lastConnection();
        scripted.queueEventFailure(RpmaError.UNKNOWN.code(), 0).queueEventFailure(RpmaError.PROVIDER.code(), Errno.EBADF);

        assertThat(connection.nextEvent()).isEqualTo(RpmaConnectionEvent.ESTABLISHED);
        assertThatThrownBy(connection::nextEvent).isInstanceOfSatisfying(RpmaException.class, ex -> {
            assertThat(ex.error()).isEqualTo(RpmaError.UNKNOWN);
            assertThat(ex.function()).isEqualTo("rpma_conn_next_event");
            assertThat(ex.errno()).as("errno only for PROVIDER").isZero();
        });
        assertThatThrownBy(connection::nextEvent).isInstanceOfSatisfying(RpmaException.class,
                ex -> assertThat(ex.errno()).isEqualTo(Errno.EBADF));
    }

    @Test
    void eventFdIsReadableWhileEventsWait() {
        RpmaConnection connection = this.rig.connection();
        int fd = connection.eventFd();
        assertThat(fd).isEqualTo(this.rig.fake.lastConnection().eventFd());
        connection.configureEventsBlocking(false);
        assertThat(FileDescriptors.isBlocking(fd)).isFalse();
        try (FdPoller poller = new FdPoller(1)) {
            int[] fds = { fd };
            assertThat(poller.await(fds, 1, 1000)).as("ESTABLISHED waiting").isOne();
            connection.nextEvent();
            assertThat(poller.await(fds, 1, 0)).isZero();
        }
    }

    @Test
    void privateDataIsTheRequestsCopied() {
        RpmaConnection connection = this.rig.track(this.rig.request("Hello server!\0".getBytes()).connect());
        assertThat(connection.privateData()).containsExactly("Hello server!\0".getBytes());
        this.rig.fake.lastConnection().privateData(new byte[0]);
        assertThat(connection.privateData()).isEmpty();
    }

    @Test
    void queuePairAndCompletionQueues() {
        RpmaConnection connection = this.rig.connection();
        FakeConnection scripted = this.rig.fake.lastConnection();
        assertThat(connection.qpNumber()).isEqualTo(scripted.qpNumber());
        assertThat(connection.peer()).isSameAs(this.rig.peer);
        assertThat(connection.completionQueue()).isNotNull();
        assertThat(connection.receiveCompletionQueue()).as("rcq size 0 by default").isNull();
        assertThat(connection.completionQueue().fd()).isEqualTo(scripted.completionQueue().fd()).isPositive();
    }

    @Test
    void receiveCompletionQueueWhenConfigured() {
        try (RpmaConnectionConfig config = this.rig.rpma.newConnectionConfig().rcqSize(8)) {
            this.rig.script.queueRequest(new byte[] { 1 });
            RpmaConnectionRequest request = this.rig.track(this.rig.endpoint.nextConnectionRequest(config));
            RpmaConnection connection = this.rig.track(request.connect());
            assertThat(connection.receiveCompletionQueue()).isNotNull().isNotSameAs(connection.completionQueue());
        }
    }

    @Test
    void dataPathPassesEveryArgument() {
        RpmaConnection connection = this.rig.connection();
        RpmaMemoryRegion local = this.rig.region(4096, MemoryUsage.SEND, MemoryUsage.RECV, MemoryUsage.READ_DST,
                MemoryUsage.WRITE_SRC);
        RpmaRemoteMemoryRegion remote = this.rig.remoteRegion();

        connection.send(local, 8, 16, CompletionMode.ALWAYS, 101);
        connection.sendWithImmediate(local, 0, 4, CompletionMode.ON_ERROR, 0xCAFE_BABE, 102);
        connection.receive(local, 64, 128, 103);
        connection.read(local, 1, remote, 2, 3, CompletionMode.ALWAYS, 104);
        connection.write(remote, 5, local, 6, 7, CompletionMode.ON_ERROR, 105);
        connection.writeWithImmediate(remote, 9, local, 10, 11, CompletionMode.ALWAYS, 12, 106);
        connection.atomicWrite(remote, 16, 0x0102_0304_0506_0708L, CompletionMode.ALWAYS, 107);
        connection.flush(remote, 0, 4096, FlushType.VISIBILITY, CompletionMode.ALWAYS, 108);

        List<PostedOperation> posted = this.rig.fake.lastConnection().posted();
        assertThat(posted).extracting(PostedOperation::function).containsExactly("rpma_send", "rpma_send_with_imm",
                "rpma_recv", "rpma_read", "rpma_write", "rpma_write_with_imm", "rpma_atomic_write", "rpma_flush");
        assertThat(posted).extracting(PostedOperation::context).containsExactly(101L, 102L, 103L, 104L, 105L, 106L,
                107L, 108L);
        assertThat(posted).extracting(PostedOperation::flags).containsExactly(3, 1, 0, 3, 1, 3, 3, 3);
        assertThat(posted.get(0)).extracting(PostedOperation::localOffset, PostedOperation::length).containsExactly(8L, 16L);
        assertThat(posted.get(1).immediate()).isEqualTo(0xCAFE_BABEL);
        assertThat(posted.get(2)).extracting(PostedOperation::localOffset, PostedOperation::length)
                .containsExactly(64L, 128L);
        assertThat(posted.get(3)).extracting(PostedOperation::localOffset, PostedOperation::remoteOffset,
                PostedOperation::length).containsExactly(1L, 2L, 3L);
        assertThat(posted.get(4)).extracting(PostedOperation::remoteOffset, PostedOperation::localOffset,
                PostedOperation::length).containsExactly(5L, 6L, 7L);
        assertThat(posted.get(5).immediate()).isEqualTo(12);
        assertThat(posted.get(6)).extracting(PostedOperation::remoteOffset, PostedOperation::immediate)
                .containsExactly(16L, 0x0102_0304_0506_0708L);
        assertThat(posted.get(7)).extracting(PostedOperation::length, PostedOperation::immediate)
                .containsExactly(4096L, 1L);
        assertThat(posted.get(0).localRegion()).isEqualTo(posted.get(3).localRegion()).isNotZero();
        assertThat(posted.get(3).remoteRegion()).isEqualTo(posted.get(7).remoteRegion()).isNotZero();
    }

    @Test
    void dataPathFailureIsReportedWithTheFunction() {
        RpmaConnection connection = this.rig.connection();
        RpmaMemoryRegion local = this.rig.region(64, MemoryUsage.SEND);
        this.rig.fake.failNext("rpma_send", RpmaError.PROVIDER.code(), Errno.ENOMEM);
        assertThatThrownBy(() -> connection.send(local, 0, 8, CompletionMode.ALWAYS, 1))
                .isInstanceOfSatisfying(RpmaException.class, ex -> {
                    assertThat(ex.function()).isEqualTo("rpma_send");
                    assertThat(ex.errno()).isEqualTo(Errno.ENOMEM);
                });
    }

    @Test
    void completionsAreReadAtTheirOffsets() {
        RpmaConnection connection = this.rig.connection();
        FakeCompletionQueue cq = this.rig.fake.lastConnection().completionQueue();
        RpmaCompletions batch = new RpmaCompletions(4);
        FileDescriptors.setBlocking(connection.completionQueue().fd(), false);

        assertThat(connection.completionQueue().poll(batch)).isZero();
        assertThat(connection.completionQueue().await()).as("NO_COMPLETION").isFalse();

        cq.queue(new FakeCompletionQueue.Completion(0x1122_3344_5566_7788L, 0, 128, 0, 8,
                Integer.reverseBytes(0x0A0B_0C0D), 0x111, 0x222, RpmaCompletions.FLAG_WITH_IMM));
        cq.queue(new FakeCompletionQueue.Completion(2, 5, 0, 0x99, 0, 0, 0x111, 0, 0));
        assertThat(connection.completionQueue().await()).isTrue();
        assertThat(connection.completionQueue().poll(batch)).isEqualTo(2);

        assertThat(batch.size()).isEqualTo(2);
        assertThat(batch.context(0)).isEqualTo(0x1122_3344_5566_7788L);
        assertThat(batch.isSuccess(0)).isTrue();
        assertThat(batch.opcode(0)).isEqualTo(RpmaOpcode.RECV);
        assertThat(batch.byteLength(0)).isEqualTo(8);
        assertThat(batch.hasImmediate(0)).isTrue();
        assertThat(batch.immediate(0)).as("host order").isEqualTo(0x0A0B_0C0D);
        assertThat(batch.qpNumber(0)).isEqualTo(0x111);
        assertThat(batch.sourceQp(0)).isEqualTo(0x222);
        assertThat(batch.get(0)).isEqualTo(new RpmaCompletion(0x1122_3344_5566_7788L, 0, RpmaOpcode.RECV, 8, 0x0A0B_0C0D,
                true, 0x111, 0));
        assertThat(batch.status(1)).isEqualTo(5);
        assertThat(batch.isSuccess(1)).isFalse();
        assertThat(batch.vendorError(1)).isEqualTo(0x99);
        assertThat(batch.get(1).hasImmediate()).isFalse();
        assertThat(batch.get(1).immediate()).isZero();
        assertThatThrownBy(() -> batch.context(2)).isInstanceOf(IndexOutOfBoundsException.class);

        assertThat(connection.completionQueue().poll(batch)).isZero();
        assertThat(batch.size()).isZero();
        assertThatThrownBy(() -> new RpmaCompletions(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void pollTakesAtMostTheBatchCapacity() {
        RpmaConnection connection = this.rig.connection();
        FakeCompletionQueue cq = this.rig.fake.lastConnection().completionQueue();
        for (int i = 0; i < 5; i++) {
            cq.queueSuccess(i, 0, 0);
        }
        RpmaCompletions batch = new RpmaCompletions(3);
        assertThat(connection.completionQueue().poll(batch)).isEqualTo(3);
        assertThat(connection.completionQueue().poll(batch)).isEqualTo(2);
        assertThat(batch.context(1)).isEqualTo(4);
    }

    @Test
    void sharedCompletionChannel() {
        RpmaConnection plain = this.rig.connection();
        assertThatThrownBy(plain::awaitCompletion).isInstanceOfSatisfying(RpmaException.class,
                ex -> assertThat(ex.error()).isEqualTo(RpmaError.NOT_SHARED_CHNL));
        assertThatThrownBy(plain::completionFd).isInstanceOf(RpmaException.class);

        try (RpmaConnectionConfig config = this.rig.rpma.newConnectionConfig().sharedCompletionChannel(true).rcqSize(4)) {
            this.rig.script.queueRequest(new byte[] { 1 });
            RpmaConnection shared = this.rig.track(this.rig.endpoint.nextConnectionRequest(config).connect());
            FakeConnection scripted = this.rig.fake.lastConnection();
            assertThat(shared.completionFd()).isPositive();
            FileDescriptors.setBlocking(shared.completionFd(), false);
            assertThat(shared.awaitCompletion()).as("NO_COMPLETION").isNull();
            scripted.receiveCompletionQueue().queueSuccess(1, 128, 8);
            assertThat(shared.awaitCompletion()).isSameAs(shared.receiveCompletionQueue());
            scripted.completionQueue().queueSuccess(2, 0, 0);
            assertThat(shared.awaitCompletion()).isSameAs(shared.completionQueue());
        }
    }

    @Test
    void serverTeardownDisconnectsThenDeletesOnce() {
        RpmaConnection connection = this.rig.connection();
        FakeConnection scripted = this.rig.fake.lastConnection();
        assertThat(connection.nextEvent()).isEqualTo(RpmaConnectionEvent.ESTABLISHED);
        scripted.queueEvent(RpmaConnectionEvent.CLOSED);
        assertThat(connection.nextEvent()).isEqualTo(RpmaConnectionEvent.CLOSED);
        connection.disconnect();
        connection.close();
        connection.close();

        assertThat(scripted.disconnects()).isOne();
        assertThat(this.rig.fake.calls("rpma_conn_delete")).isOne();
        assertThat(scripted.isDeleted()).isTrue();
        assertThat(this.rig.peer.openChildren()).isOne();
        assertThat(connection).hasToString("RpmaConnection[closed]");
    }

    @Test
    void deleteFailureStillClosesTheConnection() {
        RpmaConnection connection = this.rig.connection();
        this.rig.fake.failNext("rpma_conn_delete", RpmaError.PROVIDER.code(), Errno.EBUSY);
        assertThatThrownBy(connection::close).isInstanceOfSatisfying(RpmaException.class,
                ex -> assertThat(ex.errno()).isEqualTo(Errno.EBUSY));
        assertThat(connection.isClosed()).isTrue();
        assertThat(this.rig.peer.openChildren()).isOne();
    }

    @Test
    void closeIfIdleDoesNotWaitForACallInFlightAndDeletesOnceItReturned() throws Exception {
        RpmaConnection connection = this.rig.connection();
        FakeConnection scripted = this.rig.fake.lastConnection();
        FakeStall stall = this.rig.fake.stallNext("rpma_cq_wait");
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> connection.completionQueue().await());
        assertThat(stall.awaitEntered(Duration.ofSeconds(10))).isTrue();

        assertThat(connection.closeIfIdle()).as("a call is in flight").isFalse();
        assertThat(connection.isClosed()).as("no new call starts").isTrue();
        assertThatThrownBy(connection::qpNumber).isInstanceOf(IllegalStateException.class);
        assertThat(connection.closeIfIdle()).isFalse();
        assertThat(scripted.isDeleted()).isFalse();

        scripted.completionQueue().queueSuccess(1, FakeConnection.FLUSHED_OPCODE, 0);
        stall.release();
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(connection.closeIfIdle()).isTrue();
        assertThat(connection.closeIfIdle()).isTrue();
        connection.close();
        assertThat(scripted.isDeleted()).isTrue();
        assertThat(this.rig.fake.calls("rpma_conn_delete")).isOne();
        assertThat(this.rig.peer.openChildren()).isOne();
    }

    @Test
    void closeIfIdleOnAnIdleConnectionDeletesItAtOnce() {
        RpmaConnection connection = this.rig.connection();
        assertThat(connection.closeIfIdle()).isTrue();
        assertThat(this.rig.fake.lastConnection().isDeleted()).isTrue();
        connection.close();
        assertThat(this.rig.fake.calls("rpma_conn_delete")).isOne();
    }

    @Test
    void failureWhileWrappingAConnectionDeletesIt() {
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        this.rig.fake.failNext("rpma_conn_get_cq", RpmaError.INVAL);
        assertThatThrownBy(request::connect).isInstanceOfSatisfying(RpmaException.class,
                ex -> assertThat(ex.function()).isEqualTo("rpma_conn_get_cq"));
        FakeConnection scripted = this.rig.fake.lastConnection();
        assertThat(scripted.disconnects()).isOne();
        assertThat(scripted.isDeleted()).isTrue();
        assertThat(this.rig.peer.openChildren()).isOne();
        assertThat(this.rig.fake.liveHandles(FakeLibRpma.Kind.CONN)).isEmpty();
    }

    @Test
    void applyRemotePeerConfig() {
        RpmaConnection connection = this.rig.connection();
        try (RpmaPeerConfig config = this.rig.rpma.peerConfigFromDescriptor(new byte[] { 1 })) {
            connection.applyRemotePeerConfig(config);
        }
        assertThat(this.rig.fake.calls("rpma_conn_apply_remote_peer_cfg")).isOne();
    }
}

package dev.rpma.binding.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import com.sun.jna.Memory;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.io.FdPoller;
import dev.rpma.binding.io.FileDescriptors;

/**
 * The fake's own checks fire: raw calls that break librpma's rules are recorded as violations, and
 * its scripting behaves as documented. (The typed API's tests rely on these detectors.)
 */
class FakeLibRpmaTest {

    private final FakeLibRpma fake = new FakeLibRpma();

    /** Eight 8-byte out-parameter slots. */
    private final Memory slots = new Memory(64);

    @AfterEach
    void close() {
        this.fake.close();
        this.slots.close();
    }

    private long slot(int index) {
        return com.sun.jna.Pointer.nativeValue(this.slots) + 8L * index;
    }

    private long peer() {
        assertThat(this.fake.rpma_utils_get_ibv_context("198.18.0.1", 0, slot(0))).isZero();
        assertThat(this.fake.rpma_peer_new(this.slots.getLong(0), slot(1))).isZero();
        return this.slots.getLong(8);
    }

    private long listen(long peer, int port) {
        assertThat(this.fake.rpma_ep_listen(peer, "198.18.0.1", Integer.toString(port), slot(2))).isZero();
        return this.slots.getLong(16);
    }

    @Test
    void handlesAreDistinctNonZeroAndTrackedUntilFreed() {
        long peer = peer();
        assertThat(this.fake.rpma_conn_cfg_new(slot(3))).isZero();
        long cfg = this.slots.getLong(24);
        assertThat(peer).isNotZero().isNotEqualTo(cfg);
        assertThat(this.fake.liveHandles()).extracting(FakeLibRpma.Handle::kind)
                .containsExactly(FakeLibRpma.Kind.PEER, FakeLibRpma.Kind.CONN_CFG);
        assertThatThrownBy(this.fake::assertAllFreed).hasMessageContaining("2 librpma object(s) never freed");

        assertThat(this.fake.rpma_conn_cfg_delete(slot(3))).isZero();
        assertThat(this.slots.getLong(24)).as("*cfg_ptr NULLed").isZero();
        assertThat(this.fake.rpma_peer_delete(slot(1))).isZero();
        this.fake.assertAllFreed();
        this.fake.assertNoViolations();
    }

    @Test
    void useAfterFreeIsAViolation() {
        assertThat(this.fake.rpma_conn_cfg_new(slot(0))).isZero();
        long cfg = this.slots.getLong(0);
        assertThat(this.fake.rpma_conn_cfg_delete(slot(0))).isZero();

        assertThatThrownBy(() -> this.fake.rpma_conn_cfg_get_cq_size(cfg, slot(1))).isInstanceOf(AssertionError.class)
                .hasMessageContaining("use after free of CONN_CFG");
        assertThat(this.fake.violations()).hasSize(1);
        assertThatThrownBy(this.fake::assertNoViolations).hasMessageContaining("1 librpma usage violation");
        assertThat(this.fake.callLog("rpma_conn_cfg_get_cq_size")).singleElement()
                .satisfies(call -> assertThat(call.violation()).isTrue());
    }

    @Test
    void doubleFreeIsAViolation() {
        assertThat(this.fake.rpma_conn_cfg_new(slot(0))).isZero();
        long cfg = this.slots.getLong(0);
        assertThat(this.fake.rpma_conn_cfg_delete(slot(0))).isZero();
        this.slots.setLong(0, cfg);
        assertThatThrownBy(() -> this.fake.rpma_conn_cfg_delete(slot(0))).hasMessageContaining("double free of CONN_CFG");
    }

    @Test
    void unknownWrongKindAndNullHandlesAreViolations() {
        long peer = peer();
        assertThatThrownBy(() -> this.fake.rpma_conn_cfg_set_cq_size(0x1234_5670L, 1))
                .hasMessageContaining("is no CONN_CFG this fake handed out");
        assertThatThrownBy(() -> this.fake.rpma_conn_cfg_set_cq_size(peer, 1)).hasMessageContaining("not a CONN_CFG");
        assertThatThrownBy(() -> this.fake.rpma_conn_cfg_set_cq_size(0, 1)).hasMessageContaining("NULL cfg");
        assertThatThrownBy(() -> this.fake.rpma_conn_cfg_new(0)).hasMessageContaining("NULL out-parameter");
        assertThat(this.fake.violations()).hasSize(4);
        this.fake.clearViolations();
        this.fake.assertNoViolations();
    }

    @Test
    void failedCreationWritesPoisonAndUsingItIsAViolation() {
        this.fake.failNext("rpma_conn_cfg_new", RpmaError.NOMEM);
        assertThat(this.fake.rpma_conn_cfg_new(slot(0))).isEqualTo(RpmaError.NOMEM.code());
        assertThat(this.slots.getLong(0)).isEqualTo(FakeLibRpma.POISON);
        assertThat(this.fake.poisonWrites()).isOne();
        assertThatThrownBy(() -> this.fake.rpma_conn_cfg_set_cq_size(FakeLibRpma.POISON, 1))
                .hasMessageContaining("poison value 0xdeadbeef");
        // failNext fails once only
        assertThat(this.fake.rpma_conn_cfg_new(slot(0))).isZero();
    }

    @Test
    void failNextRejectsNamesThatAreNoLibrpmaFunction() {
        assertThatThrownBy(() -> this.fake.failNext("rpma_ep_next_conn", RpmaError.INVAL))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aStalledCallIsHeldOutsideTheLockUntilReleasedThenRuns() throws Exception {
        FakeStall stall = this.fake.stallNext("rpma_conn_cfg_new");
        AtomicReference<Integer> result = new AtomicReference<>();
        Thread caller = new Thread(() -> result.set(this.fake.rpma_conn_cfg_new(slot(3))), "stalled");
        caller.start();
        assertThat(stall.awaitEntered(Duration.ofSeconds(10))).isTrue();
        assertThat(stall.thread()).isEqualTo("stalled");
        caller.interrupt();
        // other calls go on meanwhile, the same function's next one too
        assertThat(this.fake.rpma_conn_cfg_new(slot(4))).isZero();
        assertThat(caller.isAlive()).as("held, interrupted or not").isTrue();

        stall.release();
        caller.join(10_000);
        assertThat(result.get()).isZero();
        assertThat(this.fake.liveHandles(FakeLibRpma.Kind.CONN_CFG)).hasSize(2);
        assertThatThrownBy(() -> this.fake.stallNext("no_such_function")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void deleteFailureStillFreesAsLibrpmaDoes() {
        assertThat(this.fake.rpma_conn_cfg_new(slot(0))).isZero();
        this.fake.failNext("rpma_conn_cfg_delete", RpmaError.PROVIDER.code(), Errno.EIO);
        assertThat(this.fake.rpma_conn_cfg_delete(slot(0))).isEqualTo(RpmaError.PROVIDER.code());
        assertThat(this.fake.lastErrno()).isEqualTo(Errno.EIO);
        assertThat(this.slots.getLong(0)).isZero();
        this.fake.assertAllFreed();
    }

    @Test
    void peerDeletedBeforeItsChildrenIsAViolation() {
        long peer = peer();
        listen(peer, 7204);
        assertThatThrownBy(() -> this.fake.rpma_peer_delete(slot(1))).hasMessageContaining("peer deleted while 1 object");
    }

    @Test
    void nextConnReqFollowsTheScriptAndTheFdIsReadableExactlyWhileResultsArePending() throws Exception {
        long ep = listen(peer(), 7204);
        FakeEndpoint endpoint = this.fake.endpointAt("198.18.0.1", 7204);
        assertThat(endpoint.handle()).isEqualTo(ep);
        assertThat(this.fake.rpma_ep_get_fd(ep, slot(3))).isZero();
        int fd = this.slots.getInt(24);
        assertThat(fd).isEqualTo(endpoint.fd()).isPositive();
        assertThat(FileDescriptors.isBlocking(fd)).as("blocking by default, like librpma's fd").isTrue();

        try (FdPoller poller = new FdPoller(1)) {
            assertThat(poller.await(new int[] { fd }, 1, 0)).as("nothing queued").isZero();
            FakeRequest request = endpoint.queueRequest(new byte[] { 1, 2, 3 });
            endpoint.queueProviderError(Errno.EINTR);
            assertThat(poller.await(new int[] { fd }, 1, 1000)).isOne();

            assertThat(this.fake.rpma_ep_next_conn_req(ep, 0, slot(4))).isZero();
            long req = this.slots.getLong(32);
            assertThat(req).isEqualTo(request.handle());
            assertThat(request.state()).isEqualTo(FakeRequest.State.PENDING);
            assertThat(poller.await(new int[] { fd }, 1, 0)).as("one still queued").isOne();

            assertThat(this.fake.rpma_ep_next_conn_req(ep, 0, slot(4))).isEqualTo(RpmaError.PROVIDER.code());
            assertThat(this.fake.lastErrno()).isEqualTo(Errno.EINTR);
            assertThat(this.slots.getLong(32)).isEqualTo(FakeLibRpma.POISON);
            assertThat(poller.await(new int[] { fd }, 1, 0)).as("drained").isZero();

            assertThat(this.fake.rpma_ep_next_conn_req(ep, 0, slot(4))).isEqualTo(RpmaError.PROVIDER.code());
            assertThat(this.fake.lastErrno()).isEqualTo(Errno.EAGAIN);

            assertThat(this.fake.rpma_conn_req_get_private_data(req, slot(5))).isZero();
            long data = this.slots.getLong(40);
            assertThat(new com.sun.jna.Pointer(data).getByteArray(0, this.slots.getByte(48))).containsExactly(1, 2, 3);

            this.slots.setLong(32, req);
            assertThat(this.fake.rpma_conn_req_delete(slot(4))).isZero();
            assertThat(new com.sun.jna.Pointer(data).getByte(0)).as("scribbled on free").isEqualTo((byte) 0xEE);
            assertThat(request.state()).isEqualTo(FakeRequest.State.DELETED);
        }
        this.fake.assertNoViolations();
    }

    @Test
    void anotherThreadThanTheEndpointOwnerIsAViolation() throws Exception {
        long ep = listen(peer(), 7204);
        assertThat(this.fake.rpma_ep_next_conn_req(ep, 0, slot(4))).isEqualTo(RpmaError.PROVIDER.code());
        assertThat(this.fake.endpointAt("198.18.0.1", 7204).owner()).isSameAs(Thread.currentThread());

        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Memory other = new Memory(8);
        Thread intruder = new Thread(() -> {
            try {
                this.fake.rpma_ep_next_conn_req(ep, 0, com.sun.jna.Pointer.nativeValue(other));
            }
            catch (Throwable ex) {
                thrown.set(ex);
            }
        }, "intruder");
        intruder.start();
        intruder.join();
        assertThat(thrown.get()).isInstanceOf(AssertionError.class).hasMessageContaining("intruder")
                .hasMessageContaining("owned by thread '" + Thread.currentThread().getName() + "'");
        assertThat(this.fake.threadsCalling("rpma_ep_next_conn_req")).containsExactly(Thread.currentThread().getName(),
                "intruder");
        other.close();
    }

    @Test
    void twoThreadsInsideNotThreadSafeCallsOnOnePeerIsAViolation() throws Exception {
        long peer = peer();
        this.fake.notThreadSafeDwell(Duration.ofMillis(300));
        Memory buffer = new Memory(64);
        CountDownLatch started = new CountDownLatch(1);
        Thread first = new Thread(() -> {
            started.countDown();
            this.fake.rpma_mr_reg(peer, com.sun.jna.Pointer.nativeValue(buffer), 64, 1, slot(5));
        }, "first");
        first.start();
        started.await();
        Thread.sleep(100);
        Memory out = new Memory(8);
        assertThatThrownBy(() -> this.fake.rpma_mr_reg(peer, com.sun.jna.Pointer.nativeValue(buffer), 64, 1,
                com.sun.jna.Pointer.nativeValue(out))).hasMessageContaining("while thread 'first' is inside");
        first.join();
        buffer.close();
        out.close();
    }

    @Test
    void nextConnReqAndAnAcceptOfARequestFromTheSameEndpointOverlappingIsAViolation() throws Exception {
        long ep = listen(peer(), 7204);
        FakeEndpoint endpoint = this.fake.endpointAt("198.18.0.1", 7204);
        for (int i = 0; i < 4; i++) {
            endpoint.queueRequest(("request " + i).getBytes());
        }
        assertThat(this.fake.rpma_ep_next_conn_req(ep, 0, slot(4))).isZero();
        assertThat(this.fake.rpma_ep_next_conn_req(ep, 0, slot(5))).isZero();
        this.fake.notThreadSafeDwell(Duration.ofMillis(300));

        // the accept first: it sees the owner thread enter rpma_ep_next_conn_req
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread accepting = acceptOnAnotherThread(slot(4), 0, thrown);
        Thread.sleep(100);
        this.fake.rpma_ep_next_conn_req(ep, 0, slot(6));
        accepting.join();
        assertThat(thrown.get()).hasMessageContaining("while thread '" + Thread.currentThread().getName()
                + "' is inside rpma_ep_next_conn_req");

        // rpma_ep_next_conn_req first: it sees the accept begin
        accepting = acceptOnAnotherThread(slot(5), 100, thrown);
        assertThatThrownBy(() -> this.fake.rpma_ep_next_conn_req(ep, 0, slot(7)))
                .hasMessageContaining("another thread is inside rpma_conn_req_connect");
        accepting.join();
        assertThat(this.fake.violations()).hasSize(2);

        // one after the other: none
        this.fake.notThreadSafeDwell(Duration.ZERO);
        assertThat(this.fake.rpma_ep_next_conn_req(ep, 0, slot(7))).isZero();
        assertThat(this.fake.rpma_conn_req_connect(slot(7), 0, slot(3))).isZero();
        assertThat(this.fake.violations()).hasSize(2);
    }

    private Thread acceptOnAnotherThread(long reqPtr, long delayMillis, AtomicReference<Throwable> thrown) {
        Thread accepting = new Thread(() -> {
            try {
                Thread.sleep(delayMillis);
                this.fake.rpma_conn_req_connect(reqPtr, 0, slot(3));
            }
            catch (Throwable ex) {
                thrown.set(ex);
            }
        }, "accepting");
        accepting.start();
        return accepting;
    }

    @Test
    void connectConsumesTheRequestAndMakesAConnectionWithEstablishedQueued() {
        long ep = listen(peer(), 7204);
        FakeEndpoint endpoint = this.fake.endpointAt("198.18.0.1", 7204);
        FakeRequest request = endpoint.queueRequest("hi".getBytes()).thenEvents(RpmaConnectionEvent.CLOSED);
        assertThat(this.fake.rpma_ep_next_conn_req(ep, 0, slot(4))).isZero();
        assertThat(this.fake.rpma_conn_req_connect(slot(4), 0, slot(5))).isZero();
        assertThat(this.slots.getLong(32)).as("*req_ptr NULLed").isZero();
        long conn = this.slots.getLong(40);
        FakeConnection connection = request.connection();
        assertThat(connection.handle()).isEqualTo(conn);
        assertThat(request.connectPrivateData()).isNull();

        assertThat(this.fake.rpma_conn_next_event(conn, slot(6))).isZero();
        assertThat(this.slots.getInt(48)).isEqualTo(RpmaConnectionEvent.ESTABLISHED.code());
        assertThat(this.fake.rpma_conn_next_event(conn, slot(6))).isZero();
        assertThat(this.slots.getInt(48)).isEqualTo(RpmaConnectionEvent.CLOSED.code());
        assertThat(this.fake.rpma_conn_next_event(conn, slot(6))).isEqualTo(RpmaError.PROVIDER.code());
        assertThat(this.fake.lastErrno()).isEqualTo(Errno.EAGAIN);

        assertThat(this.fake.rpma_conn_disconnect(conn)).isZero();
        assertThat(connection.pendingEvents()).as("CLOSED after disconnect").isOne();
        assertThat(this.fake.rpma_conn_delete(slot(5))).isZero();
        assertThat(this.slots.getLong(40)).isZero();
        assertThat(connection.isDeleted()).isTrue();
        assertThat(connection.completionQueue().handle()).satisfies(
                cq -> assertThat(this.fake.handle(cq).isLive()).as("cq freed with its connection").isFalse());
        this.fake.assertNoViolations();
    }

    @Test
    void textsAreLibrpmas() {
        assertThat(this.fake.rpma_err_2str(RpmaError.INVAL.code())).isEqualTo("Invalid argument");
        assertThat(this.fake.rpma_utils_conn_event_2str(RpmaConnectionEvent.LOST.code())).isEqualTo("Connection lost");
        assertThat(this.fake.calls("rpma_err_2str")).isOne();
    }

    @Test
    void strictModeRequiresANonBlockingEndpointFd() {
        this.fake.requireNonBlockingEndpointFd(true);
        long ep = listen(peer(), 7204);
        assertThatThrownBy(() -> this.fake.rpma_ep_next_conn_req(ep, 0, slot(4)))
                .hasMessageContaining("the endpoint's fd is blocking");
        this.fake.clearViolations();
        FileDescriptors.setBlocking(this.fake.endpointAt("198.18.0.1", 7204).fd(), false);
        assertThat(this.fake.rpma_ep_next_conn_req(ep, 0, slot(4))).isEqualTo(RpmaError.PROVIDER.code());
        this.fake.assertNoViolations();
    }

    @Test
    void connectionEventsCanBeLeftEntirelyToTheTest() {
        this.fake.establishOnConnect(false).closedOnDisconnect(false);
        long ep = listen(peer(), 7204);
        this.fake.endpointAt("198.18.0.1", 7204).queueRequest(new byte[0]);
        assertThat(this.fake.rpma_ep_next_conn_req(ep, 0, slot(4))).isZero();
        assertThat(this.fake.rpma_conn_req_connect(slot(4), 0, slot(5))).isZero();
        long conn = this.slots.getLong(40);
        FakeConnection connection = this.fake.lastConnection();
        assertThat(connection.pendingEvents()).isZero();
        assertThat(this.fake.rpma_conn_disconnect(conn)).isZero();
        assertThat(connection.pendingEvents()).isZero();
        assertThat(connection.disconnects()).isOne();
        assertThatThrownBy(() -> this.fake.rpma_conn_req_get_private_data(connection.request().handle(), slot(6)))
                .as("connect consumed the request").hasMessageContaining("use after free of CONN_REQ")
                .hasMessageContaining("freed by rpma_conn_req_connect");
    }

    @Test
    void awaitHelpersSeeWhatOtherThreadsDo() throws Exception {
        Memory out = new Memory(16);
        long base = com.sun.jna.Pointer.nativeValue(out);
        long peer = peer();
        Thread acceptor = new Thread(() -> {
            assertThat(this.fake.rpma_ep_listen(peer, "198.18.0.1", "7300", base)).isZero();
            long ep = out.getLong(0);
            while (this.fake.rpma_ep_next_conn_req(ep, 0, base + 8) != 0) {
                Thread.onSpinWait();
            }
            out.setLong(0, ep);
            this.fake.rpma_conn_req_delete(base + 8);
            this.fake.rpma_ep_shutdown(base);
        }, "acceptor");
        acceptor.start();
        FakeEndpoint endpoint = this.fake.awaitEndpoint(Duration.ofSeconds(5));
        assertThat(endpoint.port()).isEqualTo(7300);
        assertThat(endpoint.listenedOnThread()).isEqualTo("acceptor");
        FakeRequest request = endpoint.queueRequest(new byte[] { 1 });
        assertThat(request.awaitConsumed(Duration.ofSeconds(5))).isEqualTo(FakeRequest.State.DELETED);
        assertThat(endpoint.awaitShutDown(Duration.ofSeconds(5))).isTrue();
        assertThat(endpoint.shutDownOnThread()).isEqualTo("acceptor");
        assertThat(endpoint.owner().getName()).isEqualTo("acceptor");
        assertThat(this.fake.awaitCalls("rpma_ep_shutdown", 1, Duration.ofSeconds(1))).isTrue();
        acceptor.join();
        assertThat(endpoint.fd()).as("closed with the endpoint").isEqualTo(-1);
        this.fake.assertNoViolations();
        out.close();
    }

    @Test
    void aRemovedDevicesContextIsUsableOnlyForDeletesUntilItIsReleasedAndThenFreed() {
        peer();
        long context = this.slots.getLong(0);
        this.fake.removeDevice("198.18.0.1");

        this.slots.setLong(24, 0);
        assertThat(this.fake.rpma_utils_get_ibv_context("198.18.0.1", 0, slot(3))).isEqualTo(RpmaError.PROVIDER.code());
        assertThat(this.fake.lastErrno()).isEqualTo(Errno.ENODEV);
        assertThat(this.slots.getLong(24)).as("poisoned, as any failed call's out-parameter")
                .isEqualTo(FakeLibRpma.POISON);
        assertThat(this.fake.rpma_peer_new(context, slot(4))).isEqualTo(RpmaError.PROVIDER.code());
        assertThat(this.fake.lastErrno()).isEqualTo(Errno.ENODEV);

        assertThat(this.fake.rpma_peer_delete(slot(1))).isZero();
        this.fake.forgetRemoved();
        assertThat(this.fake.isRemovedDeviceReleased("198.18.0.1")).isTrue();
        assertThat(this.fake.handle(context).freedBy()).isEqualTo("forgetRemoved");
        assertThatThrownBy(() -> this.fake.rpma_peer_new(context, slot(4))).isInstanceOf(AssertionError.class)
                .hasMessageContaining("use after free of IBV_CONTEXT");
        this.fake.clearViolations();
    }
}

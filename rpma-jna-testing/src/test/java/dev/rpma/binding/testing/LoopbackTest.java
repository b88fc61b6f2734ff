package dev.rpma.binding.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.CompletionMode;
import dev.rpma.binding.FlushType;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletion;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaEndpoint;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.RpmaRemoteMemoryRegion;

/**
 * The loopback through the typed binding: a server and a client of one JVM connect by port, move
 * bytes by messages and one-sided operations, and see librpma's events and completion statuses for
 * rejects, losses, broken queue pairs and bad remote access. Single-threaded: each step is a librpma
 * call and the next event or completion is there when the call returns.
 */
class LoopbackTest {

    private static final int PORT = 7204;

    private static final int IBV_WC_LOC_LEN_ERR = 1;

    private static final int IBV_WC_LOC_PROT_ERR = 4;

    private static final int IBV_WC_WR_FLUSH_ERR = 5;

    private static final int IBV_WC_REM_INV_REQ_ERR = 9;

    private static final int IBV_WC_REM_ACCESS_ERR = 10;

    private static final int IBV_WC_RETRY_EXC_ERR = 12;

    private final FakeLibRpma fake = FakeLibRpma.loopback();

    private final Rpma rpma = Rpma.using(this.fake);

    private final RpmaPeer serverPeer = this.rpma.openPeer("192.0.2.1", PeerRole.SERVER);

    private final RpmaPeer clientPeer = this.rpma.openPeer("192.0.2.2", PeerRole.CLIENT);

    private final List<AutoCloseable> open = new ArrayList<>();

    private final RpmaCompletions batch = new RpmaCompletions(8);

    @AfterEach
    void close() throws Exception {
        for (int i = this.open.size() - 1; i >= 0; i--) {
            this.open.get(i).close();
        }
        this.clientPeer.close();
        this.serverPeer.close();
        this.fake.assertNoViolations();
        this.fake.assertAllFreed();
        this.fake.close();
    }

    private <T extends AutoCloseable> T open(T closeable) {
        this.open.add(closeable);
        return closeable;
    }

    /** A registered buffer. */
    private record Region(RpmaMemoryRegion mr, ByteBuffer buffer) implements AutoCloseable {

        @Override
        public void close() {
            this.mr.close();
        }
    }

    private Region region(RpmaPeer peer, int size, MemoryUsage... usages) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(size);
        return open(new Region(peer.register(buffer, usages), buffer));
    }

    /** A connected pair: [server, client]. */
    private RpmaConnection[] connect(byte[] hello, byte[] welcome) {
        RpmaEndpoint endpoint = open(this.serverPeer.listen("192.0.2.1", PORT));
        RpmaConnectionRequest dialing = this.clientPeer.newConnectionRequest("192.0.2.1", PORT, null);
        RpmaConnection client = open(dialing.connect(hello));
        assertThat(client.nextEvent()).as("nothing until the server decides").isNull();
        RpmaConnectionRequest request = endpoint.nextConnectionRequest();
        assertThat(request).isNotNull();
        assertThat(request.privateData()).isEqualTo(hello);
        RpmaConnection server = open(request.connect(welcome));
        assertThat(server.nextEvent()).isEqualTo(RpmaConnectionEvent.ESTABLISHED);
        assertThat(client.nextEvent()).isEqualTo(RpmaConnectionEvent.ESTABLISHED);
        assertThat(client.privateData()).isEqualTo((welcome != null) ? welcome : new byte[0]);
        return new RpmaConnection[] { server, client };
    }

    private RpmaCompletion only(RpmaCompletionQueue queue) {
        assertThat(queue.poll(this.batch)).isOne();
        return this.batch.get(0);
    }

    @Test
    void aClientReachesTheEndpointOnItsPortWithItsPrivateDataAndGetsTheAcceptData() {
        byte[] hello = "Hello server!\0".getBytes(StandardCharsets.US_ASCII);
        byte[] welcome = "Hello client!\0".getBytes(StandardCharsets.US_ASCII);
        RpmaConnection[] pair = connect(hello, welcome);
        assertThat(pair[1].peer()).isSameAs(this.clientPeer);
        assertThat(this.fake.lastConnection().peer()).isNotNull();
    }

    @Test
    void aRejectedRequestAndAPortNobodyListensOnGiveTheClientRejected() {
        RpmaEndpoint endpoint = open(this.serverPeer.listen("192.0.2.1", PORT));
        RpmaConnection nobody = open(this.clientPeer.newConnectionRequest("192.0.2.1", PORT + 1, null).connect(null));
        assertThat(nobody.nextEvent()).isEqualTo(RpmaConnectionEvent.REJECTED);

        RpmaConnection refused = open(this.clientPeer.newConnectionRequest("192.0.2.1", PORT, null).connect(null));
        endpoint.nextConnectionRequest().reject();
        assertThat(refused.nextEvent()).isEqualTo(RpmaConnectionEvent.REJECTED);
    }

    @Test
    void injectedDialFaultsRejectOrMakeUnreachableWithoutTheServerSeeingTheRequest() {
        RpmaEndpoint endpoint = open(this.serverPeer.listen("192.0.2.1", PORT));
        this.fake.rejectNext(PORT).unreachableNext(PORT);
        RpmaConnection first = open(this.clientPeer.newConnectionRequest("192.0.2.1", PORT, null).connect(null));
        RpmaConnection second = open(this.clientPeer.newConnectionRequest("192.0.2.1", PORT, null).connect(null));
        assertThat(first.nextEvent()).isEqualTo(RpmaConnectionEvent.REJECTED);
        assertThat(second.nextEvent()).isEqualTo(RpmaConnectionEvent.UNREACHABLE);
        assertThat(endpoint.nextConnectionRequest()).isNull();
    }

    @Test
    void aSecondEndpointOnAPortInUseFailsWithAddressInUse() {
        open(this.serverPeer.listen("192.0.2.1", PORT));
        assertThatThrownBy(() -> this.serverPeer.listen("192.0.2.9", PORT)).isInstanceOfSatisfying(RpmaException.class,
                e -> {
                    assertThat(e.error()).isEqualTo(RpmaError.PROVIDER);
                    assertThat(e.getMessage()).contains("rpma_ep_listen");
                });
    }

    @Test
    void aSendWaitsForTheOtherSidesReceiveThenFillsItAndCompletesOnBothSides() {
        RpmaConnection[] pair = connect(new byte[0], null);
        Region out = region(this.clientPeer, 64, MemoryUsage.SEND);
        Region in = region(this.serverPeer, 64, MemoryUsage.RECV);
        out.buffer().put(0, "ping".getBytes(StandardCharsets.US_ASCII));

        pair[1].send(out.mr(), 0, 4, CompletionMode.ALWAYS, 11);
        assertThat(pair[1].completionQueue().poll(this.batch)).as("receiver not ready: the send waits").isZero();

        pair[0].receive(in.mr(), 0, 64, 22);
        RpmaCompletion received = only(pair[0].completionQueue());
        assertThat(received.context()).isEqualTo(22);
        assertThat(received.byteLength()).isEqualTo(4);
        assertThat(received.isSuccess()).isTrue();
        byte[] bytes = new byte[4];
        in.buffer().get(0, bytes);
        assertThat(new String(bytes, StandardCharsets.US_ASCII)).isEqualTo("ping");
        RpmaCompletion sent = only(pair[1].completionQueue());
        assertThat(sent.context()).isEqualTo(11);
        assertThat(sent.isSuccess()).isTrue();
    }

    @Test
    void aMessageLongerThanTheReceiveFailsBothSidesAndBreaksBothQueuePairs() {
        RpmaConnection[] pair = connect(new byte[0], null);
        Region out = region(this.clientPeer, 64, MemoryUsage.SEND);
        Region in = region(this.serverPeer, 64, MemoryUsage.RECV);
        pair[0].receive(in.mr(), 0, 8, 1);
        pair[0].receive(in.mr(), 8, 8, 2);
        pair[1].send(out.mr(), 0, 16, CompletionMode.ALWAYS, 3);

        assertThat(pair[0].completionQueue().poll(this.batch)).isEqualTo(2);
        assertThat(this.batch.get(0).status()).isEqualTo(IBV_WC_LOC_LEN_ERR);
        assertThat(this.batch.get(1).status()).as("the second receive is flushed").isEqualTo(IBV_WC_WR_FLUSH_ERR);
        assertThat(only(pair[1].completionQueue()).status()).isEqualTo(IBV_WC_REM_INV_REQ_ERR);
    }

    @Test
    void readsAndWritesMoveBytesBetweenTheTwoSidesRegistrations() {
        RpmaConnection[] pair = connect(new byte[0], null);
        Region exposed = region(this.serverPeer, 64, MemoryUsage.READ_SRC, MemoryUsage.WRITE_DST,
                MemoryUsage.FLUSH_TYPE_VISIBILITY);
        exposed.buffer().put(0, "server bytes".getBytes(StandardCharsets.US_ASCII));
        RpmaRemoteMemoryRegion remote = open(this.rpma.remoteMemoryRegion(exposed.mr().descriptor()));
        Region local = region(this.clientPeer, 64, MemoryUsage.READ_DST, MemoryUsage.WRITE_SRC);

        pair[1].read(local.mr(), 0, remote, 0, 12, CompletionMode.ALWAYS, 5);
        assertThat(only(pair[1].completionQueue()).isSuccess()).isTrue();
        byte[] read = new byte[12];
        local.buffer().get(0, read);
        assertThat(new String(read, StandardCharsets.US_ASCII)).isEqualTo("server bytes");

        local.buffer().put(32, "client".getBytes(StandardCharsets.US_ASCII));
        pair[1].write(remote, 40, local.mr(), 32, 6, CompletionMode.ALWAYS, 6);
        pair[1].flush(remote, 40, 6, FlushType.VISIBILITY, CompletionMode.ALWAYS, 7);
        assertThat(pair[1].completionQueue().poll(this.batch)).isEqualTo(2);
        byte[] written = new byte[6];
        exposed.buffer().get(40, written);
        assertThat(new String(written, StandardCharsets.US_ASCII)).isEqualTo("client");
    }

    @Test
    void aRemoteRegionOutsideItsRangeOrDeregisteredEndsInARemoteAccessError() {
        RpmaConnection[] pair = connect(new byte[0], null);
        RpmaMemoryRegion exposed = this.serverPeer.register(ByteBuffer.allocateDirect(16), MemoryUsage.READ_SRC);
        RpmaRemoteMemoryRegion remote = open(this.rpma.remoteMemoryRegion(exposed.descriptor()));
        Region local = region(this.clientPeer, 64, MemoryUsage.READ_DST);
        exposed.close();

        pair[1].read(local.mr(), 0, remote, 0, 8, CompletionMode.ALWAYS, 1);
        assertThat(only(pair[1].completionQueue()).status()).isEqualTo(IBV_WC_REM_ACCESS_ERR);
        assertThat(this.fake.lastConnection().isBroken()).as("the other side's queue pair fails too").isTrue();
    }

    @Test
    void aLocalRegionOfAnotherPeerEndsInALocalProtectionError() {
        RpmaConnection[] pair = connect(new byte[0], null);
        Region exposed = region(this.serverPeer, 64, MemoryUsage.READ_SRC);
        RpmaRemoteMemoryRegion remote = open(this.rpma.remoteMemoryRegion(exposed.mr().descriptor()));
        RpmaPeer otherPeer = this.rpma.openPeer("192.0.2.2", PeerRole.CLIENT);
        try (RpmaMemoryRegion elsewhere = otherPeer.register(ByteBuffer.allocateDirect(64), MemoryUsage.READ_DST)) {
            // same device, another protection domain: its lkey is foreign to the connection's queue pair
            pair[1].read(elsewhere, 0, remote, 0, 8, CompletionMode.ALWAYS, 1);
            assertThat(only(pair[1].completionQueue()).status()).isEqualTo(IBV_WC_LOC_PROT_ERR);
        }
        finally {
            otherPeer.close();
        }
    }

    @Test
    void aDisconnectGivesTheOtherSideClosedAndFlushesItsReceives() {
        RpmaConnection[] pair = connect(new byte[0], null);
        Region in = region(this.clientPeer, 64, MemoryUsage.RECV);
        pair[1].receive(in.mr(), 0, 64, 9);
        pair[0].disconnect();
        assertThat(pair[1].nextEvent()).isEqualTo(RpmaConnectionEvent.CLOSED);
        RpmaCompletion flushed = only(pair[1].completionQueue());
        assertThat(flushed.context()).isEqualTo(9);
        assertThat(flushed.status()).isEqualTo(IBV_WC_WR_FLUSH_ERR);
        assertThat(pair[0].nextEvent()).as("the side that disconnects sees CLOSED too").isEqualTo(RpmaConnectionEvent.CLOSED);
    }

    @Test
    void injectedLossAndErrorCompletionsReachBothSides() {
        RpmaConnection[] pair = connect(new byte[0], null);
        Region out = region(this.clientPeer, 64, MemoryUsage.SEND);
        FakeConnection client = this.fake.lastConnection().peer();
        client.failNextCompletion(IBV_WC_RETRY_EXC_ERR);
        pair[1].send(out.mr(), 0, 4, CompletionMode.ON_ERROR, 4);
        RpmaCompletion failed = only(pair[1].completionQueue());
        assertThat(failed.context()).isEqualTo(4);
        assertThat(failed.status()).isEqualTo(IBV_WC_RETRY_EXC_ERR);

        client.lose();
        assertThat(pair[0].nextEvent()).isEqualTo(RpmaConnectionEvent.LOST);
        assertThat(pair[1].nextEvent()).isEqualTo(RpmaConnectionEvent.LOST);
    }

    @Test
    void aSlowSideDeliversItsMessagesLaterAndInOrder() {
        RpmaConnection[] pair = connect(new byte[0], null);
        Region out = region(this.clientPeer, 64, MemoryUsage.SEND);
        Region in = region(this.serverPeer, 64, MemoryUsage.RECV);
        this.fake.lastConnection().peer().delay(Duration.ofMillis(50));
        pair[0].receive(in.mr(), 0, 8, 1);
        pair[0].receive(in.mr(), 8, 8, 2);
        out.buffer().put(0, new byte[] { 1, 2 });
        long sent = System.nanoTime();
        pair[1].send(out.mr(), 0, 1, CompletionMode.ALWAYS, 1);
        pair[1].send(out.mr(), 1, 1, CompletionMode.ALWAYS, 2);
        assertThat(this.fake.await(Duration.ofSeconds(5),
                () -> this.fake.lastConnection().completionQueue().pending() == 2)).isTrue();
        // a lower bound only: a loaded machine may deliver later, never sooner
        assertThat(Duration.ofNanos(System.nanoTime() - sent)).isGreaterThanOrEqualTo(Duration.ofMillis(50));
        assertThat(pair[0].completionQueue().poll(this.batch)).isEqualTo(2);
        assertThat(this.batch.get(0).context()).isEqualTo(1);
        assertThat(in.buffer().get(0)).isEqualTo((byte) 1);
        assertThat(in.buffer().get(8)).isEqualTo((byte) 2);
    }

    @Test
    void faultsAreRefusedOnAScriptedFake() {
        try (FakeLibRpma scripted = new FakeLibRpma()) {
            assertThatThrownBy(() -> scripted.rejectNext(PORT)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("loopback");
        }
    }

    @Test
    void aRemovedServerDeviceLosesItsConnectionsOnBothSidesAndTurnsAwayClients() {
        RpmaConnection[] pair = connect(new byte[] { 1 }, null);
        RpmaConnection waiting = open(this.clientPeer.newConnectionRequest("192.0.2.1", PORT, null).connect(null));
        Region receives = region(this.clientPeer, 16, MemoryUsage.RECV);
        pair[1].receive(receives.mr(), 0, 16, 42);

        this.fake.removeDevice("192.0.2.1");

        assertThat(pair[0].nextEvent()).isEqualTo(RpmaConnectionEvent.LOST);
        assertThat(pair[1].nextEvent()).as("the client's queue pair times out").isEqualTo(RpmaConnectionEvent.LOST);
        RpmaCompletion flushed = only(pair[1].completionQueue());
        assertThat(flushed.status()).isEqualTo(IBV_WC_WR_FLUSH_ERR);
        assertThat(waiting.nextEvent()).as("its request went with the device").isEqualTo(RpmaConnectionEvent.REJECTED);
        RpmaConnection later = open(this.clientPeer.newConnectionRequest("192.0.2.1", PORT, null).connect(null));
        assertThat(later.nextEvent()).as("no endpoint serves the port").isEqualTo(RpmaConnectionEvent.REJECTED);
    }
}

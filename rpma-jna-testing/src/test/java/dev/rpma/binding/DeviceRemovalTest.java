package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.io.Epoll;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeLibRpma.Kind;
import dev.rpma.binding.testing.FakeRequest;

/**
 * A device removed under a serving peer ({@link FakeLibRpma#removeDevice}), through the typed API: what
 * librpma reports on the peer's endpoint, connections and lookups, and when the process has let go of
 * the device so that the kernel's removal completes.
 */
class DeviceRemovalTest {

    private static final String ADDRESS = FakeRig.ADDRESS;

    private static final String OTHER_ADDRESS = "198.18.0.2";

    private static final int PORT = FakeRig.PORT;

    private final FakeLibRpma fake = new FakeLibRpma();

    private final Rpma rpma = Rpma.using(this.fake);

    @AfterEach
    void close() {
        this.fake.assertCleanAndClose();
    }

    @Test
    void theEndpointReportsTheRemovalOnceAsAnUnexpectedEventThenFindsNothing() {
        try (RpmaPeer peer = this.rpma.openPeer(ADDRESS, PeerRole.SERVER);
                RpmaEndpoint endpoint = peer.listen(ADDRESS, PORT)) {
            FakeEndpoint script = this.fake.endpointAt(ADDRESS, PORT);
            FakeRequest waiting = script.queueRequest(new byte[] { 1 });
            assertThat(peer.isDevicePresent()).isTrue();

            this.fake.removeDevice(ADDRESS);

            assertThat(peer.isDevicePresent()).isFalse();
            assertThat(readable(endpoint.fd())).as("the removal event makes the fd readable").isTrue();
            assertThatThrownBy(endpoint::nextConnectionRequest).isInstanceOfSatisfying(RpmaException.class, ex -> {
                assertThat(ex.function()).isEqualTo("rpma_ep_next_conn_req");
                assertThat(ex.error()).isEqualTo(RpmaError.INVAL);
                assertThat(ex.errno()).isZero();
            });
            assertThat(readable(endpoint.fd())).isFalse();
            assertThat(endpoint.nextConnectionRequest()).as("nothing after the removal").isNull();
            assertThat(waiting.state()).as("the request queued before was dropped").isEqualTo(FakeRequest.State.QUEUED);
            assertThat(script.isDeviceRemoved()).isTrue();
            assertThatThrownBy(() -> script.queueRequest(new byte[] { 2 })).isInstanceOf(IllegalStateException.class);
            assertThat(this.fake.liveHandles(Kind.CONN_REQ)).isEmpty();
        }
    }

    @Test
    void lookingUpAnAddressOfTheRemovedDeviceFindsNoDevice() {
        this.fake.sameDevice("198.18.0.9", ADDRESS);
        try (RpmaPeer peer = this.rpma.openPeer(ADDRESS, PeerRole.SERVER)) {
            this.fake.removeDevice("198.18.0.9");
            assertThat(peer.isDevicePresent()).as("the alias's device is the peer's").isFalse();
            for (String address : new String[] { ADDRESS, "198.18.0.9" }) {
                assertThatThrownBy(() -> this.rpma.openPeer(address, PeerRole.SERVER))
                        .isInstanceOfSatisfying(RpmaException.class, ex -> {
                            assertThat(ex.function()).isEqualTo("rpma_utils_get_ibv_context");
                            assertThat(ex.error()).isEqualTo(RpmaError.PROVIDER);
                            assertThat(ex.errno()).isEqualTo(Errno.ENODEV);
                        });
            }
            try (RpmaPeer other = this.rpma.openPeer(OTHER_ADDRESS, PeerRole.SERVER)) {
                assertThat(other.isDevicePresent()).as("another device is untouched").isTrue();
            }
        }
    }

    @Test
    void theConnectionsOnTheDeviceAreLostAndOthersAreNot() {
        try (RpmaPeer peer = this.rpma.openPeer(ADDRESS, PeerRole.SERVER);
                RpmaEndpoint endpoint = peer.listen(ADDRESS, PORT);
                RpmaPeer otherPeer = this.rpma.openPeer(OTHER_ADDRESS, PeerRole.SERVER);
                RpmaEndpoint otherEndpoint = otherPeer.listen(OTHER_ADDRESS, PORT);
                RpmaConnection connection = accept(endpoint, ADDRESS);
                RpmaConnection other = accept(otherEndpoint, OTHER_ADDRESS)) {
            FakeConnection script = this.fake.connections().get(0);
            assertThat(connection.nextEvent()).isEqualTo(RpmaConnectionEvent.ESTABLISHED);
            assertThat(other.nextEvent()).isEqualTo(RpmaConnectionEvent.ESTABLISHED);

            this.fake.removeDevice(ADDRESS);

            assertThat(readable(connection.eventFd())).isTrue();
            assertThat(connection.nextEvent()).isEqualTo(RpmaConnectionEvent.LOST);
            assertThat(connection.nextEvent()).isNull();
            assertThat(script.isBroken()).as("the queue pair failed with the device").isTrue();
            assertThat(readable(other.eventFd())).isFalse();
            assertThat(other.nextEvent()).isNull();
            assertThat(otherEndpoint.nextConnectionRequest()).as("the other endpoint sees no removal").isNull();
        }
    }

    @Test
    void nothingNewIsMadeOnAPeerOfTheRemovedDeviceButEverythingCloses() {
        try (RpmaPeer peer = this.rpma.openPeer(ADDRESS, PeerRole.SERVER);
                RpmaEndpoint endpoint = peer.listen(ADDRESS, PORT)) {
            FakeRequest scripted = this.fake.endpointAt(ADDRESS, PORT).queueRequest(new byte[] { 1 });
            RpmaConnectionRequest request = endpoint.nextConnectionRequest();
            RpmaMemoryRegion region = peer.register(ByteBuffer.allocateDirect(64), MemoryUsage.RECV);

            this.fake.removeDevice(ADDRESS);

            assertNoDevice(() -> peer.listen(ADDRESS, PORT + 1), "rpma_ep_listen");
            assertNoDevice(() -> peer.register(ByteBuffer.allocateDirect(64), MemoryUsage.SEND), "rpma_mr_reg");
            assertNoDevice(() -> peer.newSharedReceiveQueue(null), "rpma_srq_new");
            assertNoDevice(() -> peer.newConnectionRequest(OTHER_ADDRESS, PORT, null), "rpma_conn_req_new");
            assertNoDevice(request::connect, "rpma_conn_req_connect");
            assertThat(scripted.state()).as("a failed accept consumes the request")
                    .isEqualTo(FakeRequest.State.CONNECT_FAILED);
            region.close();
            assertThat(this.fake.aliveOnRemovedDevice(ADDRESS)).extracting(FakeLibRpma.Handle::kind)
                    .containsExactly(Kind.PEER, Kind.EP);
        }
        assertThat(this.fake.aliveOnRemovedDevice(ADDRESS)).isEmpty();
    }

    @Test
    void theDeviceIsReleasedOnlyWhenEverythingOnItIsClosedAndTheRemovedDevicesAreForgottenAfter() {
        RpmaPeer peer = this.rpma.openPeer(ADDRESS, PeerRole.SERVER);
        RpmaEndpoint endpoint = peer.listen(ADDRESS, PORT);
        RpmaMemoryRegion region = peer.register(ByteBuffer.allocateDirect(64), MemoryUsage.RECV);
        RpmaSharedReceiveQueue srq = peer.newSharedReceiveQueue(null);
        RpmaConnection connection = accept(endpoint, ADDRESS);
        this.fake.endpointAt(ADDRESS, PORT).queueRequest(new byte[] { 2 });
        RpmaConnectionRequest pending = endpoint.nextConnectionRequest();
        RpmaConnectionRequest client = peer.newConnectionRequest(OTHER_ADDRESS, PORT, null);

        this.fake.removeDevice(ADDRESS);
        this.rpma.forgetRemovedDevices();

        assertThat(this.fake.forgetRemovedCalls()).isOne();
        assertThat(this.fake.isRemovedDeviceReleased(ADDRESS)).as("everything is still open").isFalse();
        assertThat(this.fake.aliveOnRemovedDevice(ADDRESS)).extracting(FakeLibRpma.Handle::kind)
                .containsExactly(Kind.PEER, Kind.EP, Kind.MR_LOCAL, Kind.SRQ, Kind.CONN, Kind.CONN_REQ, Kind.CONN_REQ);

        client.close();
        pending.close();
        connection.close();
        srq.close();
        endpoint.close();
        region.close();
        this.rpma.forgetRemovedDevices();
        assertThat(this.fake.isRemovedDeviceReleased(ADDRESS)).as("the peer is still open").isFalse();
        assertThat(this.fake.aliveOnRemovedDevice(ADDRESS)).extracting(FakeLibRpma.Handle::kind)
                .containsExactly(Kind.PEER);

        peer.close();
        assertThat(this.fake.aliveOnRemovedDevice(ADDRESS)).isEmpty();
        assertThat(this.fake.isRemovedDeviceReleased(ADDRESS)).as("librdmacm has not read its device list since")
                .isFalse();

        this.rpma.forgetRemovedDevices();
        assertThat(this.fake.isRemovedDeviceReleased(ADDRESS)).isTrue();
        assertThat(this.fake.forgetRemovedCalls()).isEqualTo(3);
    }

    @Test
    void aForgetBeforeTheLastCloseDoesNotRelease() {
        RpmaPeer peer = this.rpma.openPeer(ADDRESS, PeerRole.SERVER);
        RpmaMemoryRegion region = peer.register(ByteBuffer.allocateDirect(64), MemoryUsage.RECV);
        this.fake.removeDevice(ADDRESS);
        region.close();
        this.rpma.forgetRemovedDevices();
        peer.close();

        assertThat(this.fake.aliveOnRemovedDevice(ADDRESS)).isEmpty();
        assertThat(this.fake.isRemovedDeviceReleased(ADDRESS)).isFalse();
    }

    @Test
    void aRestoredDeviceIsANewContextOnWhichANewPeerServes() {
        RpmaPeer old = this.rpma.openPeer(ADDRESS, PeerRole.SERVER);
        this.fake.removeDevice(ADDRESS);
        this.fake.restoreDevice(ADDRESS);

        assertThat(old.isDevicePresent()).as("the address has another device context now").isFalse();
        assertNoDevice(() -> old.listen(ADDRESS, PORT), "rpma_ep_listen");
        try (RpmaPeer peer = this.rpma.openPeer(ADDRESS, PeerRole.SERVER);
                RpmaEndpoint endpoint = peer.listen(ADDRESS, PORT)) {
            assertThat(peer.isDevicePresent()).isTrue();
            assertThat(peer.sameDevice(old)).isFalse();
            this.fake.endpointAt(ADDRESS, PORT).queueRequest(new byte[] { 3 });
            try (RpmaConnectionRequest request = endpoint.nextConnectionRequest();
                    RpmaConnection connection = request.connect()) {
                assertThat(connection.nextEvent()).isEqualTo(RpmaConnectionEvent.ESTABLISHED);
            }
            old.close();
            this.rpma.forgetRemovedDevices();
            assertThat(this.fake.isRemovedDeviceReleased(ADDRESS)).as("the new device's objects do not hold the old")
                    .isTrue();
        }
    }

    @Test
    void misuseOfTheScriptIsRefused() {
        assertThatThrownBy(() -> this.fake.restoreDevice(ADDRESS)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> this.fake.isRemovedDeviceReleased(ADDRESS)).isInstanceOf(IllegalStateException.class);
        this.fake.removeDevice(ADDRESS);
        assertThat(this.fake.isRemovedDeviceReleased(ADDRESS)).as("nothing was ever opened on it").isTrue();
    }

    private RpmaConnection accept(RpmaEndpoint endpoint, String address) {
        this.fake.endpointAt(address, PORT).queueRequest(new byte[] { 1 });
        try (RpmaConnectionRequest request = endpoint.nextConnectionRequest()) {
            return request.connect();
        }
    }

    private static void assertNoDevice(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String function) {
        assertThatThrownBy(call).isInstanceOfSatisfying(RpmaException.class, ex -> {
            assertThat(ex.function()).isEqualTo(function);
            assertThat(ex.error()).isEqualTo(RpmaError.PROVIDER);
            assertThat(ex.errno()).isEqualTo(Errno.ENODEV);
        });
    }

    private static boolean readable(int fd) {
        try (Epoll epoll = new Epoll(1)) {
            return epoll.isReadableNow(fd);
        }
    }
}

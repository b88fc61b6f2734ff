package dev.rpma.server;

import static dev.rpma.server.ServerHarness.u64;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.internal.NativeMemory;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeRequest;

/**
 * The RDMA device of an address removed while the server serves ({@code rdma link delete}): the
 * endpoints on it fail with the cause, their sessions are lost, and everything the server opened on
 * the device is released, so that the kernel's removal can finish (the fake's model of it); endpoints
 * of other devices go on. With recovery on, the endpoints listen again once the device is back, with
 * their regions registered anew and their counters carried over.
 */
class DeviceLossTest {

    private static final String OTHER_ADDRESS = "198.18.3.2";

    private static final int SECOND_PORT = ServerHarness.PORT + 1;

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void close() {
        this.harness.closeAndAssertNothingLeaked();
    }

    @Test
    void aLostDeviceIsReleasedWholeAndItsEndpointsFailWithTheCause() {
        this.harness.deviceRecovery = Duration.ZERO;
        serveWithRegionAndSecondEndpoint();
        FakeConnection client = this.harness.connectOne();

        this.harness.fake.removeDevice(ServerHarness.ADDRESS);

        awaitReleased();
        this.harness.await("the session lost", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.LOST);
        assertThat(client.isDeleted()).isTrue();
        for (RpmaServedEndpoint endpoint : this.harness.server.endpoints().values()) {
            assertThat(endpoint.state()).as(endpoint.name()).isEqualTo(RpmaEndpointState.FAILED);
            assertThat(endpoint.failure()).as(endpoint.name()).isInstanceOf(RpmaDeviceLostException.class)
                .hasMessageContaining("RDMA device of " + ServerHarness.ADDRESS + " is gone");
            assertThat(endpoint.isDeviceLost()).isTrue();
        }
        assertThat(this.harness.statistics().deviceLosses()).isOne();
        assertThat(this.harness.statistics().activeConnections()).isZero();
        // without recovery nobody looks for the device again
        int lookups = this.harness.fake.calls("rpma_utils_get_ibv_context");
        this.harness.fake.restoreDevice(ServerHarness.ADDRESS);
        sleep(Duration.ofMillis(300));
        assertThat(this.harness.fake.calls("rpma_utils_get_ibv_context")).isEqualTo(lookups);
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.FAILED);
    }

    @Test
    void withRecoveryTheEndpointsListenAgainOnceTheDeviceIsBackAndServe() {
        this.harness.deviceRecovery = Duration.ofMillis(50);
        serveWithRegionAndSecondEndpoint();
        RpmaEndpointStatistics statistics = this.harness.statistics();
        this.harness.connectOne();
        long peerBefore = this.harness.endpoint.peer();

        this.harness.fake.removeDevice(ServerHarness.ADDRESS);
        awaitReleased();
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.FAILED);
        this.harness.fake.restoreDevice(ServerHarness.ADDRESS);

        this.harness.await("both endpoints running again",
                () -> this.harness.server.endpoints().values().stream()
                    .allMatch((endpoint) -> endpoint.state() == RpmaEndpointState.RUNNING));
        assertThat(this.harness.served().statistics()).as("the counters carried over").isSameAs(statistics);
        assertThat(statistics.recoveries()).isOne();
        assertThat(statistics.deviceLosses()).isOne();
        assertThat(this.harness.served().failure()).isNull();

        this.harness.endpoint = this.harness.fake.endpointAt(ServerHarness.ADDRESS, ServerHarness.PORT);
        assertThat(this.harness.endpoint.peer()).as("a new peer").isNotEqualTo(peerBefore);
        FakeConnection client = this.harness.connectOne();
        client.deliver(u64(41));
        this.harness.await("the reply", () -> client.sent().size() == 1);
        assertThat(u64(client.sent().get(0))).isEqualTo(42);
        byte[] descriptor = descriptorOn(this.harness.fake.endpointAt(ServerHarness.ADDRESS, SECOND_PORT));
        assertThat(this.harness.fake.peerOfRegion(descriptor)).as("the region registered on the new peer")
            .isEqualTo(this.harness.endpoint.peer());
    }

    @Test
    void aDeviceLostAgainAfterItCameBackIsRecoveredAgain() {
        this.harness.deviceRecovery = Duration.ofMillis(20);
        serveWithRegionAndSecondEndpoint();
        for (int loss = 1; loss <= 2; loss++) {
            this.harness.fake.removeDevice(ServerHarness.ADDRESS);
            awaitReleased();
            this.harness.fake.restoreDevice(ServerHarness.ADDRESS);
            int recovered = loss;
            this.harness.await("recovery " + loss, () -> this.harness.served().state() == RpmaEndpointState.RUNNING
                    && this.harness.statistics().recoveries() == recovered);
        }
        assertThat(this.harness.statistics().deviceLosses()).isEqualTo(2);
        this.harness.endpoint = this.harness.fake.endpointAt(ServerHarness.ADDRESS, ServerHarness.PORT);
        FakeConnection client = this.harness.connectOne();
        client.deliver(u64(1));
        this.harness.await("the reply after two losses", () -> client.sent().size() == 1);
    }

    @Test
    void sharedReceiveQueuesAreDeletedWhileTheirLoopGoesOn() {
        this.harness.deviceRecovery = Duration.ZERO;
        this.harness.messages = this.harness.messages.withSharedReceiveSlots(8);
        this.harness.moreEndpoints.add(new RpmaEndpointSettings("elsewhere", OTHER_ADDRESS, ServerHarness.PORT,
                this.harness.acceptor, this.harness.messages, this.harness.limits, null));
        this.harness.startRaw((message, session) -> session.newMessage().putLong(message.getLong(0) + 1).flip());
        // the loop's pollers: the two endpoints' queues, which their loop takes on after the start (and
        // then a session of the lost device)
        int pollers = 2;
        this.harness.await("both endpoints' queues polled",
                () -> this.harness.server.eventLoops().get(0).busyPollers() == pollers);
        this.harness.connectOne();

        this.harness.fake.removeDevice(ServerHarness.ADDRESS);
        awaitReleased();
        this.harness.await("the lost device's queue no longer polled",
                () -> this.harness.server.eventLoops().get(0).busyPollers() == pollers - 1);

        FakeEndpoint elsewhere = this.harness.fake.endpointAt(OTHER_ADDRESS, ServerHarness.PORT);
        FakeRequest request = elsewhere.queueRequest(new byte[] { 1 });
        this.harness.await("the other device's client connected", () -> request.connection() != null);
        FakeConnection client = request.connection();
        this.harness.await("established", () -> this.harness.established.size() == 2);
        client.deliver(u64(7));
        this.harness.await("the other device's client served", () -> client.sent().size() == 1);
        assertThat(this.harness.server.endpoint("elsewhere").state()).isEqualTo(RpmaEndpointState.RUNNING);
    }

    @Test
    void aStopWhileTheServerLooksForTheDeviceEndsTheLookingAndReleasesTheRest() throws Exception {
        this.harness.deviceRecovery = Duration.ofMillis(20);
        serveWithRegionAndSecondEndpoint();
        this.harness.fake.removeDevice(ServerHarness.ADDRESS);
        awaitReleased();
        long start = System.nanoTime();
        this.harness.stop();
        assertThat(this.harness.server.awaitStopped(Duration.ofSeconds(5))).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        this.harness.await("the looking thread ended", () -> Thread.getAllStackTraces().keySet().stream()
            .noneMatch((thread) -> thread.getName().startsWith("rpma-device-")));
    }

    @Test
    void anUnexpectedEventWhileTheDeviceIsThereIsNoLoss() {
        serveWithRegionAndSecondEndpoint();
        int lookups = this.harness.fake.calls("rpma_utils_get_ibv_context");
        this.harness.endpoint.failEveryLook(RpmaError.INVAL.code(), 0);
        this.harness.await("the device asked about",
                () -> this.harness.fake.calls("rpma_utils_get_ibv_context") > lookups);
        this.harness.endpoint.stopFailing();
        this.harness.connectOne();
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.RUNNING);
        assertThat(this.harness.statistics().deviceLosses()).isZero();
    }

    @Test
    void anUnknownAnswerAboutTheDeviceIsNoLoss() {
        serveWithRegionAndSecondEndpoint();
        int lookups = this.harness.fake.calls("rpma_utils_get_ibv_context");
        this.harness.fake.failNext("rpma_utils_get_ibv_context", RpmaError.PROVIDER.code(), Errno.EIO);
        this.harness.endpoint.failEveryLook(RpmaError.INVAL.code(), 0);
        this.harness.await("the device asked about, in vain",
                () -> this.harness.fake.calls("rpma_utils_get_ibv_context") > lookups);
        this.harness.endpoint.stopFailing();
        this.harness.connectOne();
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.RUNNING);
        assertThat(this.harness.statistics().deviceLosses()).isZero();
    }

    /** Two endpoints on one address (so one peer), a region, and a raw data path that adds one. */
    private void serveWithRegionAndSecondEndpoint() {
        this.harness.regions.add(RpmaRegionDefinition.readOnly("catalog", NativeMemory.allocate(64)));
        this.harness.moreEndpoints.add(new RpmaEndpointSettings("second", ServerHarness.ADDRESS, SECOND_PORT,
                this.harness.acceptor, this.harness.messages, this.harness.limits, null));
        this.harness.messageHandlers.put("", (message, session) -> session.newMessage().putLong(message.getLong(0) + 1)
            .flip());
        this.harness.start((request) -> {
            if (request.endpointName().equals("second")) {
                request.connect(RpmaCommonData.of(request.regionDescriptor("catalog")).encode());
            }
            else {
                request.connect();
            }
        });
    }

    private void awaitReleased() {
        this.harness.await("the removed device released: still open " + "(see diagnostics)",
                () -> this.harness.fake.isRemovedDeviceReleased(ServerHarness.ADDRESS));
    }

    private byte[] descriptorOn(FakeEndpoint endpoint) {
        FakeRequest request = endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);
        return RpmaCommonData.decode(request.connectPrivateData()).memoryRegionDescriptor();
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}

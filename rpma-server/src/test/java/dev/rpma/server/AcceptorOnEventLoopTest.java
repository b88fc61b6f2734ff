package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.testing.FakeConnection;

/**
 * {@code acceptor.on-event-loop} over the scripted fake: the acceptor takes requests, decides and
 * starts sessions on the server's first event loop, which owns the endpoint (the fake fails a call
 * on it from another thread); stopping to accept leaves that loop serving its sessions; a lost device
 * is released and its endpoints listen again on the loop; the stop releases everything.
 */
class AcceptorOnEventLoopTest {

    private static final String LOOP = "rpma-loop-0";

    private final ServerHarness harness = new ServerHarness();

    @BeforeEach
    void onTheEventLoop() {
        this.harness.acceptor = this.harness.acceptor.withOnEventLoop(true);
    }

    @AfterEach
    void close() {
        this.harness.closeAndAssertNothingLeaked();
    }

    @Test
    void anInlineHandlerDecidesAndTheSessionStartsOnTheLoopWithNoAcceptorThread() {
        this.harness.acceptor = this.harness.acceptor.withInlineHandler(true);
        List<String> threads = new CopyOnWriteArrayList<>();
        this.harness.start(ServerHarness.connectingOnes(threads));
        FakeConnection connected = this.harness.connectOneAndRejectOne();

        assertThat(threads).containsOnly(LOOP);
        assertThat(connected.request().consumedOnThread()).isEqualTo(LOOP);
        assertThat(this.harness.listenerThreads).containsOnly(LOOP);
        assertThat(this.harness.served().acceptorLoop()).isSameAs(this.harness.server.eventLoops().get(0));
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch((t) -> t.getName().startsWith("rpma-acceptor-"));

        connected.peerDisconnects();
        this.harness.await("the session deleted", () -> connected.isDeleted());
        assertThat(connected.deletedOnThread()).isEqualTo(LOOP);
    }

    @Test
    void decisionsOfHandlerThreadsAreCarriedOutOnTheLoop() {
        List<String> threads = new CopyOnWriteArrayList<>();
        this.harness.start((request) -> {
            threads.add(Thread.currentThread().getName());
            request.connect();
        });
        FakeConnection first = this.harness.connectOne();
        FakeConnection second = this.harness.connectOne();

        assertThat(threads).hasSize(2).allSatisfy((name) -> assertThat(name).startsWith("rpma-default-handler"));
        assertThat(first.request().consumedOnThread()).isEqualTo(LOOP);
        assertThat(second.request().consumedOnThread()).isEqualTo(LOOP);
        assertThat(this.harness.served().sessions()).hasSize(2);
    }

    @Test
    void stoppingToAcceptLeavesTheLoopServingItsSessions() {
        this.harness.acceptor = this.harness.acceptor.withInlineHandler(true);
        this.harness.start(RpmaIncomingRequest::connect);
        FakeConnection open = this.harness.connectOne();

        this.harness.served().stopAccepting();
        this.harness.await("the endpoint shut down", () -> this.harness.endpoint.isShutDown());
        assertThat(this.harness.endpoint.shutDownOnThread()).isEqualTo(LOOP);
        assertThat(this.harness.served().acceptorLoop().isTerminated()).isFalse();
        assertThat(this.harness.served().sessions()).hasSize(1);

        open.peerDisconnects();
        this.harness.await("the session ended on the loop", () -> this.harness.ended.size() == 1);
        assertThat(open.deletedOnThread()).isEqualTo(LOOP);
    }

    @Test
    void aLostDeviceIsReleasedAndItsEndpointsAcceptOnTheLoopAgainOnceItIsBack() {
        this.harness.acceptor = this.harness.acceptor.withInlineHandler(true);
        this.harness.deviceRecovery = Duration.ofMillis(50);
        this.harness.moreEndpoints.add(new RpmaEndpointSettings("second", ServerHarness.ADDRESS, ServerHarness.PORT + 1,
                this.harness.acceptor, this.harness.messages, this.harness.limits, null));
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.connectOne();

        this.harness.fake.removeDevice(ServerHarness.ADDRESS);
        this.harness.await("the removed device released",
                () -> this.harness.fake.isRemovedDeviceReleased(ServerHarness.ADDRESS));
        assertThat(this.harness.server.eventLoops().get(0).isTerminated()).as("the loop goes on").isFalse();
        this.harness.fake.restoreDevice(ServerHarness.ADDRESS);
        this.harness.await("both endpoints running again", () -> this.harness.server.endpoints().values().stream()
            .allMatch((endpoint) -> endpoint.state() == RpmaEndpointState.RUNNING));

        this.harness.endpoint = this.harness.fake.endpointAt(ServerHarness.ADDRESS, ServerHarness.PORT);
        FakeConnection again = this.harness.connectOne();
        assertThat(again.request().consumedOnThread()).isEqualTo(LOOP);
        assertThat(this.harness.endpoint.owner().getName()).isEqualTo(LOOP);
    }
}

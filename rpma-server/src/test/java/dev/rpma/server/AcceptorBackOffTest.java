package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeRequest;

/**
 * What the acceptor does when {@code rpma_ep_next_conn_req} keeps failing: a shortage of resources
 * (the request's queues cannot be made) degrades the endpoint for as long as it lasts and never
 * fails it; other provider errors are retried up to max-consecutive-errors in a row; an unusable
 * endpoint fails at once. Sessions go on throughout.
 */
class AcceptorBackOffTest {

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void close() {
        this.harness.closeAndAssertNothingLeaked();
    }

    private void start(int maxConsecutiveErrors) {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(8, 2, Duration.ofSeconds(5), Duration.ofMillis(50),
                maxConsecutiveErrors, false, true, 0);
        this.harness.start(RpmaIncomingRequest::connect);
    }

    @Test
    void aLastingShortageOfFileDescriptorsDegradesTheEndpointUntilItPassesAndNeverFailsIt() {
        start(2);
        FakeConnection session = this.harness.connectOne();
        this.harness.endpoint.failEveryLook(RpmaError.PROVIDER.code(), Errno.EMFILE);
        FakeRequest waiting = this.harness.endpoint.queueRequest(new byte[] { 1 });

        this.harness.await("DEGRADED", () -> this.harness.served().state() == RpmaEndpointState.DEGRADED);
        assertThat(this.harness.served().degradedBy()).isNotNull()
            .satisfies((error) -> assertThat(error.errno()).isEqualTo(Errno.EMFILE));
        // far more failures than max-consecutive-errors: a shortage is waited out
        this.harness.await("five failed looks",
                () -> this.harness.statistics().errors("rpma_ep_next_conn_req", "RPMA_E_PROVIDER") >= 5);
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.DEGRADED);
        assertThat(this.harness.served().failure()).isNull();
        assertThat(session.isDeleted()).as("sessions go on").isFalse();

        this.harness.endpoint.stopFailing();
        this.harness.await("the waiting request connected", () -> waiting.state() == FakeRequest.State.CONNECTED);
        this.harness.await("RUNNING again", () -> this.harness.served().state() == RpmaEndpointState.RUNNING);
        assertThat(this.harness.served().degradedBy()).isNull();
        assertThat(this.harness.served().failure()).isNull();
    }

    @Test
    void whileItBacksOffTheAcceptorLeavesTheReadableFdAloneAndLooksOnlyWhenThePauseEnds() throws InterruptedException {
        start(2);
        this.harness.endpoint.failEveryLook(RpmaError.PROVIDER.code(), Errno.EMFILE);
        // announced, so the level-triggered fd stays readable for the whole shortage
        FakeRequest waiting = this.harness.endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("DEGRADED", () -> this.harness.served().state() == RpmaEndpointState.DEGRADED);
        Thread.sleep(300);

        // pauses of 10, 20, 40, 80, 160 ms and a look per poll interval of 50 ms: about a dozen looks
        assertThat(this.harness.statistics().errors("rpma_ep_next_conn_req", "RPMA_E_PROVIDER")).isLessThan(40);
        this.harness.endpoint.stopFailing();
        this.harness.await("the waiting request connected", () -> waiting.state() == FakeRequest.State.CONNECTED);
    }

    @Test
    void outOfMemoryAndExhaustedProviderResourcesNeverCountTowardsMaxConsecutiveErrors() {
        start(1);
        this.harness.endpoint.queueOutOfMemory().queueProviderError(Errno.ENOMEM).queueProviderError(Errno.ENFILE)
            .queueProviderError(Errno.ENOBUFS).queueProviderError(Errno.EIO).queueOutOfMemory();
        FakeRequest request = this.harness.endpoint.queueRequest(new byte[] { 1 });

        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);
        this.harness.await("RUNNING again", () -> this.harness.served().state() == RpmaEndpointState.RUNNING);
        RpmaEndpointStatistics statistics = this.harness.statistics();
        assertThat(statistics.errors("rpma_ep_next_conn_req", "RPMA_E_NOMEM")).isEqualTo(2);
        assertThat(statistics.errors("rpma_ep_next_conn_req", "RPMA_E_PROVIDER")).isEqualTo(4);
        assertThat(this.harness.served().failure()).isNull();
    }

    @Test
    void unexplainedProviderErrorsInARowPastTheLimitFailTheEndpointAndASuccessStartsTheCountAgain() {
        start(2);
        this.harness.endpoint.queueProviderError(Errno.EIO).queueProviderError(Errno.EIO);
        FakeRequest first = this.harness.endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("the first connect", () -> first.state() == FakeRequest.State.CONNECTED);
        assertThat(this.harness.served().failure()).isNull();

        this.harness.endpoint.queueProviderError(Errno.EIO).queueProviderError(Errno.EIO)
            .queueProviderError(Errno.EIO);
        this.harness.await("FAILED", () -> this.harness.served().state() == RpmaEndpointState.FAILED);
        assertThat(this.harness.served().failure()).hasMessageContaining("3 errors in a row");
        assertThat(this.harness.served().degradedBy()).isNull();
    }

    @Test
    void anInterruptedLookIsCountedButNeitherDegradesNorCountsTowardsMaxConsecutiveErrors() {
        start(1);
        this.harness.endpoint.queueProviderError(Errno.EINTR).queueProviderError(Errno.EINTR)
            .queueProviderError(Errno.EINTR);
        FakeRequest request = this.harness.endpoint.queueRequest(new byte[] { 1 });

        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);
        assertThat(this.harness.statistics().errors("rpma_ep_next_conn_req", "RPMA_E_PROVIDER")).isEqualTo(3);
        assertThat(this.harness.served().failure()).isNull();
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.RUNNING);
    }

    @Test
    void aLostDeviceFailsTheEndpointAtOnce() {
        start(10);
        this.harness.endpoint.queueProviderError(Errno.ENODEV);
        this.harness.await("FAILED", () -> this.harness.served().state() == RpmaEndpointState.FAILED);
        assertThat(this.harness.statistics().errors("rpma_ep_next_conn_req", "RPMA_E_PROVIDER")).isOne();
        assertThat(this.harness.served().failure()).hasMessageContaining("unusable").hasMessageContaining("ENODEV");
    }
}

package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaAdmissionToken;
import dev.rpma.server.admission.RpmaTokenAdmission;

/**
 * The admission step and the request-rate limit in the acceptor, over the scripted fake: a refused
 * request is rejected on the acceptor thread with {@code rpma_conn_req_delete} and counted, and it
 * never reaches the handler, its queue, or a place under the connection limit; what the handler and
 * the session see of the private data; and the order of the checks.
 */
class AdmissionTest {

    private static final byte[] HELLO_SERVER = "Hello server!\0".getBytes(StandardCharsets.US_ASCII);

    private static final byte[] STRANGER = "let me in".getBytes(StandardCharsets.US_ASCII);

    private static final String ACCEPTOR = "rpma-acceptor-default";

    private static final RpmaAdmissionKey KEY = RpmaAdmissionKey.of(7, "a-secret-of-at-least-thirty-two-bytes!");

    private static final RpmaAdmissionKey WRONG_KEY = RpmaAdmissionKey.of(7, "not-the-secret-the-server-was-given!!");

    private final ServerHarness harness = new ServerHarness();

    /** The private data each handler invocation saw. */
    private final List<byte[]> handled = new CopyOnWriteArrayList<>();

    /** The threads the admission step ran on. */
    private final List<String> admissionThreads = new CopyOnWriteArrayList<>();

    /** Admits what starts with "Hello", passing it on whole. */
    private final RpmaAdmission greetingsOnly = (endpoint, privateData) -> {
        this.admissionThreads.add(Thread.currentThread().getName());
        return startsWith(privateData, "Hello") ? RpmaAdmission.Decision.ADMIT : RpmaAdmission.Decision.UNAUTHENTICATED;
    };

    @AfterEach
    void everyRequestIsAccountedForAndNothingLeaks() {
        this.harness.stop();
        try {
            this.harness.fake.assertNoViolations();
            this.harness.fake.assertAllFreed();
            RpmaEndpointStatistics statistics = this.harness.statistics();
            assertThat(statistics.obtained())
                .isEqualTo(statistics.accepted() + statistics.failedToConnect() + statistics.rejectedTotal());
            assertThat(this.harness.served().registry().reserved()).as("places under the limit").isZero();
        }
        finally {
            this.harness.fake.close();
        }
    }

    private void connectRecording() {
        this.harness.start((request) -> {
            this.handled.add(request.privateData());
            request.connect();
        });
    }

    @Test
    void aRefusedRequestIsRejectedOnTheAcceptorThreadCountedAndNeverHandled() {
        AtomicInteger queueWaits = new AtomicInteger();
        this.harness.observer = new RpmaServerObserver() {

            @Override
            public void queueWait(String endpoint, Duration wait) {
                queueWaits.incrementAndGet();
            }
        };
        this.harness.admission = this.greetingsOnly;
        connectRecording();

        FakeRequest stranger = this.harness.endpoint.queueRequest(STRANGER);
        this.harness.await("the stranger's reject", () -> stranger.state() == FakeRequest.State.DELETED);

        assertThat(stranger.consumedOnThread()).isEqualTo(ACCEPTOR);
        assertThat(this.harness.fake.threadsCalling("rpma_conn_req_delete")).containsExactly(ACCEPTOR);
        assertThat(this.harness.statistics().rejected(RejectReason.UNAUTHENTICATED)).isOne();
        assertThat(this.handled).isEmpty();
        assertThat(queueWaits).as("requests taken from the handlers' queue").hasValue(0);
        assertThat(this.admissionThreads).containsExactly(ACCEPTOR);

        FakeRequest greeted = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the greeting's connect", () -> greeted.state() == FakeRequest.State.CONNECTED);
        assertThat(this.handled).containsExactly(HELLO_SERVER);
        assertThat(queueWaits).hasValue(1);
        // counted once rpma_conn_req_connect returned, a moment after the fake said CONNECTED
        this.harness.await("the accept counted", () -> this.harness.statistics().accepted() == 1);
    }

    @Test
    void admissionComesBeforeTheConnectionLimit() {
        this.harness.limits = new RpmaEndpointSettings.Limits(1, Duration.ZERO);
        this.harness.admission = this.greetingsOnly;
        connectRecording();
        this.harness.connectOne(HELLO_SERVER);

        FakeRequest stranger = this.harness.endpoint.queueRequest(STRANGER);
        this.harness.await("the stranger's reject", () -> stranger.state() == FakeRequest.State.DELETED);

        // had it reserved a place first, it would have found none and been counted as capacity
        assertThat(this.harness.statistics().rejected(RejectReason.UNAUTHENTICATED)).isOne();
        assertThat(this.harness.statistics().rejected(RejectReason.CAPACITY)).isZero();
        assertThat(this.harness.served().registry().reserved()).isOne();
        FakeRequest another = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the admitted one's reject", () -> another.state() == FakeRequest.State.DELETED);
        assertThat(this.harness.statistics().rejected(RejectReason.CAPACITY)).isOne();
    }

    @Test
    void admissionComesBeforeTheHandlersQueue() throws Exception {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(1, 1, Duration.ofSeconds(5), Duration.ofMillis(50), 10,
                false, true, 0);
        this.harness.admission = this.greetingsOnly;
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch firstStarted = new CountDownLatch(1);
        this.harness.start((request) -> {
            this.handled.add(request.privateData());
            firstStarted.countDown();
            release.await();
            request.reject();
        });
        FakeRequest first = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the first handler", () -> firstStarted.getCount() == 0);
        FakeRequest queued = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the second queued", () -> this.harness.served().queueSize() == 1);

        FakeRequest stranger = this.harness.endpoint.queueRequest(STRANGER);
        this.harness.await("the stranger's reject", () -> stranger.state() == FakeRequest.State.DELETED);

        // had it been offered to the full queue first, it would have been counted as queue-full
        assertThat(this.harness.statistics().rejected(RejectReason.UNAUTHENTICATED)).isOne();
        assertThat(this.harness.statistics().rejected(RejectReason.QUEUE_FULL)).isZero();
        assertThat(this.harness.served().queueSize()).isOne();
        release.countDown();
        this.harness.await("both rejected by the handler", () -> first.state() == FakeRequest.State.DELETED
                && queued.state() == FakeRequest.State.DELETED);
        assertThat(this.handled).hasSize(2).allSatisfy((data) -> assertThat(data).isEqualTo(HELLO_SERVER));
    }

    @Test
    void aPausedEndpointRejectsBeforeAskingTheAdmissionStep() {
        this.harness.admission = this.greetingsOnly;
        connectRecording();
        this.harness.served().pause();
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().rejected(RejectReason.PAUSED)).isOne();
        assertThat(this.admissionThreads).isEmpty();
    }

    @Test
    void theHandlerAndTheSessionSeeTheApplicationDataBehindTheToken() {
        this.harness.admission = new RpmaTokenAdmission(List.of(KEY));
        connectRecording();
        // RoCE pads the private data with zeros up to 56 bytes
        byte[] padded = Arrays.copyOf(RpmaAdmissionToken.issue(KEY, HELLO_SERVER), RpmaAdmissionToken.MAX_PRIVATE_DATA);

        this.harness.connectOne(padded);

        assertThat(this.handled).containsExactly(HELLO_SERVER);
        assertThat(this.harness.established).singleElement()
            .satisfies((session) -> assertThat(session.privateData()).isEqualTo(HELLO_SERVER));
    }

    @Test
    void missingWrongAndReplayedTokensAreRejectedAsUnauthenticatedWhileValidOnesAreServed() {
        this.harness.admission = new RpmaTokenAdmission(List.of(KEY));
        connectRecording();
        byte[] valid = RpmaAdmissionToken.issue(KEY, HELLO_SERVER);
        this.harness.connectOne(valid);

        List<FakeRequest> refused = List.of(this.harness.endpoint.queueRequest(HELLO_SERVER),
                this.harness.endpoint.queueRequest(RpmaAdmissionToken.issue(WRONG_KEY, HELLO_SERVER)),
                this.harness.endpoint.queueRequest(valid));
        this.harness.await("the three rejects",
                () -> refused.stream().allMatch((request) -> request.state() == FakeRequest.State.DELETED));
        this.harness.connectOne(RpmaAdmissionToken.issue(KEY, HELLO_SERVER));

        assertThat(this.harness.statistics().rejected(RejectReason.UNAUTHENTICATED)).isEqualTo(3);
        assertThat(this.harness.statistics().accepted()).isEqualTo(2);
        assertThat(this.handled).hasSize(2);
        assertThat(refused).allSatisfy((request) -> assertThat(request.consumedOnThread()).isEqualTo(ACCEPTOR));
    }

    @Test
    void pastTheRateRequestsAreRejectedAtOnceAsRateLimitedWithoutReachingTheHandler() {
        // one permit in 1000 s: within the test, the burst of two and no more
        this.harness.limits = RpmaEndpointSettings.Limits.DEFAULTS
            .withRequestRate(new RpmaEndpointSettings.RequestRate(0.001, 2));
        connectRecording();
        this.harness.connectOne(HELLO_SERVER);
        this.harness.connectOne(HELLO_SERVER);

        FakeRequest third = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the third's reject", () -> third.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().rejected(RejectReason.RATE_LIMITED)).isOne();
        assertThat(third.consumedOnThread()).isEqualTo(ACCEPTOR);
        assertThat(this.handled).hasSize(2);
    }

    @Test
    void requestsTheAdmissionStepRefusesUseUpNoPermits() {
        this.harness.limits = RpmaEndpointSettings.Limits.DEFAULTS
            .withRequestRate(new RpmaEndpointSettings.RequestRate(0.001, 2));
        this.harness.admission = this.greetingsOnly;
        connectRecording();
        List<FakeRequest> strangers = List.of(this.harness.endpoint.queueRequest(STRANGER),
                this.harness.endpoint.queueRequest(STRANGER), this.harness.endpoint.queueRequest(STRANGER));
        this.harness.await("the strangers' rejects",
                () -> strangers.stream().allMatch((request) -> request.state() == FakeRequest.State.DELETED));

        this.harness.connectOne(HELLO_SERVER);
        this.harness.connectOne(HELLO_SERVER);
        FakeRequest third = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the third's reject", () -> third.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().rejected(RejectReason.UNAUTHENTICATED)).isEqualTo(3);
        assertThat(this.harness.statistics().rejected(RejectReason.RATE_LIMITED)).isOne();
        assertThat(this.harness.statistics().accepted()).isEqualTo(2);
    }

    @Test
    void anAdmissionStepMaySayRateLimited() {
        this.harness.admission = (endpoint, privateData) -> RpmaAdmission.Decision.RATE_LIMITED;
        connectRecording();
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().rejected(RejectReason.RATE_LIMITED)).isOne();
        assertThat(this.handled).isEmpty();
    }

    @Test
    void anAdmissionStepThatThrowsRejectsTheRequestAsUnauthenticatedAndTheAcceptorGoesOn() {
        this.harness.admission = (endpoint, privateData) -> {
            if (startsWith(privateData, "boom")) {
                throw new IllegalStateException("boom");
            }
            return RpmaAdmission.Decision.ADMIT;
        };
        connectRecording();
        FakeRequest boom = this.harness.endpoint.queueRequest("boom".getBytes(StandardCharsets.US_ASCII));
        this.harness.await("the reject", () -> boom.state() == FakeRequest.State.DELETED);
        this.harness.connectOne(HELLO_SERVER);

        assertThat(this.harness.statistics().rejected(RejectReason.UNAUTHENTICATED)).isOne();
        assertThat(this.handled).containsExactly(HELLO_SERVER);
    }

    @Test
    void stepsChainedWithAndThenEachSeeWhatTheOneBeforePassedOn() {
        List<byte[]> secondSaw = new CopyOnWriteArrayList<>();
        this.harness.admission = new RpmaTokenAdmission(List.of(KEY)).andThen((endpoint, privateData) -> {
            secondSaw.add(privateData);
            return RpmaAdmission.Decision.ADMIT;
        });
        connectRecording();
        this.harness.connectOne(RpmaAdmissionToken.issue(KEY, HELLO_SERVER));

        assertThat(secondSaw).containsExactly(HELLO_SERVER);
        assertThat(this.handled).containsExactly(HELLO_SERVER);
    }

    @Test
    void aStepForOneEndpointLetsTheOthersRequestsPass() {
        this.harness.admission = RpmaAdmission.forEndpoint("orders", (endpoint, privateData) -> {
            throw new AssertionError("asked for endpoint " + endpoint);
        });
        connectRecording();
        this.harness.connectOne(STRANGER);

        assertThat(this.handled).containsExactly(STRANGER);
    }

    private static boolean startsWith(byte[] data, String prefix) {
        byte[] bytes = prefix.getBytes(StandardCharsets.US_ASCII);
        return data.length >= bytes.length && Arrays.equals(data, 0, bytes.length, bytes, 0, bytes.length);
    }
}

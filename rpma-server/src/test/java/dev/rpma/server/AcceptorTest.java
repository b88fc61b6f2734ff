package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeRequest;

/**
 * The acceptor over the scripted fake: every outcome of {@code rpma_ep_next_conn_req}, the bounded
 * queue, the connection limit, handlers that misbehave, decisions from other threads, and the stop.
 * The fake fails a test (violations) when a not-thread-safe call leaves the acceptor thread, a connect
 * overlaps a {@code rpma_ep_next_conn_req}, or a freed handle is used.
 */
class AcceptorTest {

    private static final byte[] HELLO_SERVER = "Hello server!\0".getBytes(StandardCharsets.US_ASCII);

    private static final byte[] HELLO_CLIENT = "Hello client!\0".getBytes(StandardCharsets.US_ASCII);

    private static final String ACCEPTOR = "rpma-acceptor-default";

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void releasesEverythingOnTheOwnerThreads() {
        this.harness.stop();
        try {
            this.harness.fake.assertNoViolations();
            this.harness.fake.assertAllFreed();
            if (this.harness.endpoint != null) {
                assertThat(this.harness.endpoint.isShutDown()).isTrue();
                assertThat(this.harness.endpoint.shutDownOnThread()).isEqualTo(ACCEPTOR);
            }
            RpmaEndpointStatistics statistics = this.harness.statistics();
            assertThat(statistics.obtained())
                .isEqualTo(statistics.accepted() + statistics.failedToConnect() + statistics.rejectedTotal());
            assertThat(statistics.activeConnections()).isZero();
            assertThat(this.harness.served().registry().reserved()).as("places under the limit").isZero();
        }
        finally {
            this.harness.fake.close();
        }
    }

    @Test
    void anEndpointThatNeverStartedIsReleasedByItsCreator() {
        this.harness.listen(RpmaIncomingRequest::connect);
        this.harness.stop();
        assertThat(this.harness.endpoint.isShutDown()).isTrue();
        assertThat(this.harness.endpoint.shutDownOnThread()).isEqualTo(Thread.currentThread().getName());
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.STOPPED);
        // the after-each check expects the acceptor to have shut the endpoint down; here it never ran
        this.harness.endpoint = null;
    }

    @Test
    void dispatchesARequestWithItsPrivateDataAndConnectsItOnTheAcceptorThread() {
        List<byte[]> seen = new CopyOnWriteArrayList<>();
        List<String> handlerThreads = new CopyOnWriteArrayList<>();
        this.harness.start((request) -> {
            seen.add(request.privateData());
            handlerThreads.add(Thread.currentThread().getName());
            request.attributes().put("greeting", "ok");
            request.connect(HELLO_CLIENT);
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);
        this.harness.await("ESTABLISHED", () -> this.harness.events.contains("ESTABLISHED"));

        assertThat(seen).containsExactly(HELLO_SERVER);
        assertThat(handlerThreads).singleElement().asString().startsWith("rpma-default-handler-");
        assertThat(request.connectPrivateData()).isEqualTo(HELLO_CLIENT);
        assertThat(request.consumedOnThread()).as("the accept runs on the acceptor").isEqualTo(ACCEPTOR);
        RpmaSession session = this.harness.established.get(0);
        assertThat(session.attributes()).containsEntry("greeting", "ok");
        assertThat(session.privateData()).isEqualTo(HELLO_SERVER);
        assertThat(session.endpointName()).isEqualTo("default");
        assertThat(session.isOpen()).isTrue();
        assertThat(this.harness.statistics().accepted()).isEqualTo(1);
        assertThat(this.harness.statistics().events(RpmaConnectionEvent.ESTABLISHED)).isEqualTo(1);
        assertThat(this.harness.statistics().activeConnections()).isEqualTo(1);
        assertThat(this.harness.fake.threadsCalling("rpma_ep_next_conn_req")).containsExactly(ACCEPTOR);
        assertThat(this.harness.fake.threadsCalling("rpma_conn_next_event")).containsExactly("rpma-loop-0");
        assertThat(this.harness.listenerThreads).containsOnly("rpma-loop-0");
    }

    @Test
    void anEndpointWithoutMessageHandlersPostsNoReceives() {
        this.harness.start(RpmaIncomingRequest::connect);
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);
        assertThat(request.receives()).isEmpty();
        assertThat(this.harness.fake.calls("rpma_mr_reg")).isZero();
        assertThat(this.harness.served().hasMessageHandlers()).isFalse();
    }

    @Test
    void nothingAvailableIsNotAnError() {
        this.harness.start(RpmaIncomingRequest::reject);
        this.harness.endpoint.queueNoEvent().queueProviderError(Errno.EAGAIN).queueNoEvent();
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().errors()).isEmpty();
        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isEqualTo(1);
        assertThat(request.consumedOnThread()).isEqualTo(ACCEPTOR);
    }

    @Test
    void aRequestWhoseReadinessWasSwallowedIsFoundByALookOncePerPollInterval() {
        this.harness.start(RpmaIncomingRequest::reject);
        FakeRequest first = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the first reject", () -> first.state() == FakeRequest.State.DELETED);
        FakeRequest unannounced = this.harness.endpoint.queueRequestWithoutReadiness(HELLO_SERVER);
        this.harness.await("the reject of the request the fd did not announce",
                () -> unannounced.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isEqualTo(2);
    }

    @Test
    void loneRequestsCostNoLookThatFindsNothingAndABurstAtMostOnePerRound() {
        // every empty look is a failed read that librpma logs at ERROR, through the log callback
        long start = System.nanoTime();
        this.harness.start(RpmaIncomingRequest::reject);
        for (int i = 0; i < 20; i++) {
            FakeRequest lone = this.harness.endpoint.queueRequest(HELLO_SERVER);
            this.harness.await("the reject", () -> lone.state() == FakeRequest.State.DELETED);
        }
        long afterLone = emptyLooks();
        // only the unprompted look once per poll interval (50 ms) may find nothing
        assertThat(afterLone).isLessThanOrEqualTo(Duration.ofNanos(System.nanoTime() - start).toMillis() / 50 + 1);

        long roundsBefore = this.harness.served().acceptorLoop().wakeups();
        long burstStart = System.nanoTime();
        List<FakeRequest> burst = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            burst.add(this.harness.endpoint.queueRequest(HELLO_SERVER));
        }
        this.harness.await("the burst's rejects",
                () -> burst.stream().allMatch((request) -> request.state() == FakeRequest.State.DELETED));
        long rounds = this.harness.served().acceptorLoop().wakeups() - roundsBefore;
        long pollIntervals = Duration.ofNanos(System.nanoTime() - burstStart).toMillis() / 50 + 1;
        // a burst ends with the look that finds librpma empty, instead of a poll(2) before each request
        assertThat(emptyLooks() - afterLone).isLessThanOrEqualTo(rounds + pollIntervals);
        assertThat(this.harness.statistics().rejectedTotal()).isEqualTo(120);
    }

    private long emptyLooks() {
        return this.harness.fake.callLog("rpma_ep_next_conn_req").stream()
            .filter((call) -> call.returnCode() == RpmaError.PROVIDER.code() && call.errno() == Errno.EAGAIN)
            .count();
    }

    @Test
    void aBacklogIsTakenSixtyFourRequestsPerRoundWithOneLookThatFindsNothingAtItsEnd() {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(1024, 2, Duration.ofSeconds(5), Duration.ofSeconds(1),
                10, false, true, RpmaEndpointSettings.Acceptor.DEFAULT_SPIN_LOOKS);
        this.harness.listen(RpmaIncomingRequest::reject);
        List<FakeRequest> backlog = new ArrayList<>();
        for (int i = 0; i < 650; i++) {
            backlog.add(this.harness.endpoint.queueRequest(HELLO_SERVER));
        }
        this.harness.server.start();
        this.harness.await("the backlog's rejects",
                () -> backlog.stream().allMatch((request) -> request.state() == FakeRequest.State.DELETED));

        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isEqualTo(650);
        // one round per request before; now one per 64 requests, and rounds for the handlers' decisions
        assertThat(this.harness.served().acceptorLoop().wakeups()).isLessThan(650 / 2);
        // ten full bursts of 64, then one of 10 that ends with the look finding librpma empty (the poll
        // interval of 1 s did not pass)
        assertThat(emptyLooks()).isEqualTo(1);
    }

    @Test
    void decisionsTakenWhileTheAcceptorIsBusyAreCarriedOutTogetherInItsNextRound() throws Exception {
        CountDownLatch arrived = new CountDownLatch(2);
        CountDownLatch decide = new CountDownLatch(1);
        CountDownLatch decided = new CountDownLatch(2);
        this.harness.start((request) -> {
            arrived.countDown();
            decide.await();
            request.reject();
            decided.countDown();
        });
        FakeRequest first = this.harness.endpoint.queueRequest(HELLO_SERVER);
        FakeRequest second = this.harness.endpoint.queueRequest(HELLO_SERVER);
        assertThat(arrived.await(10, TimeUnit.SECONDS)).isTrue();
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        this.harness.served().acceptorLoop().execute(() -> {
            busy.countDown();
            try {
                release.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
        decide.countDown();
        assertThat(decided.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(first.state()).as("not carried out on the handler thread").isEqualTo(FakeRequest.State.PENDING);
        long wakeups = this.harness.served().acceptorLoop().wakeups();
        release.countDown();
        this.harness.await("both rejects", () -> first.state() == FakeRequest.State.DELETED
                && second.state() == FakeRequest.State.DELETED);

        assertThat(first.consumedOnThread()).isEqualTo(ACCEPTOR);
        assertThat(second.consumedOnThread()).isEqualTo(ACCEPTOR);
        // the task the first decision handed over ran in the round the busy task was in, and took both
        assertThat(this.harness.served().acceptorLoop().wakeups() - wakeups).isLessThanOrEqualTo(1);
    }

    @Test
    void requestsDecidedOnHandlerThreadsAreForgottenWithoutWaitingForTheirDeadline() throws Exception {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(8, 2, Duration.ofMinutes(1), Duration.ofMillis(50), 10,
                false, true, RpmaEndpointSettings.Acceptor.DEFAULT_SPIN_LOOKS);
        this.harness.start(RpmaIncomingRequest::reject);
        for (int i = 0; i < 50; i++) {
            FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
            this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
        }
        RpmaServedEndpoint served = this.harness.served();

        assertThat(CompletableFuture.supplyAsync(served.acceptor()::heldRequests, served.acceptorLoop()).get())
            .as("requests the acceptor still holds").isZero();
    }

    @Test
    void requestsDecidedBehindAnUndecidedOneAreHeldUntilItsDeadlineRejectsIt() throws Exception {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(8, 2, Duration.ofMillis(500), Duration.ofMillis(50),
                10, false, true, RpmaEndpointSettings.Acceptor.DEFAULT_SPIN_LOOKS);
        AtomicReference<RpmaIncomingRequest> undecided = new AtomicReference<>();
        this.harness.start((request) -> {
            if (undecided.compareAndSet(null, request)) {
                // holds its thread and decides nothing: the deadline rejects it
                FakeRequestWait.until(request::isDecided);
                return;
            }
            request.reject();
        });
        FakeRequest first = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the first handler", () -> undecided.get() != null);
        FakeRequest[] later = new FakeRequest[5];
        for (int i = 0; i < later.length; i++) {
            later[i] = this.harness.endpoint.queueRequest(HELLO_SERVER);
            FakeRequest request = later[i];
            this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
        }
        RpmaServedEndpoint served = this.harness.served();
        int heldBeforeTheDeadline = CompletableFuture.supplyAsync(served.acceptor()::heldRequests, served.acceptorLoop())
            .get();
        this.harness.await("the deadline's reject", () -> first.state() == FakeRequest.State.DELETED);

        assertThat(heldBeforeTheDeadline).as("the decided requests, held behind the undecided oldest one")
            .isEqualTo(1 + later.length);
        assertThat(CompletableFuture.supplyAsync(served.acceptor()::heldRequests, served.acceptorLoop()).get())
            .as("requests the acceptor still holds").isZero();
        assertThat(this.harness.statistics().rejected(RejectReason.DEADLINE)).isEqualTo(1);
        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isEqualTo(later.length);
    }

    @Test
    void acceptsDecidedOnHandlerThreadsNeverOverlapTheTakingOfRequests() throws InterruptedException {
        // the fake flags an rpma_ep_next_conn_req that overlaps an accept of a request from the endpoint
        this.harness.fake.notThreadSafeDwell(Duration.ofMillis(2));
        this.harness.start(RpmaIncomingRequest::connect);
        List<FakeRequest> requests = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            requests.add(this.harness.endpoint.queueRequest(HELLO_SERVER));
            Thread.sleep(1);
        }
        this.harness.await("every connect counted", () -> this.harness.statistics().accepted() == 30);

        assertThat(requests).allMatch((r) -> r.state() == FakeRequest.State.CONNECTED);
        assertThat(this.harness.fake.violations()).isEmpty();
        assertThat(this.harness.fake.threadsCalling("rpma_conn_req_connect")).containsExactly(ACCEPTOR);
    }

    @Test
    void anEventThatIsNotARequestIsCountedAndTheAcceptorGoesOn() {
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.endpoint.queueUnexpectedEvent();
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);

        assertThat(this.harness.statistics().errors("rpma_ep_next_conn_req", "RPMA_E_INVAL")).isEqualTo(1);
        assertThat(this.harness.statistics().lastErrors()).singleElement()
            .satisfies((error) -> assertThat(error.code()).isEqualTo("RPMA_E_INVAL"));
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.RUNNING);
    }

    @Test
    void providerErrorsAndOutOfMemoryAreRetriedWithBackOff() {
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.endpoint.queueProviderError(Errno.EIO).queueOutOfMemory().queueProviderError(Errno.EINTR);
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);

        RpmaEndpointStatistics statistics = this.harness.statistics();
        assertThat(statistics.errors("rpma_ep_next_conn_req", "RPMA_E_PROVIDER")).isEqualTo(2);
        assertThat(statistics.errors("rpma_ep_next_conn_req", "RPMA_E_NOMEM")).isEqualTo(1);
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.RUNNING);
        assertThat(this.harness.served().failure()).isNull();
    }

    @Test
    void anErrorThatLeavesTheEndpointUnusableStopsAcceptingVisiblyWhileSessionsGoOn() {
        this.harness.start(RpmaIncomingRequest::connect);
        FakeConnection session = this.harness.connectOne();
        this.harness.endpoint.queueProviderError(Errno.EBADF);

        this.harness.await("the failure", () -> this.harness.served().state() == RpmaEndpointState.FAILED);
        assertThat(this.harness.served().failure()).isInstanceOfSatisfying(RpmaAcceptorException.class, (failure) -> {
            assertThat(failure.rpmaCause().error()).isEqualTo(RpmaError.PROVIDER);
            assertThat(failure.rpmaCause().errno()).isEqualTo(Errno.EBADF);
            assertThat(failure.getMessage()).contains("rpma_ep_next_conn_req");
        });
        this.harness.await("the endpoint shut down", this.harness.endpoint::isShutDown);
        assertThat(session.isDeleted()).as("connections survive rpma_ep_shutdown").isFalse();
    }

    @Test
    void tooManyUnexplainedProviderErrorsInARowStopAccepting() {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(8, 2, Duration.ofSeconds(5), Duration.ofMillis(50), 2,
                false, true, 0);
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.endpoint.queueProviderError(Errno.EIO).queueProviderError(Errno.EIO).queueProviderError(Errno.EIO);

        this.harness.await("the failure", () -> this.harness.served().state() == RpmaEndpointState.FAILED);
        assertThat(this.harness.statistics().errors("rpma_ep_next_conn_req", "RPMA_E_PROVIDER")).isEqualTo(3);
    }

    @Test
    void aFullQueueRejectsAtOnce() {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(1, 1, Duration.ofSeconds(5), Duration.ofMillis(50), 10,
                false, true, 0);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch firstStarted = new CountDownLatch(1);
        this.harness.start((request) -> {
            firstStarted.countDown();
            release.await();
            request.reject();
        });
        FakeRequest first = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the first handler", () -> firstStarted.getCount() == 0);
        FakeRequest queued = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the second queued", () -> this.harness.served().queueSize() == 1);
        FakeRequest overflow = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the overflow's reject", () -> overflow.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().rejected(RejectReason.QUEUE_FULL)).isEqualTo(1);
        assertThat(queued.state()).isEqualTo(FakeRequest.State.PENDING);
        release.countDown();
        this.harness.await("both rejected", () -> first.state() == FakeRequest.State.DELETED
                && queued.state() == FakeRequest.State.DELETED);
        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isEqualTo(2);
        assertThat(overflow.consumedOnThread()).isEqualTo(ACCEPTOR);
    }

    @Test
    void pastTheConnectionLimitRequestsAreRejectedAsCapacityAndAFreedPlaceIsTakenAgain() {
        this.harness.limits = new RpmaEndpointSettings.Limits(2, Duration.ZERO);
        this.harness.start(RpmaIncomingRequest::connect);
        FakeConnection first = this.harness.connectOne();
        this.harness.connectOne();
        FakeRequest third = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the third rejected", () -> third.state() == FakeRequest.State.DELETED);
        assertThat(this.harness.statistics().rejected(RejectReason.CAPACITY)).isEqualTo(1);

        first.peerDisconnects();
        this.harness.await("the first deleted", () -> this.harness.served().registry().reserved() == 1);
        FakeRequest fourth = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the fourth connected", () -> fourth.state() == FakeRequest.State.CONNECTED);
    }

    @Test
    void aHandlerThatThrowsGetsItsRequestRejected() {
        this.harness.start((request) -> {
            throw new IllegalStateException("boom");
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER_FAILED)).isEqualTo(1);
        assertThat(request.consumedOnThread()).isEqualTo(ACCEPTOR);
    }

    @Test
    void rejectedRequestsAndFailedAcceptsLeaveNoKernelCmIdBehindWhileTheEndpointListens() {
        this.harness.start((request) -> {
            if (request.privateData()[0] == 0) {
                request.connect();
            }
            else {
                request.reject();
            }
        });
        List<FakeRequest> requests = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            requests.add(this.harness.endpoint.queueRequest(new byte[] { (byte) (1 + i % 3) }));
        }
        requests.add(this.harness.endpoint.queueRequest(new byte[] { 0 },
                (request) -> request.failConnect(RpmaError.PROVIDER.code(), Errno.ECONNRESET)));
        this.harness.await("every request consumed",
                () -> requests.stream().allMatch((r) -> r.state() == FakeRequest.State.DELETED
                        || r.state() == FakeRequest.State.CONNECT_FAILED));

        this.harness.await("the ids destroyed", () -> this.harness.fake.cmIdsLeftBehind() == 0);
        assertThat(requests).extracting(FakeRequest::cmIdState).containsOnly(FakeRequest.CmId.DESTROYED);
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.RUNNING);
    }

    @Test
    void aHandlerThatDecidesNothingGetsItsRequestRejected() {
        this.harness.start((request) -> {
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER_FAILED)).isEqualTo(1);
    }

    @Test
    void aDecisionAfterTheHandlerReturnedComesTooLate() {
        AtomicReference<Throwable> late = new AtomicReference<>();
        CountDownLatch returned = new CountDownLatch(1);
        this.harness.start((request) -> {
            Thread later = new Thread(() -> {
                try {
                    returned.await();
                    FakeRequestWait.until(request::isDecided);
                    request.connect();
                }
                catch (Throwable ex) {
                    late.set(ex);
                }
            }, "later");
            later.start();
            returned.countDown();
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
        this.harness.await("the late connect", () -> late.get() != null);

        // a request belongs to its handler's invocation: one that returns undecided has rejected it
        assertThat(late.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("handler-failed");
        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER_FAILED)).isEqualTo(1);
        assertThat(this.harness.fake.calls("rpma_conn_req_connect")).isZero();
    }

    @Test
    void aHandlerPastItsDeadlineLosesTheRequest() {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(8, 2, Duration.ofMillis(100), Duration.ofMillis(50),
                10, false, true, 0);
        AtomicReference<Throwable> late = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        this.harness.start((request) -> {
            try {
                FakeRequestWait.until(request::isDecided);
                request.connect();
            }
            catch (Throwable ex) {
                late.set(ex);
            }
            finally {
                done.countDown();
            }
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the handler", () -> done.getCount() == 0);

        assertThat(request.state()).isEqualTo(FakeRequest.State.DELETED);
        assertThat(late.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("deadline");
        assertThat(this.harness.statistics().rejected(RejectReason.DEADLINE)).isEqualTo(1);
        assertThat(request.consumedOnThread()).isEqualTo(ACCEPTOR);
    }

    @Test
    void aRequestIsDecidedExactlyOnce() {
        AtomicReference<Throwable> second = new AtomicReference<>();
        this.harness.start((request) -> {
            request.reject();
            try {
                request.connect();
            }
            catch (IllegalStateException ex) {
                second.set(ex);
            }
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
        this.harness.await("the second attempt", () -> second.get() != null);

        assertThat(second.get()).hasMessageContaining("already rejected");
        assertThat(this.harness.fake.calls("rpma_conn_req_connect")).isZero();
    }

    @Test
    void aFailedConnectIsCountedAndConsumesTheRequest() {
        this.harness.start(RpmaIncomingRequest::connect);
        // scripted before it is queued: the acceptor may take and connect it at once
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER,
                (scripted) -> scripted.failConnect(RpmaError.PROVIDER.code(), Errno.ECONNRESET));
        this.harness.await("the failed connect", () -> request.state() == FakeRequest.State.CONNECT_FAILED);
        this.harness.await("the failure counted", () -> this.harness.statistics().failedToConnect() == 1);

        assertThat(this.harness.statistics().errors("rpma_conn_req_connect", "RPMA_E_PROVIDER")).isEqualTo(1);
        assertThat(this.harness.served().registry().reserved()).isZero();
    }

    @Test
    void aReceiveThatFailsBeforeTheAcceptRejectsTheRequestAndGivesItsSlotsBack() {
        // the second receive of the first request fails: its session's slots were taken and one receive posted
        this.harness.fake.failAfter("rpma_conn_req_recv", 1, RpmaError.PROVIDER.code(), Errno.ENOMEM);
        this.harness.startRaw((message, session) -> message);
        FakeRequest failed = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the failed request rejected", () -> failed.state() == FakeRequest.State.DELETED);
        this.harness.await("the failure counted", () -> this.harness.statistics().failedToConnect() == 1);
        FakeConnection next = this.harness.connectOne();

        assertThat(this.harness.fake.calls("rpma_conn_req_connect")).isOne();
        assertThat(this.harness.statistics().errors("rpma_conn_req_recv", "RPMA_E_PROVIDER")).isOne();
        assertThat(next.request().receives().get(0).localOffset())
            .as("the next session gets the slots the failed request gave back")
            .isEqualTo(failed.receives().get(0).localOffset());
    }

    @Test
    void anAcceptCarriesExactlyAsMuchPrivateDataAsAnAcceptTakes() {
        byte[] longest = new byte[RpmaConnectionRequest.MAX_ACCEPT_PRIVATE_DATA];
        longest[longest.length - 1] = 7;
        this.harness.start((request) -> request.connect(longest));
        FakeConnection connection = this.harness.connectOne();

        assertThat(connection.request().connectPrivateData()).isEqualTo(longest);
    }

    @Test
    void aRejectAfterAConnectFailsAndTheRequestIsConnected() {
        AtomicReference<Throwable> second = new AtomicReference<>();
        List<String> endpointNames = new CopyOnWriteArrayList<>();
        this.harness.start((request) -> {
            endpointNames.add(request.endpointName());
            request.connect();
            try {
                request.reject();
            }
            catch (IllegalStateException ex) {
                second.set(ex);
            }
        });
        FakeConnection connection = this.harness.connectOne();
        // the handler's thread tries the reject after its connect: the session may be established first
        this.harness.await("the handler's reject", () -> second.get() != null);

        assertThat(second.get()).hasMessageContaining("Cannot reject").hasMessageContaining("already connected")
            .hasMessageContaining("'default'");
        assertThat(endpointNames).containsExactly("default");
        assertThat(connection.request().state()).isEqualTo(FakeRequest.State.CONNECTED);
        assertThat(this.harness.statistics().rejectedTotal()).isZero();
    }

    @Test
    void everyUndecidedRequestIsRejectedAtItsOwnDeadline() throws InterruptedException {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(8, 2, Duration.ofMillis(400), Duration.ofMillis(50),
                10, false, true, 0);
        // decides nothing and holds its thread until the deadline has rejected the request
        this.harness.start((request) -> FakeRequestWait.until(request::isDecided));
        FakeRequest first = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the first handler", () -> this.harness.statistics().obtained() == 1);
        Thread.sleep(200);
        FakeRequest second = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the first deadline's reject", () -> first.state() == FakeRequest.State.DELETED);
        long firstRejected = System.nanoTime();
        // the timer that rejected the first is set again for the second: nothing else would wake the acceptor
        this.harness.await("the second deadline's reject", () -> second.state() == FakeRequest.State.DELETED);

        // the later request did not move the timer set for the earlier one
        assertThat(Duration.ofNanos(System.nanoTime() - firstRejected)).isGreaterThan(Duration.ofMillis(100));

        assertThat(this.harness.statistics().rejected(RejectReason.DEADLINE)).isEqualTo(2);
    }

    @Test
    void aRequestWhoseReadinessWasSwallowedLongAfterTheStartIsFoundToo() throws InterruptedException {
        this.harness.start(RpmaIncomingRequest::reject);
        // several poll intervals of 50 ms: the look is made again every interval, not once after the start
        Thread.sleep(300);
        FakeRequest unannounced = this.harness.endpoint.queueRequestWithoutReadiness(HELLO_SERVER);
        this.harness.await("the reject of the request the fd did not announce",
                () -> unannounced.state() == FakeRequest.State.DELETED);
    }

    @Test
    void theQueueWaitReportedIsTheTimeARequestWaitedForAHandlerThread() {
        List<Duration> waits = new CopyOnWriteArrayList<>();
        this.harness.observer = new RpmaServerObserver() {

            @Override
            public void queueWait(String endpoint, Duration wait) {
                waits.add(wait);
            }
        };
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.connectOne();

        assertThat(waits).singleElement()
            .satisfies((wait) -> assertThat(wait).isBetween(Duration.ZERO, ServerHarness.WAIT));
    }

    @Test
    void theEndpointListsItsOpenSessions() {
        this.harness.start(RpmaIncomingRequest::connect);
        FakeConnection first = this.harness.connectOne();
        this.harness.connectOne();
        assertThat(this.harness.served().sessions()).containsExactlyInAnyOrderElementsOf(this.harness.established);

        first.peerDisconnects();
        this.harness.await("the first session gone", () -> this.harness.served().sessions().size() == 1);
    }

    @Test
    void aClosedConnectionIsDisconnectedAndDeletedOnItsLoopEvenWhenClosedComesTwice() {
        this.harness.start(RpmaIncomingRequest::connect);
        FakeConnection connection = this.harness.connectOne(HELLO_SERVER);
        connection.queueEvent(RpmaConnectionEvent.CLOSED).queueEvent(RpmaConnectionEvent.CLOSED);
        this.harness.await("the delete", connection::isDeleted);

        assertThat(connection.disconnects()).isEqualTo(1);
        assertThat(connection.deletedOnThread()).isEqualTo("rpma-loop-0");
        this.harness.await("the end heard", () -> this.harness.events.size() == 2);
        assertThat(this.harness.events).containsExactly("ESTABLISHED", "CLOSED");
        assertThat(this.harness.statistics().events(RpmaConnectionEvent.CLOSED)).isEqualTo(1);
        assertThat(this.harness.statistics().sessionsEnded(RpmaSessionEnd.Reason.CLOSED)).isEqualTo(1);
        assertThat(this.harness.statistics().activeConnections()).isZero();
    }

    @Test
    void aConnectionClosedBeforeItWasEverEstablishedIsCleanedUp() {
        // under soft-RoCE a short-lived connection can reach CLOSED on the passive side without ESTABLISHED
        this.harness.fake.establishOnConnect(false);
        this.harness.start(RpmaIncomingRequest::connect);
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER,
                (scripted) -> scripted.thenEvents(RpmaConnectionEvent.CLOSED));
        this.harness.await("the delete", () -> request.connection() != null && request.connection().isDeleted());
        this.harness.await("the end heard", () -> this.harness.events.size() == 1);
        assertThat(this.harness.events).containsExactly("CLOSED");
    }

    @Test
    void aLostConnectionIsCleanedUp() {
        this.harness.start(RpmaIncomingRequest::connect);
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER,
                (scripted) -> scripted.thenEvents(RpmaConnectionEvent.LOST));
        this.harness.await("the delete", () -> request.connection() != null && request.connection().isDeleted());
        this.harness.await("the end heard", () -> this.harness.events.size() == 2);

        assertThat(this.harness.statistics().events(RpmaConnectionEvent.LOST)).isEqualTo(1);
        assertThat(this.harness.events).containsExactly("ESTABLISHED", "LOST");
    }

    @Test
    void pausedEndpointsRejectAndCount() {
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.served().pause();
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.PAUSED);
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
        this.harness.served().resume();
        FakeRequest next = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the connect", () -> next.state() == FakeRequest.State.CONNECTED);

        assertThat(this.harness.statistics().rejected(RejectReason.PAUSED)).isEqualTo(1);
        assertThat(this.harness.served().registry().reserved()).isOne();
    }

    @Test
    void theStopRejectsQueuedRequestsAndDisconnectsOpenSessionsAfterTheGracePeriod() throws InterruptedException {
        this.harness.acceptor = new RpmaEndpointSettings.Acceptor(4, 1, Duration.ofSeconds(5), Duration.ofMillis(50), 10,
                false, true, 0);
        this.harness.gracePeriod = Duration.ofMillis(300);
        CountDownLatch busy = new CountDownLatch(1);
        AtomicReference<Throwable> interrupted = new AtomicReference<>();
        this.harness.start((request) -> {
            if (request.privateData()[0] == 'o') {
                request.connect();
                return;
            }
            busy.countDown();
            try {
                Thread.sleep(60_000);
            }
            catch (InterruptedException ex) {
                interrupted.set(ex);
            }
        });
        FakeConnection open = this.harness.connectOne("open".getBytes(StandardCharsets.US_ASCII));
        FakeRequest blocking = this.harness.endpoint.queueRequest("block".getBytes(StandardCharsets.US_ASCII));
        this.harness.await("the busy handler", () -> busy.getCount() == 0);
        FakeRequest queued1 = this.harness.endpoint.queueRequest("q1".getBytes(StandardCharsets.US_ASCII));
        FakeRequest queued2 = this.harness.endpoint.queueRequest("q2".getBytes(StandardCharsets.US_ASCII));
        this.harness.await("both queued", () -> this.harness.served().queueSize() == 2);

        long start = System.nanoTime();
        CountDownLatch stopped = new CountDownLatch(1);
        this.harness.server.stop(stopped::countDown);
        assertThat(stopped.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(queued1.state()).isEqualTo(FakeRequest.State.DELETED);
        assertThat(queued2.state()).isEqualTo(FakeRequest.State.DELETED);
        assertThat(blocking.state()).isEqualTo(FakeRequest.State.DELETED);
        assertThat(this.harness.statistics().rejected(RejectReason.SHUTDOWN)).isEqualTo(3);
        assertThat(interrupted.get()).isNotNull();
        assertThat(open.disconnects()).isEqualTo(1);
        assertThat(open.isDeleted()).isTrue();
        assertThat(this.harness.ended).extracting(RpmaSessionEnd::reason).containsExactly(RpmaSessionEnd.Reason.SHUTDOWN);
        assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.STOPPED);
        assertThat(this.harness.fake.liveHandles()).isEmpty();
    }

    @Test
    void aSessionThatEndsWithinTheGracePeriodLetsTheStopEndEarly() throws InterruptedException {
        this.harness.gracePeriod = Duration.ofSeconds(30);
        this.harness.start(RpmaIncomingRequest::connect);
        FakeConnection open = this.harness.connectOne();
        CountDownLatch stopped = new CountDownLatch(1);
        this.harness.server.stop(stopped::countDown);
        Thread.sleep(100);
        assertThat(stopped.getCount()).as("waiting for the session").isOne();
        open.peerDisconnects();
        assertThat(stopped.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(this.harness.ended).extracting(RpmaSessionEnd::reason).containsExactly(RpmaSessionEnd.Reason.CLOSED);
    }

    @Test
    void aRejectFromAnotherThreadIsCarriedOutByTheAcceptor() {
        this.harness.start((request) -> {
            Thread other = new Thread(request::reject, "someone-else");
            other.start();
            other.join();
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);

        assertThat(request.consumedOnThread()).isEqualTo(ACCEPTOR);
        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isEqualTo(1);
    }

    @Test
    void theServerKeepsTheJvmAliveWithAThreadOfItsOwnWhileItsLoopsAreDaemons() {
        this.harness.start(RpmaIncomingRequest::connect);
        Thread keepAlive = Thread.getAllStackTraces().keySet().stream()
            .filter((thread) -> thread.getName().equals("rpma-server")).findFirst().orElseThrow();
        assertThat(keepAlive.isDaemon()).isFalse();
        assertThat(this.harness.served().acceptorLoop().thread().isDaemon()).isTrue();
        assertThat(this.harness.server.eventLoops()).allSatisfy((loop) -> assertThat(loop.thread().isDaemon()).isTrue());
        this.harness.stop();
        this.harness.await("the keep-alive thread ends", () -> !keepAlive.isAlive());
    }

    @Test
    void connectRefusesPrivateDataAnAcceptCannotCarry() {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        this.harness.start((request) -> {
            try {
                request.connect(new byte[197]);
            }
            catch (IllegalArgumentException ex) {
                thrown.set(ex);
                request.reject();
            }
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
        assertThat(thrown.get()).hasMessageContaining("196");
    }

    @Test
    void anInlineHandlerDecidesOnTheAcceptorThreadAndNeedsNoHandlerThreads() {
        this.harness.acceptor = this.harness.acceptor.withInlineHandler(true);
        List<String> threads = new CopyOnWriteArrayList<>();
        this.harness.start(ServerHarness.connectingOnes(threads));
        FakeConnection connected = this.harness.connectOneAndRejectOne();

        assertThat(threads).containsOnly(ACCEPTOR);
        assertThat(connected.request().consumedOnThread()).isEqualTo(ACCEPTOR);
        assertThat(this.harness.served().queueCapacity()).isZero();
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch((t) -> t.getName().startsWith("rpma-default-handler"));
    }

    /** Waits until a condition holds, for threads that race the acceptor. */
    static final class FakeRequestWait {

        static void until(java.util.function.BooleanSupplier condition) throws InterruptedException {
            long end = System.nanoTime() + ServerHarness.WAIT.toNanos();
            while (!condition.getAsBoolean() && System.nanoTime() < end) {
                Thread.sleep(5);
            }
        }
    }
}

package dev.rpma.spring.server;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.jna.Errno;
import dev.rpma.jna.RpmaConnectionEvent;
import dev.rpma.jna.RpmaError;
import dev.rpma.jna.testing.FakeConnection;
import dev.rpma.jna.testing.FakeRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The acceptor over the scripted fake: every outcome of {@code rpma_ep_next_conn_req}, the bounded
 * queue, handlers that misbehave, connection events and teardown, and shutdown. The fake fails a test
 * (violations) when a not-thread-safe call leaves the acceptor thread or a freed handle is used.
 */
class RpmaAcceptorTest {

    private static final byte[] HELLO_SERVER = "Hello server!\0".getBytes(StandardCharsets.US_ASCII);

    private static final byte[] HELLO_CLIENT = "Hello client!\0".getBytes(StandardCharsets.US_ASCII);

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void releasesEverythingOnTheOwnerThread() {
        this.harness.stop();
        try {
            this.harness.fake.assertNoViolations();
            this.harness.fake.assertAllFreed();
            if (this.harness.endpoint != null) {
                assertThat(this.harness.endpoint.isShutDown()).isTrue();
                assertThat(this.harness.endpoint.shutDownOnThread()).isEqualTo("rpma-acceptor-default");
            }
            RpmaEndpointStatistics statistics = this.harness.statistics();
            assertThat(statistics.obtained())
                    .isEqualTo(statistics.accepted() + statistics.failedToConnect() + statistics.rejectedTotal());
            assertThat(statistics.activeConnections()).isZero();
            assertThat(this.harness.endpointServer().isAcceptorReleased()).isTrue();
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
        assertThat(this.harness.endpointServer().isAcceptorReleased()).isTrue();
        assertThat(this.harness.endpointServer().state()).isEqualTo(RpmaEndpointState.STOPPED);
        // the after-each check expects the owner thread to have shut the endpoint down; here it never ran
        this.harness.endpoint = null;
    }

    @Test
    void dispatchesARequestWithItsPrivateDataAndConnectsIt() {
        List<byte[]> seen = new CopyOnWriteArrayList<>();
        this.harness.start((request) -> {
            seen.add(request.privateData());
            request.connect(HELLO_CLIENT);
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);
        this.harness.await("ESTABLISHED", () -> this.harness.events.contains("ESTABLISHED"));

        assertThat(seen).containsExactly(HELLO_SERVER);
        assertThat(request.connectPrivateData()).isEqualTo(HELLO_CLIENT);
        assertThat(request.config().cqSize()).isEqualTo(16);
        assertThat(this.harness.statistics().accepted()).isEqualTo(1);
        assertThat(this.harness.statistics().events(RpmaConnectionEvent.ESTABLISHED)).isEqualTo(1);
        assertThat(this.harness.statistics().activeConnections()).isEqualTo(1);
        assertThat(this.harness.fake.threadsCalling("rpma_ep_next_conn_req")).containsExactly("rpma-acceptor-default");
    }

    @Test
    void nothingAvailableIsNotAnError() {
        this.harness.start(RpmaIncomingRequest::reject);
        this.harness.endpoint.queueNoEvent().queueProviderError(Errno.EAGAIN).queueNoEvent();
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().errors()).isEmpty();
        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isEqualTo(1);
        assertThat(request.consumedOnThread()).isEqualTo("rpma-acceptor-default");
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
        assertThat(unannounced.consumedOnThread()).isEqualTo("rpma-acceptor-default");
    }

    @Test
    void aRequestWhoseReadinessWasSwallowedIsFoundWhileConnectionEventsKeepTheLoopBusy() throws InterruptedException {
        this.harness.start(RpmaIncomingRequest::connect);
        FakeRequest first = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("ESTABLISHED", () -> this.harness.events.contains("ESTABLISHED"));
        FakeConnection connection = this.harness.fake.lastConnection();
        // two poll intervals: the hand-backs of the connect are done, and the loop waits with nothing to do
        Thread.sleep(100);
        FakeRequest unannounced = this.harness.endpoint.queueRequestWithoutReadiness(HELLO_SERVER);
        // an event every millisecond: every wait of the loop (poll interval 50 ms) ends with a readable fd
        long until = System.nanoTime() + ServerHarness.WAIT.toNanos();
        while (unannounced.state() != FakeRequest.State.CONNECTED && System.nanoTime() - until < 0) {
            connection.queueEvent(RpmaConnectionEvent.ESTABLISHED);
            Thread.sleep(1);
        }

        assertThat(first.state()).isEqualTo(FakeRequest.State.CONNECTED);
        assertThat(unannounced.state()).isEqualTo(FakeRequest.State.CONNECTED);
    }

    @Test
    void loneRequestsAndABurstAreTakenWithoutLooksThatFindNothing() {
        // every empty look is a failed read that librpma logs at ERROR, through the log callback
        long start = System.nanoTime();
        this.harness.start(RpmaIncomingRequest::reject);
        for (int i = 0; i < 20; i++) {
            FakeRequest lone = this.harness.endpoint.queueRequest(HELLO_SERVER);
            this.harness.await("the reject", () -> lone.state() == FakeRequest.State.DELETED);
        }
        List<FakeRequest> burst = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            burst.add(this.harness.endpoint.queueRequest(HELLO_SERVER));
        }
        this.harness.await("the burst's rejects",
                () -> burst.stream().allMatch((request) -> request.state() == FakeRequest.State.DELETED));
        long pollIntervals = Duration.ofNanos(System.nanoTime() - start).toMillis() / 50;

        long emptyLooks = this.harness.fake.callLog("rpma_ep_next_conn_req").stream()
            .filter((call) -> call.returnCode() == RpmaError.PROVIDER.code() && call.errno() == Errno.EAGAIN)
            .count();
        // one unprompted look per poll interval (50 ms), and at most one at the end of each round of the burst
        assertThat(emptyLooks).isLessThanOrEqualTo(pollIntervals + 1 + 100 / 64 + 1);
        assertThat(this.harness.statistics().rejectedTotal()).isEqualTo(120);
    }

    @Test
    void noRequestIsTakenWhileAHandlerThreadAcceptsAnother() throws InterruptedException {
        // the fake flags an rpma_ep_next_conn_req that overlaps an accept of a request from the endpoint
        this.harness.fake.notThreadSafeDwell(Duration.ofMillis(2));
        this.harness.start(RpmaIncomingRequest::connect);
        List<FakeRequest> requests = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            requests.add(this.harness.endpoint.queueRequest(HELLO_SERVER));
            Thread.sleep(1);
        }
        // counted once rpma_conn_req_connect returned, just after the fake marked the request connected
        this.harness.await("every connect counted", () -> this.harness.statistics().accepted() == 30);

        assertThat(requests).allMatch((r) -> r.state() == FakeRequest.State.CONNECTED);
        assertThat(this.harness.fake.violations()).isEmpty();
        assertThat(this.harness.fake.threadsCalling("rpma_conn_req_connect")).doesNotContain("rpma-acceptor-default");
    }

    @Test
    void anEventThatIsNotARequestIsCountedAndTheLoopGoesOn() {
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.endpoint.queueUnexpectedEvent();
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);

        assertThat(this.harness.statistics().errors("rpma_ep_next_conn_req", "RPMA_E_INVAL")).isEqualTo(1);
        assertThat(this.harness.statistics().lastErrors()).singleElement()
                .satisfies((error) -> assertThat(error.code()).isEqualTo("RPMA_E_INVAL"));
        assertThat(this.harness.endpointServer().state()).isEqualTo(RpmaEndpointState.RUNNING);
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
        assertThat(this.harness.endpointServer().state()).isEqualTo(RpmaEndpointState.RUNNING);
        assertThat(this.harness.endpointServer().failure()).isNull();
    }

    @Test
    void anErrorThatLeavesTheEndpointUnusableStopsItVisibly() throws InterruptedException {
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.endpoint.queueProviderError(Errno.EBADF);

        assertThat(this.harness.endpointServer().awaitTermination(ServerHarness.WAIT)).isTrue();
        assertThat(this.harness.endpointServer().state()).isEqualTo(RpmaEndpointState.FAILED);
        assertThat(this.harness.endpointServer().failure()).isInstanceOfSatisfying(RpmaAcceptorException.class,
                (failure) -> {
                    assertThat(failure.rpmaCause().error()).isEqualTo(RpmaError.PROVIDER);
                    assertThat(failure.rpmaCause().errno()).isEqualTo(Errno.EBADF);
                    assertThat(failure.getMessage()).contains("rpma_ep_next_conn_req");
                });
        assertThat(this.harness.endpoint.isShutDown()).isTrue();
    }

    @Test
    void tooManyTransientErrorsInARowStopTheEndpoint() throws InterruptedException {
        this.harness.maxConsecutiveErrors = 2;
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.endpoint.queueOutOfMemory().queueOutOfMemory().queueOutOfMemory();

        assertThat(this.harness.endpointServer().awaitTermination(ServerHarness.WAIT)).isTrue();
        assertThat(this.harness.endpointServer().state()).isEqualTo(RpmaEndpointState.FAILED);
        assertThat(this.harness.statistics().errors("rpma_ep_next_conn_req", "RPMA_E_NOMEM")).isEqualTo(3);
    }

    @Test
    void aFullQueueRejectsAtOnce() {
        this.harness.handlerThreads = 1;
        this.harness.queueCapacity = 1;
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
        FakeRequest overflow = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the overflow's reject", () -> overflow.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().rejected(RejectReason.QUEUE_FULL)).isEqualTo(1);
        assertThat(this.harness.endpointServer().queueSize()).isEqualTo(1);
        assertThat(queued.state()).isEqualTo(FakeRequest.State.PENDING);
        release.countDown();
        this.harness.await("both rejected", () -> first.state() == FakeRequest.State.DELETED
                && queued.state() == FakeRequest.State.DELETED);
        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isEqualTo(2);
        assertThat(overflow.consumedOnThread()).isEqualTo("rpma-acceptor-default");
    }

    @Test
    void aHandlerThatThrowsGetsItsRequestRejected() {
        this.harness.start((request) -> {
            throw new IllegalStateException("boom");
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);

        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER_FAILED)).isEqualTo(1);
        assertThat(request.consumedOnThread()).isEqualTo("rpma-acceptor-default");
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
    void aHandlerPastItsDeadlineLosesTheRequest() {
        this.harness.requestDeadline = Duration.ofMillis(100);
        AtomicReference<Throwable> late = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        this.harness.start((request) -> {
            try {
                FakeRequestWait.until(() -> request.isDecided());
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
        assertThat(request.consumedOnThread()).isEqualTo("rpma-acceptor-default");
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
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        this.harness.start((request) -> {
            try {
                request.connect();
            }
            catch (RuntimeException ex) {
                thrown.set(ex);
                throw ex;
            }
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER)
                .failConnect(RpmaError.PROVIDER.code(), Errno.ECONNRESET);
        this.harness.await("the failed connect", () -> request.state() == FakeRequest.State.CONNECT_FAILED);
        this.harness.await("the handler", () -> thrown.get() != null);

        assertThat(this.harness.statistics().failedToConnect()).isEqualTo(1);
        assertThat(this.harness.statistics().errors("rpma_conn_req_connect", "RPMA_E_PROVIDER")).isEqualTo(1);
    }

    @Test
    void aClosedConnectionIsDisconnectedAndDeletedOnTheAcceptorThread() {
        this.harness.start(RpmaIncomingRequest::connect);
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the connect", () -> request.connection() != null);
        FakeConnection connection = request.connection();
        this.harness.await("ESTABLISHED", () -> this.harness.events.contains("ESTABLISHED"));
        connection.queueEvent(RpmaConnectionEvent.CLOSED).queueEvent(RpmaConnectionEvent.CLOSED);
        this.harness.await("the delete", connection::isDeleted);

        assertThat(connection.disconnects()).isEqualTo(1);
        assertThat(connection.deletedOnThread()).isEqualTo("rpma-acceptor-default");
        assertThat(this.harness.events).containsExactly("ESTABLISHED", "CLOSED");
        assertThat(this.harness.statistics().events(RpmaConnectionEvent.CLOSED)).isEqualTo(1);
        // the fake marks the connection deleted inside rpma_conn_delete, before the acceptor counts it
        this.harness.await("the delete counted", () -> this.harness.statistics().activeConnections() == 0);
    }

    @Test
    void aLostConnectionIsCleanedUp() {
        this.harness.start(RpmaIncomingRequest::connect);
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER)
                .thenEvents(RpmaConnectionEvent.LOST);
        this.harness.await("the delete", () -> request.connection() != null && request.connection().isDeleted());

        assertThat(this.harness.statistics().events(RpmaConnectionEvent.LOST)).isEqualTo(1);
        assertThat(this.harness.events).containsExactly("ESTABLISHED", "LOST");
    }

    @Test
    void aConnectionIsDeletedOnlyAfterItsHandlerReturned() throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<RpmaServerConnection> seen = new AtomicReference<>();
        this.harness.start((request) -> {
            RpmaServerConnection connection = request.connect();
            seen.set(connection);
            connection.awaitClosed(ServerHarness.WAIT);
            release.await();
            // still usable: the handler owns it until it returns
            connection.connection().qpNumber();
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER)
                .thenEvents(RpmaConnectionEvent.CLOSED);
        this.harness.await("CLOSED seen", () -> seen.get() != null && seen.get().isClosed());
        FakeConnection connection = request.connection();
        this.harness.await("the disconnect", () -> connection.disconnects() == 1);
        Thread.sleep(100);
        assertThat(connection.isDeleted()).isFalse();

        release.countDown();
        this.harness.await("the delete", connection::isDeleted);
        assertThat(connection.deletedOnThread()).isEqualTo("rpma-acceptor-default");
    }

    @Test
    void pausedEndpointsRejectAndCount() {
        this.harness.start(RpmaIncomingRequest::connect);
        this.harness.endpointServer().pause();
        assertThat(this.harness.endpointServer().state()).isEqualTo(RpmaEndpointState.PAUSED);
        FakeRequest request = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
        this.harness.endpointServer().resume();
        FakeRequest next = this.harness.endpoint.queueRequest(HELLO_SERVER);
        this.harness.await("the connect", () -> next.state() == FakeRequest.State.CONNECTED);

        assertThat(this.harness.statistics().rejected(RejectReason.PAUSED)).isEqualTo(1);
    }

    @Test
    void shutdownRejectsQueuedRequestsAndClosesOpenConnections() throws InterruptedException {
        this.harness.handlerThreads = 1;
        this.harness.queueCapacity = 4;
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
        FakeRequest open = this.harness.endpoint.queueRequest("open".getBytes(StandardCharsets.US_ASCII));
        this.harness.await("the open connection", () -> open.state() == FakeRequest.State.CONNECTED);
        this.harness.await("ESTABLISHED", () -> this.harness.events.contains("ESTABLISHED"));
        FakeRequest blocking = this.harness.endpoint.queueRequest("block".getBytes(StandardCharsets.US_ASCII));
        this.harness.await("the busy handler", () -> busy.getCount() == 0);
        FakeRequest queued1 = this.harness.endpoint.queueRequest("q1".getBytes(StandardCharsets.US_ASCII));
        FakeRequest queued2 = this.harness.endpoint.queueRequest("q2".getBytes(StandardCharsets.US_ASCII));
        this.harness.await("both queued", () -> this.harness.endpointServer().queueSize() == 2);

        CountDownLatch stopped = new CountDownLatch(1);
        this.harness.server.stop(stopped::countDown);
        assertThat(stopped.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(queued1.state()).isEqualTo(FakeRequest.State.DELETED);
        assertThat(queued2.state()).isEqualTo(FakeRequest.State.DELETED);
        assertThat(this.harness.statistics().rejected(RejectReason.SHUTDOWN)).isEqualTo(3);
        assertThat(blocking.state()).isEqualTo(FakeRequest.State.DELETED);
        assertThat(interrupted.get()).isNotNull();
        assertThat(open.connection().disconnects()).isEqualTo(1);
        assertThat(open.connection().isDeleted()).isTrue();
        assertThat(this.harness.endpointServer().state()).isEqualTo(RpmaEndpointState.STOPPED);
        assertThat(this.harness.fake.liveHandles()).isEmpty();
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

        assertThat(request.consumedOnThread()).isEqualTo("rpma-acceptor-default");
        assertThat(this.harness.statistics().rejected(RejectReason.HANDLER)).isEqualTo(1);
    }

    @Test
    void theAcceptorThreadKeepsTheJvmAlive() {
        this.harness.start(RpmaIncomingRequest::connect);
        assertThat(this.harness.acceptorThread().isDaemon()).isFalse();
        assertThat(this.harness.acceptorThread().getName()).isEqualTo("rpma-acceptor-default");
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
        assertThatThrownBy(() -> {
            throw thrown.get();
        }).hasMessageContaining("196");
    }

    /** Spins until a condition holds, for handlers waiting on the acceptor. */
    static final class FakeRequestWait {

        static void until(java.util.function.BooleanSupplier condition) throws InterruptedException {
            long end = System.nanoTime() + ServerHarness.WAIT.toNanos();
            while (!condition.getAsBoolean() && System.nanoTime() < end) {
                Thread.sleep(5);
            }
        }
    }
}

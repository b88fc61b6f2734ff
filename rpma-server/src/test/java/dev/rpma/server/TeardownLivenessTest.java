package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import ch.qos.logback.classic.Level;

import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.binding.testing.FakeStall;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * Liveness while things end: nothing a connection's teardown waits for can stall an event loop or
 * keep a stop from ending. A closed connection still held by application code costs its loop nothing;
 * a thread blocked in a native call on a connection does not hold up its loop when the connection is
 * deleted; a connect decided on another thread leaks nothing; and a stop gives up on a thread stuck
 * in a native call after its deadline, so that the JVM can exit.
 */
@Timeout(120)
class TeardownLivenessTest {

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void close() {
        this.harness.close();
    }

    @Test
    void aClosedConnectionHeldByItsMessageHandlerCostsItsLoopNoTurns() throws Exception {
        this.harness.messages = this.harness.messages.withDispatch(RpmaMessageDispatch.POOL, 1);
        CountDownLatch handling = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        this.harness.startRaw((message, session) -> {
            handling.countDown();
            release.await();
            return null;
        });
        FakeConnection client = this.harness.connectOne();
        client.deliver(ServerHarness.u64(1));
        assertThat(handling.await(10, TimeUnit.SECONDS)).isTrue();
        // librpma delivers CLOSED twice; the handler still holds the session
        client.queueEvent(RpmaConnectionEvent.CLOSED).queueEvent(RpmaConnectionEvent.CLOSED);
        this.harness.await("the first CLOSED read",
                () -> this.harness.statistics().events(RpmaConnectionEvent.CLOSED) == 1);

        RpmaEventLoop loop = this.harness.server.eventLoops().get(0);
        long before = loop.wakeups();
        // a window, not a timing assertion: an idle loop turns a few times in it, a spinning one thousands
        Thread.sleep(200);
        long turns = loop.wakeups() - before;
        assertThat(turns).as("turns of the loop while the closed connection is held").isLessThan(20);

        release.countDown();
        this.harness.await("the delete", client::isDeleted);
        this.harness.await("the end heard", () -> this.harness.ended.size() == 1);
        assertThat(this.harness.statistics().activeConnections()).isZero();
        this.harness.closeAndAssertNothingLeaked();
    }

    @Test
    void deletingAConnectionDoesNotWaitOnTheLoopForAnotherThreadsNativeCall() throws Exception {
        this.harness.start((request) -> {
            if (request.privateData()[0] == 2) {
                request.reject();
            }
            else {
                request.connect();
            }
        });
        FakeConnection client = this.harness.connectOne();
        RpmaConnection connection = ServerHarness.connectionOf(this.harness.established.get(0));
        FakeStall stall = this.harness.fake.stallNext("rpma_cq_wait");
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> connection.completionQueue().await());
        assertThat(stall.awaitEntered(ServerHarness.WAIT)).isTrue();

        client.peerDisconnects();
        this.harness.await("the disconnect", () -> client.disconnects() == 1);
        // the loop goes on: another client is connected and established on it, another request decided
        FakeConnection next = this.harness.connectOne();
        FakeRequest rejected = this.harness.endpoint.queueRequest(new byte[] { 2 });
        this.harness.await("the next request rejected", () -> rejected.state() == FakeRequest.State.DELETED);
        assertThat(client.isDeleted()).as("deleted only once the call in flight returned").isFalse();
        assertThat(stall.isReleased()).isFalse();

        // a completion wakes the waiting thread, as the disconnect's flushed receives would
        client.completionQueue().queueSuccess(1, FakeConnection.FLUSHED_OPCODE, 0);
        stall.release();
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
        this.harness.await("the delete", client::isDeleted);
        assertThat(client.deletedOnThread()).isEqualTo("rpma-loop-0");
        next.peerDisconnects();
        this.harness.await("both ended", () -> this.harness.ended.size() == 2);
        assertThat(this.harness.statistics().activeConnections()).isZero();
        this.harness.closeAndAssertNothingLeaked();
    }

    @Test
    void aConnectDecidedOnAnotherThreadWhileItsHandlerReturnsLeaksNothing() throws Exception {
        // longer than the stop is waited for below, short enough for a failing test to end
        this.harness.gracePeriod = Duration.ofSeconds(30);
        this.harness.start((request) -> {
            Thread connector = new Thread(request::connect, "connector");
            connector.start();
            // returns while the connect is carried out on the acceptor
            while (!request.isDecided()) {
                Thread.onSpinWait();
            }
        });
        FakeConnection client = this.harness.connectOne();
        assertThat(this.harness.statistics().activeConnections()).isOne();
        assertThat(this.harness.served().registry().reserved()).isOne();

        client.peerDisconnects();
        this.harness.await("the delete", client::isDeleted);
        this.harness.await("no place taken", () -> this.harness.served().registry().reserved() == 0);
        assertThat(this.harness.statistics().activeConnections()).isZero();
        // nothing holds the stop in its grace period
        CountDownLatch stopped = new CountDownLatch(1);
        this.harness.server.stop(stopped::countDown);
        assertThat(stopped.await(10, TimeUnit.SECONDS)).isTrue();
        this.harness.closeAndAssertNothingLeaked();
    }

    @Test
    void aStopEndsAtItsDeadlineWhenTheAcceptorIsStuckInANativeCallAndLetsTheJvmExit() throws Exception {
        this.harness.shutdownTimeout = Duration.ofMillis(500);
        this.harness.start(RpmaIncomingRequest::connect);
        FakeConnection open = this.harness.connectOne();
        FakeStall stall = this.harness.fake.stallNext("rpma_ep_next_conn_req");
        this.harness.endpoint.queueRequest(new byte[] { 2 });
        assertThat(stall.awaitEntered(ServerHarness.WAIT)).isTrue();
        Thread keepAlive = Thread.getAllStackTraces().keySet().stream()
            .filter((thread) -> thread.getName().equals("rpma-server")).findFirst().orElseThrow();

        CountDownLatch stopped = new CountDownLatch(1);
        this.harness.server.stop(stopped::countDown);
        // the grace period and the shutdown timeout (0.5 s), not for ever
        assertThat(stopped.await(10, TimeUnit.SECONDS)).as("the stop ended").isTrue();
        this.harness.await("the keep-alive thread ends", () -> !keepAlive.isAlive());
        assertThat(open.isDeleted()).as("the session on its free loop was ended").isTrue();
        assertThat(this.harness.ended).extracting(RpmaSessionEnd::reason)
            .containsExactly(RpmaSessionEnd.Reason.SHUTDOWN);
        assertThat(this.harness.endpoint.isShutDown()).as("left to the process's exit").isFalse();
        assertThat(this.harness.fake.liveHandles(FakeLibRpma.Kind.PEER)).as("held by the endpoint").hasSize(1);
        this.harness.fake.assertNoViolations();
        // what the stop left behind ends now, so no thread of this test outlives it (HandlerPoolTest counts them)
        stall.release();
        this.harness.await("the left-behind handler threads end", () -> Thread.getAllStackTraces()
            .keySet()
            .stream()
            .noneMatch((thread) -> thread.getName().startsWith("rpma-default-handler-")));
    }

    @Test
    void aStopEndsAtItsDeadlineWhileAThreadStaysBlockedInANativeWaitOnASessionAndSaysWhatItLeaves() throws Exception {
        this.harness.shutdownTimeout = Duration.ofMillis(500);
        this.harness.start(RpmaIncomingRequest::connect);
        FakeConnection held = this.harness.connectOne();
        FakeConnection free = this.harness.connectOne();
        RpmaConnection connection = ServerHarness.connectionOf(this.harness.established.get(0));
        FakeStall stall = this.harness.fake.stallNext("rpma_cq_wait");
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> connection.completionQueue().await());
        assertThat(stall.awaitEntered(ServerHarness.WAIT)).isTrue();

        try (CapturedLog log = new CapturedLog(Level.INFO)) {
            CountDownLatch stopped = new CountDownLatch(1);
            this.harness.server.stop(stopped::countDown);
            // never released during the stop: the grace period and the shutdown timeout bound it, not the wait
            assertThat(stopped.await(10, TimeUnit.SECONDS)).as("the stop ended").isTrue();
            assertThat(this.harness.served().state()).isEqualTo(RpmaEndpointState.STOPPED);
            assertThat(free.isDeleted()).as("the session nobody holds was deleted").isTrue();
            assertThat(held.isDeleted()).as("deleted only once the call in flight returns").isFalse();
            assertThat(log.messages(Level.ERROR)).singleElement(InstanceOfAssertFactories.STRING)
                .contains("1 session(s) were not deleted within the shutdown timeout PT0.5S")
                .contains("left to the process's exit");
        }
        assertThat(stall.isReleased()).isFalse();
        this.harness.fake.assertNoViolations();
        // what the stop left behind ends now, so no thread of this test outlives it
        held.completionQueue().queueSuccess(1, FakeConnection.FLUSHED_OPCODE, 0);
        stall.release();
        assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aStaleReadinessOfAConnectionsEventFdFindsNothingWithoutBlockingTheLoop() throws Exception {
        this.harness.start(RpmaIncomingRequest::connect);
        FakeConnection stale = this.harness.connectOne();
        stale.staleEventReadiness();
        this.harness.await("the stale readiness taken", () -> this.harness.fake.calls("rpma_conn_next_event") > 0);
        // the loop goes on: another client is connected and established on it, the first still open
        FakeConnection next = this.harness.connectOne();
        assertThat(stale.isDeleted()).isFalse();
        this.harness.fake.assertNoViolations();
        stale.peerDisconnects();
        next.peerDisconnects();
        this.harness.await("both ended", () -> this.harness.ended.size() == 2);
        this.harness.closeAndAssertNothingLeaked();
    }

    @Test
    void aSessionTheAcceptorConnectsAfterTheGracePeriodEndedIsEndedToo() throws Exception {
        this.harness.gracePeriod = Duration.ZERO;
        CountDownLatch deciding = new CountDownLatch(1);
        CountDownLatch decide = new CountDownLatch(1);
        this.harness.start((request) -> {
            deciding.countDown();
            decide.await();
            request.connect();
        });
        FakeRequest late = this.harness.endpoint.queueRequest(new byte[] { 1 });
        assertThat(deciding.await(10, TimeUnit.SECONDS)).isTrue();
        // the acceptor is held in a native call on its way to carrying the decision out
        FakeStall stall = this.harness.fake.stallNext("rpma_conn_req_connect");
        decide.countDown();
        assertThat(stall.awaitEntered(ServerHarness.WAIT)).isTrue();

        CountDownLatch stopped = new CountDownLatch(1);
        this.harness.server.stop(stopped::countDown);
        this.harness.await("the registry ends what comes", () -> this.harness.served().registry().isEnding());
        stall.release();
        assertThat(stopped.await(10, TimeUnit.SECONDS)).as("the stop ended").isTrue();
        assertThat(late.state()).isEqualTo(FakeRequest.State.CONNECTED);
        assertThat(late.connection().isDeleted()).isTrue();
        assertThat(this.harness.ended).extracting(RpmaSessionEnd::reason)
            .containsExactly(RpmaSessionEnd.Reason.SHUTDOWN);
        this.harness.closeAndAssertNothingLeaked();
    }
}

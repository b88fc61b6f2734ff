package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;

/**
 * Close racing with calls in flight: threads hammer an object while another closes it, a few
 * hundred times. No call may reach librpma with a freed handle (the fake records that as a
 * violation), every object is freed exactly once, and a losing call fails only with
 * {@link IllegalStateException}.
 */
@Timeout(60)
class CloseRaceTest {

    private static final int ROUNDS = 300;

    private static final int THREADS = 3;

    private final ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);

    private final Queue<Throwable> unexpected = new ConcurrentLinkedQueue<>();

    private final AtomicLong succeeded = new AtomicLong();

    private final AtomicInteger refused = new AtomicInteger();

    @AfterEach
    void stop() throws InterruptedException {
        this.pool.shutdownNow();
        assertThat(this.pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void connectionClosedWhileThreadsUseIt() throws Exception {
        connectionClosedWhileThreadsUseIt(false);
    }

    /** The owner that does not wait tries again until the calls in flight returned; a waiting close races it. */
    @Test
    void connectionClosedIfIdleWhileThreadsUseIt() throws Exception {
        connectionClosedWhileThreadsUseIt(true);
    }

    private void connectionClosedWhileThreadsUseIt(boolean ifIdle) throws Exception {
        try (FakeRig rig = new FakeRig()) {
            rig.fake.callLogLimit(1_000);
            RpmaMemoryRegion region = rig.region(64, MemoryUsage.SEND, MemoryUsage.RECV);
            RpmaCompletions[] batches = new RpmaCompletions[THREADS];
            for (int t = 0; t < THREADS; t++) {
                batches[t] = new RpmaCompletions(4);
            }
            for (int round = 0; round < ROUNDS; round++) {
                RpmaConnection connection = rig.request(new byte[] { 1 }).connect();
                Runnable closeIfIdle = () -> {
                    while (!connection.closeIfIdle()) {
                        Thread.onSpinWait();
                    }
                };
                race(() -> {
                    RpmaCompletions batch = batches[Integer.parseInt(Thread.currentThread().getName().substring(7))];
                    return () -> {
                        connection.qpNumber();
                        connection.send(region, 0, 8, CompletionMode.ALWAYS, 1);
                        connection.receive(region, 8, 8, 2);
                        connection.completionQueue().poll(batch);
                        connection.nextEvent();
                    };
                }, ifIdle ? closeIfIdle : connection::close, (ifIdle && round % 2 == 0) ? connection::close : null);
                assertThat(connection.isClosed()).isTrue();
            }

            rig.fake.assertNoViolations();
            assertThat(rig.fake.calls("rpma_conn_delete")).isEqualTo(ROUNDS);
            assertThat(rig.fake.connections()).hasSize(ROUNDS).allMatch(FakeConnection::isDeleted);
            assertThat(rig.fake.liveHandles(FakeLibRpma.Kind.CONN)).isEmpty();
            assertThat(rig.peer.openChildren()).as("only the endpoint and the region").isEqualTo(2);
        }
        assertResults();
    }

    @Test
    void requestConsumedWhileThreadsPostReceivesOnIt() throws Exception {
        try (FakeRig rig = new FakeRig()) {
            rig.fake.callLogLimit(1_000);
            RpmaMemoryRegion region = rig.region(64, MemoryUsage.RECV);
            for (int round = 0; round < ROUNDS; round++) {
                RpmaConnectionRequest request = rig.request(new byte[] { 1 });
                boolean accept = (round % 2) == 0;
                RpmaConnection[] connection = new RpmaConnection[1];
                // reject must run on the endpoint's owner: this thread; connect may run anywhere
                race(() -> () -> request.receive(region, 0, 8, 3), () -> {
                    if (accept) {
                        connection[0] = request.connect();
                    }
                }, accept ? null : request::reject);
                if (connection[0] != null) {
                    connection[0].close();
                }
                assertThat(request.isPending()).isFalse();
            }
            rig.fake.assertNoViolations();
            assertThat(rig.fake.calls("rpma_conn_req_connect") + rig.fake.calls("rpma_conn_req_delete")).isEqualTo(ROUNDS);
            assertThat(rig.fake.liveHandles(FakeLibRpma.Kind.CONN_REQ)).isEmpty();
        }
        assertResults();
    }

    @Test
    void configurationClosedWhileThreadsReadIt() throws Exception {
        try (FakeRig rig = new FakeRig()) {
            rig.fake.callLogLimit(1_000);
            for (int round = 0; round < ROUNDS; round++) {
                RpmaConnectionConfig config = rig.rpma.newConnectionConfig();
                race(() -> () -> {
                    config.cqSize(12);
                    assertThat(config.sqSize()).isEqualTo(10);
                    config.sharedCompletionChannel();
                }, config::close);
            }
            rig.fake.assertNoViolations();
            assertThat(rig.fake.calls("rpma_conn_cfg_delete")).isEqualTo(ROUNDS);
        }
        assertResults();
    }

    /**
     * Starts {@link #THREADS} workers that repeat the call {@code work} makes until it throws, and a
     * closer that runs {@code close} after a random short delay; then runs {@code onThisThread} (if
     * any) here, and waits for all.
     */
    private void race(java.util.function.Supplier<Runnable> work, Runnable close, Runnable onThisThread)
            throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(THREADS + 1);
        for (int t = 0; t < THREADS; t++) {
            int index = t;
            this.pool.execute(() -> {
                Thread.currentThread().setName("worker-" + index);
                Runnable call = work.get();
                try {
                    start.await();
                    for (;;) {
                        try {
                            call.run();
                            this.succeeded.incrementAndGet();
                        }
                        catch (RpmaException full) {
                            // a full send or receive queue, as on a device: the worker goes on racing
                            if (full.errno() != Errno.ENOMEM) {
                                throw full;
                            }
                        }
                    }
                }
                catch (IllegalStateException expected) {
                    this.refused.incrementAndGet();
                }
                catch (Throwable ex) {
                    this.unexpected.add(ex);
                }
                finally {
                    done.countDown();
                }
            });
        }
        this.pool.execute(() -> {
            Thread.currentThread().setName("closer");
            try {
                start.await();
                int spins = ThreadLocalRandom.current().nextInt(2_000);
                for (int i = 0; i < spins; i++) {
                    Thread.onSpinWait();
                }
                close.run();
            }
            catch (Throwable ex) {
                this.unexpected.add(ex);
            }
            finally {
                done.countDown();
            }
        });
        start.countDown();
        if (onThisThread != null) {
            onThisThread.run();
        }
        assertThat(done.await(20, TimeUnit.SECONDS)).as("race finished").isTrue();
    }

    private void race(java.util.function.Supplier<Runnable> work, Runnable close) throws Exception {
        race(work, close, null);
    }

    private void assertResults() {
        assertThat(this.unexpected).as("only IllegalStateException may stop a worker").isEmpty();
        assertThat(this.refused.get()).as("every worker eventually hit the closed object").isEqualTo(ROUNDS * THREADS);
        assertThat(this.succeeded.get()).as("calls got in before close, so the race was real").isPositive();
    }
}

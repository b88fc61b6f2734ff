package dev.rpma.server.loop;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;

/**
 * The hand-off of stack traces from event loops: written by the one daemon log thread, never by the
 * loop; a loop never waits for it, and what does not fit its bounded queue is dropped, counted, and
 * reported; other threads write their own.
 */
@Timeout(60)
class RpmaLogThreadTest {

    private final RpmaEventLoop loop = new RpmaEventLoop("rpma-loop-under-test", Duration.ZERO);

    private final Logger logger = (Logger) LoggerFactory.getLogger(RpmaLogThread.class);

    private final Logger loopLogger = (Logger) LoggerFactory.getLogger(RpmaEventLoop.class);

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    RpmaLogThreadTest() {
        this.appender.start();
        this.logger.addAppender(this.appender);
        this.loopLogger.addAppender(this.appender);
        this.loop.start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        this.logger.detachAppender(this.appender);
        this.loopLogger.detachAppender(this.appender);
        this.loop.shutdown();
        assertThat(this.loop.awaitTermination(Duration.ofSeconds(10))).isTrue();
    }

    @Test
    void aFailingTaskCostsTheLoopOneLineAndTheLogThreadWritesItsTrace() throws Exception {
        this.loop.execute(() -> {
            throw new IllegalStateException("task broke");
        });
        await("the trace", () -> events().stream().anyMatch((event) -> event.getThreadName().equals(RpmaLogThread.NAME)));
        ILoggingEvent onLoop = events().stream().filter((event) -> event.getThreadName().equals(this.loop.name()))
            .findFirst()
            .orElseThrow();
        assertThat(onLoop.getLevel()).isEqualTo(Level.ERROR);
        assertThat(onLoop.getThrowableProxy()).as("no trace on the loop").isNull();
        assertThat(onLoop.getFormattedMessage()).isEqualTo("A task on event loop 'rpma-loop-under-test' failed:"
                + " java.lang.IllegalStateException: task broke [its stack trace follows, from thread 'rpma-log']");
        ILoggingEvent trace = events().stream().filter((event) -> event.getThreadName().equals(RpmaLogThread.NAME))
            .findFirst()
            .orElseThrow();
        assertThat(trace.getLevel()).isEqualTo(Level.ERROR);
        assertThat(trace.getThrowableProxy().getMessage()).isEqualTo("task broke");
        assertThat(trace.getThrowableProxy().getStackTraceElementProxyArray()).isNotEmpty();
    }

    @Test
    void theLoopNeverWaitsForTheLogThreadWhatDoesNotFitIsDroppedCountedAndReported() throws Exception {
        CountDownLatch writing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        onLoop(() -> RpmaLogThread.write(() -> {
            writing.countDown();
            awaitQuietly(release);
        }));
        assertThat(writing.await(10, TimeUnit.SECONDS)).isTrue();
        long droppedBefore = RpmaLogThread.dropped();
        AtomicInteger written = new AtomicInteger();
        long start = System.nanoTime();
        onLoop(() -> {
            for (int i = 0; i < RpmaLogThread.CAPACITY + 100; i++) {
                RpmaLogThread.write(written::incrementAndGet);
            }
        });
        assertThat(System.nanoTime() - start).as("the loop was not held").isLessThan(TimeUnit.SECONDS.toNanos(5));
        assertThat(RpmaLogThread.dropped() - droppedBefore).isEqualTo(100);
        assertThat(written).hasValue(0);
        release.countDown();
        await("the queued writes", () -> written.get() == RpmaLogThread.CAPACITY);
        onLoop(() -> RpmaLogThread.write(written::incrementAndGet));
        await("the write after the drops", () -> written.get() == RpmaLogThread.CAPACITY + 1);
        assertThat(events()).filteredOn((event) -> event.getThreadName().equals(RpmaLogThread.NAME))
            .extracting(ILoggingEvent::getFormattedMessage)
            .contains("100 stack trace(s) of event loops' log lines were dropped: the 'rpma-log' thread was 256 behind");
    }

    @Test
    void theLogThreadIsADaemonAndOtherThreadsWriteTheirOwn() throws Exception {
        CompletableFuture<Thread> writer = new CompletableFuture<>();
        onLoop(() -> RpmaLogThread.write(() -> writer.complete(Thread.currentThread())));
        Thread thread = writer.get(10, TimeUnit.SECONDS);
        assertThat(thread.getName()).isEqualTo(RpmaLogThread.NAME);
        assertThat(thread.isDaemon()).isTrue();
        List<Thread> here = new ArrayList<>();
        RpmaLogThread.write(() -> here.add(Thread.currentThread()));
        assertThat(here).containsExactly(Thread.currentThread());
        assertThat(RpmaLogThread.onEventLoop()).isFalse();
    }

    private List<ILoggingEvent> events() {
        synchronized (this.appender) {
            return new ArrayList<>(this.appender.list);
        }
    }

    private void onLoop(Runnable task) throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        this.loop.execute(() -> {
            task.run();
            done.complete(null);
        });
        done.get(10, TimeUnit.SECONDS);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waiting for %s", what).isNegative();
            Thread.sleep(5);
        }
    }
}

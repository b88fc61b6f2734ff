package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;

import dev.rpma.server.loop.LoopTasks;
import dev.rpma.server.loop.RpmaEventLoop;
import dev.rpma.server.loop.RpmaLogThread;

/**
 * The limiter on a clock the test moves: one line per kind and interval, a flood summarized by the
 * next line, kinds apart, causes escaped, and the stack trace once per kind (then at DEBUG only);
 * on an event loop, the trace written by the log thread, never by the loop.
 */
class RateLimitedLogTest {

    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    private final RateLimitedLog log = new RateLimitedLog(LoggerFactory.getLogger("dev.rpma.server.test"),
            this.now::get);

    private final CapturedLog captured = new CapturedLog(Level.INFO);

    @AfterEach
    void close() {
        this.captured.close();
    }

    @Test
    void aFloodIsOneLineAndTheNextOneSaysHowManyWereSuppressed() {
        for (int i = 0; i < 1000; i++) {
            this.log.warn("deadline", "request " + i + " missed its deadline");
            this.now.addAndGet(RateLimitedLog.INTERVAL / 500);
        }
        assertThat(this.captured.messages(Level.WARN)).containsExactly("request 0 missed its deadline",
                "request 500 missed its deadline [499 more suppressed since the last such line]");
        this.now.addAndGet(RateLimitedLog.INTERVAL);
        this.log.warn("deadline", "request 1000 missed its deadline");
        assertThat(this.captured.messages(Level.WARN)).last()
            .isEqualTo("request 1000 missed its deadline [499 more suppressed since the last such line]");
    }

    @Test
    void eachKindHasItsOwnInterval() {
        this.log.warn("deadline", "a deadline");
        this.log.warn("deadline", "another deadline");
        this.log.error("connection-handler", "a handler failed", new IllegalStateException("boom"));
        this.log.warn("bad-message", "a bad message");
        assertThat(this.captured.messages(Level.WARN)).containsExactly("a deadline", "a bad message");
        assertThat(this.captured.messages(Level.ERROR)).singleElement().asString()
            .startsWith("a handler failed: java.lang.IllegalStateException: boom");
    }

    @Test
    void theStackTraceComesOncePerKindAsTextAndThenOnlyAtDebug() {
        this.log.warn("message-handler", "handler failed", new IllegalStateException("first"));
        this.now.addAndGet(RateLimitedLog.INTERVAL);
        this.log.warn("message-handler", "handler failed", new IllegalStateException("second"));
        assertThat(this.captured.events()).allSatisfy((event) -> assertThat(event.getThrowableProxy()).isNull());
        assertThat(this.captured.messages(Level.WARN)).hasSize(2);
        assertThat(this.captured.messages(Level.WARN).get(0)).contains("first\n\tjava.lang.IllegalStateException:"
                + " first\n\t\tat dev.rpma.server.RateLimitedLogTest.");
        assertThat(this.captured.messages(Level.WARN).get(1)).isEqualTo("handler failed:"
                + " java.lang.IllegalStateException: second");
        assertThat(this.captured.messages(Level.DEBUG)).as("INFO and above only").isEmpty();
        try (CapturedLog debug = new CapturedLog(Level.DEBUG)) {
            this.now.addAndGet(RateLimitedLog.INTERVAL);
            this.log.warn("message-handler", "handler failed", new IllegalStateException("third"));
            assertThat(debug.messages(Level.DEBUG)).singleElement().asString().contains("\tjava.lang"
                    + ".IllegalStateException: third\n\t\tat ");
        }
    }

    @Test
    void aCausesMessageIsEscapedWhereverItAppears() {
        Exception cause = new IllegalArgumentException("bad greeting \"hi\r\nERROR forged line\u001b[2J\u0000\"",
                new IllegalStateException("caused by\nINFO another forged line"));
        this.log.error("connection-handler", "Connection handler hello failed", cause);
        assertThat(this.captured.lines()).noneMatch((line) -> line.startsWith("ERROR forged"))
            .noneMatch((line) -> line.startsWith("INFO another"))
            .noneMatch((line) -> line.contains("\u001b"));
        assertThat(this.captured.messages(Level.ERROR)).singleElement().asString()
            .startsWith("Connection handler hello failed: java.lang.IllegalArgumentException: bad greeting"
                    + " \"hi\\x0d\\x0aERROR forged line\\x1b[2J\\x00\"")
            .contains("\tCaused by: java.lang.IllegalStateException: caused by\\x0aINFO another forged line");
    }

    @Test
    void nothingIsCountedWhileTheLevelIsOff() {
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) LoggerFactory
            .getLogger("dev.rpma.server.test");
        logger.setLevel(Level.OFF);
        try {
            this.log.warn("deadline", "unseen");
        }
        finally {
            logger.setLevel(null);
        }
        this.log.warn("deadline", "seen");
        assertThat(this.captured.messages(Level.WARN)).containsExactly("seen");
    }

    @Test
    void onAnEventLoopTheLineHasNoStackTraceWhichTheLogThreadWritesAndAFloodStaysOneLine() throws Exception {
        RpmaEventLoop loop = new RpmaEventLoop("rpma-loop-under-test", Duration.ZERO);
        loop.start();
        try {
            LoopTasks.runOn(loop, () -> {
                for (int i = 0; i < 10_000; i++) {
                    this.log.warn("message-handler", "handler failed", new IllegalStateException("boom " + i));
                }
            });
            assertThat(this.captured.linesOf(loop.name())).noneMatch((line) -> line.contains("\tat "));
            await("the trace from the log thread", () -> !this.captured.messagesOf(RpmaLogThread.NAME, Level.WARN)
                .isEmpty());
            assertThat(this.captured.messagesOf(loop.name(), Level.WARN)).containsExactly("handler failed:"
                    + " java.lang.IllegalStateException: boom 0 [its stack trace follows, from thread 'rpma-log']");
            assertThat(this.captured.messagesOf(RpmaLogThread.NAME, Level.WARN)).singleElement().asString()
                .startsWith("handler failed\n\tjava.lang.IllegalStateException: boom 0\n\t\tat dev.rpma.server"
                        + ".RateLimitedLogTest.");
            assertThat(this.captured.linesOf(RpmaLogThread.NAME)).filteredOn((line) -> line.startsWith("\t\tat "))
                .hasSizeBetween(1, 32);
            assertThat(this.captured.events()).as("the flood: one line and its trace").hasSize(2)
                .allSatisfy((event) -> assertThat(event.getThrowableProxy()).isNull());
            try (CapturedLog debug = new CapturedLog(Level.DEBUG)) {
                this.now.addAndGet(RateLimitedLog.INTERVAL);
                LoopTasks.runOn(loop, () -> this.log.warn("message-handler", "handler failed",
                        new IllegalStateException("later")));
                await("the DEBUG trace", () -> !debug.messagesOf(RpmaLogThread.NAME, Level.DEBUG).isEmpty());
                assertThat(debug.linesOf(loop.name())).noneMatch((line) -> line.contains("\tat "))
                    .anySatisfy((line) -> assertThat(line).endsWith("handler failed: java.lang.IllegalStateException:"
                            + " later [9999 more suppressed since the last such line]"));
                assertThat(debug.messagesOf(RpmaLogThread.NAME, Level.DEBUG)).singleElement().asString()
                    .contains("\tjava.lang.IllegalStateException: later\n\t\tat ");
            }
        }
        finally {
            loop.shutdown();
            assertThat(loop.awaitTermination(Duration.ofSeconds(10))).isTrue();
        }
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waiting for %s", what).isNegative();
            Thread.sleep(5);
        }
    }
}

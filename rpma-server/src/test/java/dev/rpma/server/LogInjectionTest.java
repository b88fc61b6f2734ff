package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;

import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.server.loop.RpmaEventLoop;
import dev.rpma.server.loop.RpmaLogThread;

/**
 * A peer's bytes with newlines, carriage returns, escape sequences and every other control byte never
 * start a log line, nor put a control character into one: not through a handler that logs them with
 * {@link RpmaEscaping}, nor through the server's own lines when a connection handler or a message
 * handler fails with an exception that quotes them, nor when a handler says a message is out of
 * protocol, quoting it. Every line is looked at as a file appender writes it. A handler that fails on
 * an event loop costs the loop one line: its stack trace is written by the log thread.
 */
class LogInjectionTest {

    private static final Logger handlerLog = LoggerFactory.getLogger("dev.rpma.server.test.Handler");

    /** What a hostile client sends: a forged line after each kind of line break, an escape sequence, all controls. */
    private static final byte[] HOSTILE = hostile();

    private final ServerHarness harness = new ServerHarness();

    private final CapturedLog log = new CapturedLog();

    @AfterEach
    void close() {
        try {
            this.harness.closeAndAssertNothingLeaked();
        }
        finally {
            this.log.close();
        }
    }

    @Test
    void privateDataThroughAHandlersOwnLineAndTheServersFailureLine() {
        this.harness.start((request) -> {
            handlerLog.info("rejecting \"{}\"", RpmaEscaping.escape(request.privateData(), 128));
            throw new IllegalArgumentException("not a greeting: " + new String(request.privateData(),
                    StandardCharsets.ISO_8859_1));
        });
        FakeRequest request = this.harness.endpoint.queueRequest(HOSTILE);
        this.harness.await("the reject", () -> request.state() == FakeRequest.State.DELETED);
        this.harness.await("the failure logged",
                () -> this.log.lines().stream().anyMatch((line) -> line.contains("Connection handler")));
        assertNoForgedLine(this.log.lines());
        assertThat(this.log.lines()).anySatisfy((line) -> assertThat(line).contains("rejecting \"hello\\x0aFORGED"));
        assertThat(this.log.lines()).anySatisfy((line) -> assertThat(line).contains("Connection handler")
            .contains("failed on endpoint 'default'; the request was rejected: java.lang.IllegalArgumentException: not"
                    + " a greeting: hello\\x0aFORGED"));
    }

    @Test
    void messageBytesThroughAFailingHandlerAndAnOutOfProtocolOne() {
        this.harness.startRaw((message, session) -> {
            byte[] bytes = new byte[message.remaining()];
            message.get(bytes);
            if (bytes[0] == 'p') {
                throw new RpmaProtocolException("unexpected " + new String(bytes, StandardCharsets.ISO_8859_1));
            }
            throw new IllegalStateException("cannot handle " + new String(bytes, StandardCharsets.ISO_8859_1));
        });
        FakeConnection client = this.harness.connectOne();
        client.deliver(java.util.Arrays.copyOf(HOSTILE, 64));
        this.harness.await("the failure counted", () -> this.harness.statistics().handlerFailures() == 1);
        byte[] protocol = java.util.Arrays.copyOf(HOSTILE, 64);
        protocol[0] = 'p';
        client.deliver(protocol);
        this.harness.await("the session ended", () -> this.harness.ended.size() == 1);
        assertNoForgedLine(this.log.lines());
        assertThat(this.harness.ended.get(0).detail()).startsWith("out of protocol: unexpected pello\\x0aFORGED");
    }

    @Test
    void aMessageHandlerFailingOnTheEventLoopLeavesItsStackTraceToTheLogThread() throws Exception {
        CompletableFuture<Thread> handlerThread = new CompletableFuture<>();
        CompletableFuture<Boolean> onLoop = new CompletableFuture<>();
        this.harness.startRaw((message, session) -> {
            handlerThread.complete(Thread.currentThread());
            onLoop.complete(RpmaEventLoop.current() != null);
            throw new IllegalStateException("cannot handle it");
        });
        FakeConnection client = this.harness.connectOne();
        for (int i = 0; i < 50; i++) {
            client.deliver(new byte[] { 'x' });
        }
        this.harness.await("the failures counted", () -> this.harness.statistics().handlerFailures() == 50);
        String loop = handlerThread.getNow(null).getName();
        this.harness.await("the loop's line", () -> this.log.messagesOf(loop, Level.WARN)
            .stream()
            .anyMatch((line) -> line.startsWith("Message handler")));
        assertThat(this.log.linesOf(loop)).noneMatch((line) -> line.contains("\tat "));
        this.harness.await("the trace written", () -> this.log.events().stream()
            .anyMatch((event) -> event.getThreadName().equals(RpmaLogThread.NAME)));
        assertThat(onLoop.getNow(false)).as("a raw handler runs on its session's event loop").isTrue();
        assertThat(this.log.messagesOf(loop, Level.WARN)).filteredOn((line) -> line
            .startsWith("Message handler"))
            .first().asString()
            .contains("failed on session")
            .endsWith("of endpoint 'default': java.lang.IllegalStateException: cannot handle it [its stack trace"
                    + " follows, from thread 'rpma-log']");
        assertThat(this.log.linesOf(loop)).noneMatch((line) -> line.contains("\tat "));
        assertThat(this.log.messagesOf(RpmaLogThread.NAME, Level.WARN)).singleElement()
            .asString()
            .startsWith("Message handler")
            .contains("\n\tjava.lang.IllegalStateException: cannot handle it\n\t\tat ");
    }

    private static void assertNoForgedLine(List<String> lines) {
        assertThat(lines).isNotEmpty()
            .noneMatch((line) -> line.startsWith("FORGED"))
            .allSatisfy((line) -> assertThat(line.chars().filter((c) -> c < 0x20 && c != '\t' || c == 0x7f))
                .as("control characters in %s", line).isEmpty());
    }

    private static byte[] hostile() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.writeBytes("hello\nFORGED ERROR line one\rFORGED line two\r\nFORGED line three\u001b[2J".getBytes(
                StandardCharsets.ISO_8859_1));
        for (int b = 0; b < 0x20; b++) {
            bytes.write(b);
        }
        bytes.write(0x7f);
        bytes.writeBytes("\nFORGED last".getBytes(StandardCharsets.ISO_8859_1));
        return bytes.toByteArray();
    }
}

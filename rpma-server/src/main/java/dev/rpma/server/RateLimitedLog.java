package dev.rpma.server;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

import dev.rpma.server.loop.RpmaLogThread;

/**
 * WARN and ERROR lines that a flood could repeat (bad messages, failing handlers, requests past their
 * deadline), written at most once per {@link #INTERVAL} per kind: the endpoint's threads log through
 * one of these each, so that a client that misbehaves in a loop cannot flood the log or slow the
 * event loop that meets it. The next line of a kind after a flood says how many were suppressed
 * (the endpoint's counters have them all).
 *
 * <p>A cause is shown as its class and message, escaped ({@link RpmaEscaping}: an exception's message
 * may quote what a peer sent); its stack trace, escaped the same way, only with the first line of its
 * kind (afterwards at DEBUG), and as text, not as a throwable a layout would print raw. On an event
 * loop the line has the class and message only, and the trace is formatted and written by {@link
 * RpmaLogThread} as a line of its own at the same level, so that the loop never spends its
 * connections' time on frames and appenders (a trace it could not hand over is dropped and counted
 * there, never waited for). Elsewhere (connection-handler and dispatch threads) the trace is part of
 * the line. Thread-safe.
 */
final class RateLimitedLog {

    /** At most one line per kind in this many nanoseconds. */
    static final long INTERVAL = TimeUnit.SECONDS.toNanos(1);

    /** Frames of each throwable in a written stack trace, and causes followed. */
    private static final int FRAMES = 32;

    private static final int CAUSES = 4;

    /** Bytes of an exception's message a line shows: enough for a librpma failure with its hint. */
    private static final int MESSAGE_LIMIT = 1024;

    private enum Level {
        WARN, ERROR
    }

    private final Logger logger;

    private final LongSupplier nanoClock;

    private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

    RateLimitedLog(Logger logger) {
        this(logger, System::nanoTime);
    }

    /** @param nanoClock {@link System#nanoTime()}, or a test's clock */
    RateLimitedLog(Logger logger, LongSupplier nanoClock) {
        this.logger = logger;
        this.nanoClock = nanoClock;
    }

    /** One kind's interval: when its next line may be written, and what was suppressed since its last. */
    private static final class Window {

        final AtomicLong nextAllowed;

        final AtomicLong suppressed = new AtomicLong();

        final AtomicBoolean traced = new AtomicBoolean();

        Window(long now) {
            this.nextAllowed = new AtomicLong(now);
        }
    }

    void warn(String kind, String message) {
        log(Level.WARN, kind, message, null);
    }

    void warn(String kind, String message, @Nullable Throwable cause) {
        log(Level.WARN, kind, message, cause);
    }

    void error(String kind, String message, @Nullable Throwable cause) {
        log(Level.ERROR, kind, message, cause);
    }

    private void log(Level level, String kind, String message, @Nullable Throwable cause) {
        if (!((level == Level.ERROR) ? this.logger.isErrorEnabled() : this.logger.isWarnEnabled())) {
            return;
        }
        long now = this.nanoClock.getAsLong();
        Window window = this.windows.computeIfAbsent(kind, (k) -> new Window(now));
        long allowed = window.nextAllowed.get();
        if (now - allowed < 0 || !window.nextAllowed.compareAndSet(allowed, now + INTERVAL)) {
            window.suppressed.incrementAndGet();
            return;
        }
        StringBuilder line = new StringBuilder(message);
        if (cause != null) {
            line.append(": ").append(describe(cause));
        }
        long left = window.suppressed.getAndSet(0);
        if (left > 0) {
            line.append(" [").append(left).append(" more suppressed since the last such line]");
        }
        if (cause == null) {
            write(level, line.toString());
            return;
        }
        boolean trace = window.traced.compareAndSet(false, true);
        if (!RpmaLogThread.onEventLoop()) {
            if (trace) {
                appendTrace(line, cause);
            }
            write(level, line.toString());
            if (!trace && this.logger.isDebugEnabled()) {
                this.logger.debug(appendTrace(new StringBuilder(message), cause).toString());
            }
            return;
        }
        // an event loop writes the one line; the trace is formatted and written by the log thread
        if (trace) {
            line.append(" [its stack trace follows, from thread '").append(RpmaLogThread.NAME).append("']");
        }
        write(level, line.toString());
        if (trace) {
            RpmaLogThread.write(() -> write(level, appendTrace(new StringBuilder(message), cause).toString()));
        }
        else if (this.logger.isDebugEnabled()) {
            RpmaLogThread.write(() -> this.logger.debug(appendTrace(new StringBuilder(message), cause).toString()));
        }
    }

    private void write(Level level, String line) {
        if (level == Level.ERROR) {
            this.logger.error(line);
        }
        else {
            this.logger.warn(line);
        }
    }

    /** The class and the escaped message of a throwable: one line, whatever its message holds. */
    static String describe(Throwable cause) {
        return RpmaEscaping.describe(cause, MESSAGE_LIMIT);
    }

    /** The stack trace as a layout writes one, each line starting with a tab or "Caused by", messages escaped. */
    private static StringBuilder appendTrace(StringBuilder line, Throwable cause) {
        Throwable current = cause;
        for (int depth = 0; current != null && depth <= CAUSES; depth++) {
            line.append('\n').append((depth == 0) ? "\t" : "\tCaused by: ").append(describe(current));
            StackTraceElement[] frames = current.getStackTrace();
            for (int i = 0; i < Math.min(frames.length, FRAMES); i++) {
                line.append("\n\t\tat ").append(frames[i]);
            }
            if (frames.length > FRAMES) {
                line.append("\n\t\t... ").append(frames.length - FRAMES).append(" more");
            }
            current = (current.getCause() != current) ? current.getCause() : null;
        }
        return line;
    }
}

package dev.rpma.server;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;

/**
 * A WARN line that is written at most once per interval, with how many like it were left out
 * since: so that a flood of bad messages or failing handlers cannot flood the log or slow the event
 * loop that meets them. The line carries the exception's text, not its stack trace (that goes to
 * DEBUG), since writing a stack trace on an event loop holds up every session of that loop.
 */
final class RateLimitedLog {

    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Logger logger;

    private final AtomicLong nextAllowed = new AtomicLong(System.nanoTime());

    private final AtomicLong suppressed = new AtomicLong();

    RateLimitedLog(Logger logger) {
        this.logger = logger;
    }

    void warn(String message, Throwable cause) {
        if (!this.logger.isWarnEnabled()) {
            return;
        }
        long now = System.nanoTime();
        long allowed = this.nextAllowed.get();
        if (now - allowed < 0 || !this.nextAllowed.compareAndSet(allowed, now + INTERVAL_NANOS)) {
            this.suppressed.incrementAndGet();
            this.logger.debug(message, cause);
            return;
        }
        long left = this.suppressed.getAndSet(0);
        String text = (cause != null) ? message + ": " + cause : message;
        this.logger.warn((left > 0) ? text + " (and " + left + " more like it in the last interval)" : text);
        this.logger.debug(message, cause);
    }

    void warn(String message) {
        warn(message, null);
    }
}

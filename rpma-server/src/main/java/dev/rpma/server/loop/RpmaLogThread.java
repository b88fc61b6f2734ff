package dev.rpma.server.loop;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * Where an event loop's stack traces are written: a log call that would format or write one on an
 * {@link RpmaEventLoop} thread hands it to the one {@code rpma-log} thread here instead, and the loop
 * writes only a one-line summary (the exception's class and message). Any other thread writes its
 * stack traces itself, at once, as a Spring application's threads do.
 *
 * <p>Why not on the loop: a stack trace is the most expensive line there is (its frames are built and
 * formatted, and written through appenders that may block on a full disk or a slow console) while
 * every connection the loop serves waits; and it is what a failing handler or a misbehaving peer
 * makes the loop write over and over. (A loop that fails and stops writes its own last trace: it
 * serves nothing any more, and a trace handed over could be lost if the process exits.)
 *
 * <p>Why not only at DEBUG: the first failure of a kind in production must be diagnosable from the
 * log as it is configured, with its trace at its own level (WARN or ERROR), as Spring and Netty users
 * expect. The trace comes as a line of its own, from the {@code rpma-log} thread, shortly after the
 * loop's line, which says it follows.
 *
 * <p>The hand-off never holds the loop: the queue is bounded ({@value #CAPACITY} traces) and a trace
 * that does not fit is dropped and counted ({@link #dropped()}); the thread says how many it lost
 * with the next trace it writes. The thread is a daemon and ends after ten seconds without work, so
 * nothing is left running after a server or a client stops; the next hand-off starts it again, on
 * the loop, which costs one thread start after a quiet spell.
 *
 * <p>Public for the server's and rpma-client's loops; not meant for application code, which logs
 * as it likes from its own threads.
 */
public final class RpmaLogThread {

    /** Traces waiting for the thread, at most; more are dropped. */
    public static final int CAPACITY = 256;

    /** The thread's name. */
    public static final String NAME = "rpma-log";

    private static final long IDLE_SECONDS = 10;

    private static final Logger logger = LoggerFactory.getLogger(RpmaLogThread.class);

    private static final AtomicLong dropped = new AtomicLong();

    /** Dropped since the thread last said so. */
    private static final AtomicLong unreported = new AtomicLong();

    private static final ThreadPoolExecutor executor = executor();

    private RpmaLogThread() {
    }

    private static ThreadPoolExecutor executor() {
        // a LinkedBlockingQueue: the loops' offers and the thread's takes use separate locks, and an
        // offer to a full queue returns at once, which the rejection handler counts
        ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, IDLE_SECONDS, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(CAPACITY), (task) -> {
                    Thread thread = new Thread(task, NAME);
                    thread.setDaemon(true);
                    return thread;
                }, (task, pool) -> {
                    dropped.incrementAndGet();
                    unreported.incrementAndGet();
                });
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /** Whether the calling thread is an event loop's, which must not write a stack trace. */
    public static boolean onEventLoop() {
        return RpmaEventLoop.current() != null;
    }

    /**
     * Runs {@code write} (a log call that formats or writes a stack trace) on the {@code rpma-log}
     * thread when called on an event loop, without waiting (dropped when {@value #CAPACITY} wait
     * already); on any other thread, runs it now.
     */
    public static void write(Runnable write) {
        if (onEventLoop()) {
            executor.execute(() -> run(write));
        }
        else {
            write.run();
        }
    }

    /**
     * {@code logger.warn(line, cause)}, but on an event loop without the trace: the loop writes the
     * line alone (it says what failed, the cause's class and message included) and the
     * {@code rpma-log} thread writes it again with the trace. For lines that are not rate-limited:
     * each call writes.
     */
    public static void warn(Logger logger, String line, Throwable cause) {
        log(logger, Level.WARN, line, cause);
    }

    /** Like {@link #warn(Logger, String, Throwable)}, at ERROR. */
    public static void error(Logger logger, String line, Throwable cause) {
        log(logger, Level.ERROR, line, cause);
    }

    private static void log(Logger logger, Level level, String line, Throwable cause) {
        if (!logger.isEnabledForLevel(level)) {
            return;
        }
        if (onEventLoop()) {
            logger.atLevel(level).log(summary(line));
            write(() -> logger.atLevel(level).setCause(cause).log(line));
        }
        else {
            logger.atLevel(level).setCause(cause).log(line);
        }
    }

    private static String summary(String line) {
        return line + " [its stack trace follows, from thread '" + NAME + "']";
    }

    /** Traces dropped since the class was loaded, because the thread was {@value #CAPACITY} behind. */
    public static long dropped() {
        return dropped.get();
    }

    private static void run(Runnable write) {
        long lost = unreported.getAndSet(0);
        if (lost > 0) {
            logger.warn("{} stack trace(s) of event loops' log lines were dropped: the '{}' thread was {} behind",
                    lost, NAME, CAPACITY);
        }
        try {
            write.run();
        }
        catch (RuntimeException ex) {
            // an appender that fails must not end the thread and lose the traces after it
            logger.debug("Writing a stack trace failed", ex);
        }
    }
}

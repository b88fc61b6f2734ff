package dev.rpma.sample;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.rpma.jna.RpmaCompletions;
import dev.rpma.jna.RpmaThread;
import dev.rpma.jna.io.FdPoller;

/**
 * One thread that serves the completions of every ping-pong session, as the C baseline's single
 * {@code poll()} loop does: after completions it busy-polls every session's queue for up to the
 * busy-poll time, then sleeps in one {@code poll(2)} over all their completion channels. A thread
 * per session wakes once per message each, and on a machine with few CPUs those wake-ups queue
 * behind each other (the p99 of concurrent sessions measured in docs/performance.md).
 *
 * <p>A session is handed over by its handler thread ({@link #serve}), which waits until the session
 * ended and only then disconnects and deregisters its buffers; in between, only this thread touches
 * the session's connection, queues and buffers. The handler thread keeps the connection from being
 * deleted meanwhile (the acceptor deletes a closed connection once its handler returned).
 */
final class PingPongLoop implements Runnable, AutoCloseable {

    private static final Log logger = LogFactory.getLog(PingPongLoop.class);

    /** Completion channels one loop waits on; a session has one or two. */
    private static final int MAX_FDS = 512;

    /**
     * Loop turns per call of {@link #serveTurns}: {@link #run} is entered once and stays
     * interpreted, so the loop over the turns is in a method the JIT compiles.
     */
    private static final int TURNS_PER_CALL = 64;

    /** How often a quiet loop looks whether its sessions' connections are still open, in ms. */
    private static final int SLICE_MILLIS = 500;

    /** How long a handler whose wait was interrupted waits for the loop to let its session go. */
    private static final long RELEASE_TIMEOUT_SECONDS = 10;

    /** Completions taken per {@code rpma_cq_get_wc}. */
    private static final int BATCH = 8;

    private final long busyPollNanos;

    private final ConcurrentLinkedQueue<PingPongSession> added = new ConcurrentLinkedQueue<>();

    /**
     * The sessions served, in {@code sessions[0..sessionCount)}: an array, not a {@code List},
     * because the loop looks at each of them per turn and C1, the JIT the project's VM scripts run
     * the sample app with, does not inline calls through an interface.
     */
    private final PingPongSession[] sessions = new PingPongSession[MAX_FDS];

    private int sessionCount;

    private final FdPoller poller = new FdPoller(MAX_FDS);

    private final int[] fds = new int[MAX_FDS];

    private final RpmaCompletions batch = new RpmaCompletions(BATCH);

    private final Thread thread;

    private volatile boolean stopping;

    /** Set once the loop thread stopped serving: a session handed over after that is ended by its handler. */
    private volatile boolean gone;

    PingPongLoop(long busyPollNanos) {
        this.busyPollNanos = busyPollNanos;
        this.thread = new RpmaThread(this, "sample-pingpong-loop");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /**
     * Serves {@code session} on the loop thread until it ends; on the calling (handler) thread.
     * Interrupted, it asks the loop to let the session go and waits for that before it returns.
     */
    void serve(PingPongSession session) {
        this.added.add(session);
        this.poller.wakeup();
        if (this.gone) {
            endAdded();
        }
        try {
            session.awaitEnded();
        }
        catch (InterruptedException ex) {
            session.abandon();
            this.poller.wakeup();
            try {
                if (!session.awaitEnded(RELEASE_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                    logger.error("pingpong: the loop did not let an abandoned session go within "
                            + RELEASE_TIMEOUT_SECONDS + " s");
                }
            }
            catch (InterruptedException again) {
                // already interrupted once; the flag is restored below
            }
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void run() {
        try {
            while (!this.stopping) {
                serveTurns();
            }
        }
        catch (Throwable ex) {
            logger.error("pingpong: the completion loop failed; its sessions end", ex);
        }
        finally {
            this.gone = true;
            for (int i = 0; i < this.sessionCount; i++) {
                this.sessions[i].endNow();
                this.sessions[i] = null;
            }
            this.sessionCount = 0;
            endAdded();
            this.poller.close();
        }
    }

    private void serveTurns() {
        for (int turn = 0; turn < TURNS_PER_CALL && !this.stopping; turn++) {
            takeAdded();
            if (this.sessionCount == 0 || this.busyPollNanos <= 0 || !busyPoll()) {
                waitAndDrain();
            }
            endFinished();
        }
    }

    private void endFinished() {
        for (int i = this.sessionCount - 1; i >= 0; i--) {
            if (this.sessions[i].endIfFinished()) {
                // the order of the sessions does not matter: the last one takes the ended one's place
                this.sessions[i] = this.sessions[--this.sessionCount];
                this.sessions[this.sessionCount] = null;
            }
        }
    }

    private void endAdded() {
        PingPongSession session;
        while ((session = this.added.poll()) != null) {
            session.endNow();
        }
    }

    private void takeAdded() {
        PingPongSession session;
        while ((session = this.added.poll()) != null) {
            if (fdCount() + session.fds().length > MAX_FDS) {
                logger.warn("pingpong: more sessions than the loop waits for (" + MAX_FDS + " channels); ending one");
                session.endNow();
                continue;
            }
            this.sessions[this.sessionCount++] = session;
            // what completed before the session was handed over
            session.drain(this.batch);
        }
    }

    private int fdCount() {
        int count = 0;
        for (int i = 0; i < this.sessionCount; i++) {
            count += this.sessions[i].fds().length;
        }
        return count;
    }

    /**
     * Polls every session's queues for up to the busy-poll time; {@code true} when completions came
     * (or a session was handed over). Their events stay on the channels, so the next wait returns at
     * once and only consumes them. The clock is read only once a look found nothing: with several
     * busy sessions most turns end at their first look, and in the emulated VM a clock read is a
     * device access that costs about as much as a look.
     */
    private boolean busyPoll() {
        if (lookOnce()) {
            return true;
        }
        long deadline = System.nanoTime() + this.busyPollNanos;
        while (!this.stopping) {
            if (lookOnce()) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
        }
        return false;
    }

    /** One look at every session's queues; {@code true} when completions came or a session was handed over. */
    private boolean lookOnce() {
        boolean found = false;
        for (int i = 0; i < this.sessionCount; i++) {
            found |= this.sessions[i].pollOnce(this.batch);
        }
        if (found || !this.added.isEmpty()) {
            return true;
        }
        // lets another runnable thread on this CPU (a client, soft-RoCE) go on
        Thread.yield();
        return false;
    }

    private void waitAndDrain() {
        int count = 0;
        for (int i = 0; i < this.sessionCount; i++) {
            PingPongSession session = this.sessions[i];
            session.countRounds();
            for (int fd : session.fds()) {
                this.fds[count++] = fd;
            }
        }
        int ready = this.poller.await(this.fds, count, SLICE_MILLIS);
        int index = 0;
        for (int i = 0; i < this.sessionCount; i++) {
            PingPongSession session = this.sessions[i];
            boolean readable = false;
            for (int queue = 0; queue < session.fds().length; queue++, index++) {
                if (this.poller.isReadable(index)) {
                    session.consumeEvent(queue);
                    readable = true;
                }
            }
            if (readable) {
                session.drain(this.batch);
            }
            else if (ready == 0) {
                session.checkClosed();
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        this.stopping = true;
        this.poller.wakeup();
        this.thread.join(TimeUnit.SECONDS.toMillis(RELEASE_TIMEOUT_SECONDS));
    }
}

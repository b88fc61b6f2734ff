package dev.rpma.sample;

import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.rpma.client.protocol.ExampleProtocols;
import dev.rpma.jna.CompletionMode;
import dev.rpma.jna.RpmaCompletionQueue;
import dev.rpma.jna.RpmaCompletions;
import dev.rpma.jna.RpmaConnection;
import dev.rpma.jna.RpmaException;
import dev.rpma.jna.RpmaMemoryRegion;
import dev.rpma.jna.RpmaOpcode;
import dev.rpma.spring.server.RpmaServerConnection;

/**
 * One client's ping-pong session: the protocol's state between completions. Served by the
 * {@link PingPongLoop} thread from {@link PingPongLoop#serve} until it ends; its handler thread
 * reads {@link #outcome()} and {@link #rounds()} after that.
 *
 * <p>For each 8-byte counter received it posts the next receive and sends the counter plus one
 * (a reply waits while the previous send is still in flight, as the send buffer is in use), until
 * the client sends {@code I_M_DONE}. Completions are read in place; nothing is allocated per message.
 */
final class PingPongSession {

    private static final Log logger = LogFactory.getLog(PingPongSession.class);

    static final long RECV_CONTEXT = 1;

    static final long SEND_CONTEXT = 2;

    /** How many rounds may wait to be added to the rounds counter while the loop stays busy. */
    static final int ROUNDS_PER_COUNT = 64;

    /** {@code IBV_WC_WR_FLUSH_ERR}: how a closed connection shows up on the data path. */
    private static final int WC_FLUSHED = 5;

    /**
     * How long an abandoned session is still served: a stopping server interrupts its handlers just
     * before it disconnects their connections, so the close is usually about to show.
     */
    private static final long ABANDON_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final RpmaServerConnection server;

    private final RpmaConnection connection;

    private final RpmaMemoryRegion receiveRegion;

    private final ByteBuffer received;

    private final RpmaMemoryRegion sendRegion;

    private final ByteBuffer sent;

    private final Counter roundsCounter;

    private final RpmaCompletionQueue[] queues;

    private final int[] fds;

    private final CountDownLatch ended = new CountDownLatch(1);

    /** When the handler gave the session up ({@link System#nanoTime()}); 0 while it has not. */
    private volatile long abandonedAt;

    private boolean sendInFlight;

    /** A reply that waits for the previous send to complete (the send buffer is still in use). */
    private long deferredReply;

    private boolean replyDeferred;

    private boolean finished;

    private String outcome = "failed";

    private long rounds;

    /** Rounds already added to {@link #roundsCounter}. */
    private long countedRounds;

    PingPongSession(RpmaServerConnection server, RpmaMemoryRegion receiveRegion, ByteBuffer received,
            RpmaMemoryRegion sendRegion, ByteBuffer sent, Counter roundsCounter) {
        this.server = server;
        this.connection = server.connection();
        this.receiveRegion = receiveRegion;
        this.received = received;
        this.sendRegion = sendRegion;
        this.sent = sent;
        this.roundsCounter = roundsCounter;
        RpmaCompletionQueue rcq = this.connection.receiveCompletionQueue();
        this.queues = (rcq != null) ? new RpmaCompletionQueue[] { this.connection.completionQueue(), rcq }
                : new RpmaCompletionQueue[] { this.connection.completionQueue() };
        this.fds = new int[this.queues.length];
        for (int i = 0; i < this.queues.length; i++) {
            this.fds[i] = this.queues[i].fd();
        }
    }

    /** How the session ended: {@code done}, {@code closed} or {@code failed}. */
    String outcome() {
        return this.outcome;
    }

    long rounds() {
        return this.rounds;
    }

    void setOutcome(String outcome) {
        this.outcome = outcome;
    }

    // ---------------------------------------------------------------- the loop thread

    /** The completion channels to wait on, one per queue. */
    int[] fds() {
        return this.fds;
    }

    /**
     * Takes completions until a batch comes back short. The queues were re-armed before, so a
     * completion that arrives after the last look raises a new event: no look more is needed.
     */
    void drain(RpmaCompletions batch) {
        try {
            for (RpmaCompletionQueue queue : this.queues) {
                int got;
                do {
                    got = queue.poll(batch);
                    process(batch, got);
                }
                while (got == batch.capacity() && !this.finished);
            }
        }
        catch (RpmaException ex) {
            fail(ex);
        }
    }

    /** One look at each queue; {@code true} when completions came. */
    boolean pollOnce(RpmaCompletions batch) {
        if (this.finished) {
            return false;
        }
        try {
            boolean found = false;
            for (RpmaCompletionQueue queue : this.queues) {
                int got = queue.poll(batch);
                process(batch, got);
                found |= got > 0;
            }
            return found;
        }
        catch (RpmaException ex) {
            fail(ex);
            return true;
        }
    }

    /** Consumes the channel's event of a queue and re-arms it; does not block (the fd was readable). */
    void consumeEvent(int queue) {
        try {
            this.queues[queue].await();
        }
        catch (RpmaException ex) {
            fail(ex);
        }
    }

    /** A quiet session: has its connection closed or been lost (the acceptor saw it)? */
    void checkClosed() {
        if (!this.finished && this.server.isClosed()) {
            this.outcome = "closed";
            this.finished = true;
        }
    }

    /**
     * Ends the session if it finished, or if its handler gave it up and the connection closed (or
     * did not within {@link #ABANDON_GRACE_NANOS}); {@code true} when it ended.
     */
    boolean endIfFinished() {
        long abandoned = this.abandonedAt;
        if (abandoned != 0 && !this.finished) {
            if (this.server.isClosed()) {
                this.outcome = "closed";
                this.finished = true;
            }
            else if (System.nanoTime() - abandoned > ABANDON_GRACE_NANOS) {
                this.outcome = "failed";
                this.finished = true;
            }
        }
        if (this.finished) {
            countRounds();
            this.ended.countDown();
            return true;
        }
        return false;
    }

    /** Ends the session as it is (the loop stops). */
    void endNow() {
        this.finished = true;
        countRounds();
        this.ended.countDown();
    }

    private void fail(RpmaException ex) {
        this.outcome = this.server.isClosed() ? "closed" : "failed";
        if (!this.server.isClosed()) {
            logger.warn("pingpong: session failed after " + this.rounds + " rounds: " + ex.getMessage());
        }
        this.finished = true;
    }

    private void process(RpmaCompletions batch, int count) {
        for (int i = 0; i < count; i++) {
            onCompletion(batch, i);
        }
    }

    private void onCompletion(RpmaCompletions batch, int index) {
        if (this.finished) {
            return;
        }
        if (!batch.isSuccess(index)) {
            int status = batch.status(index);
            // a flushed receive is how a closed connection shows up on the data path
            this.outcome = (status == WC_FLUSHED) ? "closed" : "failed";
            if (status != WC_FLUSHED) {
                logger.warn("pingpong: " + batch.opcode(index) + " failed with ibv_wc_status " + status);
            }
            this.finished = true;
            return;
        }
        int opcode = batch.opcodeValue(index);
        if (opcode == RpmaOpcode.SEND.code()) {
            this.sendInFlight = false;
            if (this.replyDeferred) {
                this.replyDeferred = false;
                reply(this.deferredReply);
            }
            return;
        }
        if (opcode != RpmaOpcode.RECV.code() || batch.byteLength(index) != ExampleProtocols.MESSAGE_SIZE) {
            logger.warn("pingpong: unexpected completion " + batch.get(index) + "; ending the session");
            this.finished = true;
            return;
        }
        long value = this.received.getLong(0);
        if (value == ExampleProtocols.I_M_DONE) {
            this.outcome = "done";
            this.finished = true;
            return;
        }
        if (this.sendInFlight) {
            this.deferredReply = value + 1;
            this.replyDeferred = true;
        }
        else {
            reply(value + 1);
        }
    }

    /** As the example's server: the next receive first, then the answer. */
    private void reply(long value) {
        this.connection.receive(this.receiveRegion, 0, ExampleProtocols.MESSAGE_SIZE, RECV_CONTEXT);
        this.sent.putLong(0, value);
        this.connection.send(this.sendRegion, 0, ExampleProtocols.MESSAGE_SIZE, CompletionMode.ALWAYS, SEND_CONTEXT);
        this.sendInFlight = true;
        this.rounds++;
        if (this.rounds - this.countedRounds >= ROUNDS_PER_COUNT) {
            countRounds();
        }
    }

    /**
     * Adds the rounds since the last call to the rounds counter: every {@link #ROUNDS_PER_COUNT}
     * rounds, before the loop sleeps, and when the session ends, so the meter costs a fraction of
     * a message and is never more than that many rounds behind.
     */
    void countRounds() {
        long pending = this.rounds - this.countedRounds;
        if (pending > 0) {
            this.roundsCounter.increment(pending);
            this.countedRounds = this.rounds;
        }
    }

    // ---------------------------------------------------------------- the handler thread

    /** Asks the loop to end the session once its connection closed, or after a short grace (its handler was interrupted). */
    void abandon() {
        long now = System.nanoTime();
        this.abandonedAt = (now != 0) ? now : 1;
    }

    void awaitEnded() throws InterruptedException {
        this.ended.await();
    }

    boolean awaitEnded(long timeout, TimeUnit unit) throws InterruptedException {
        return this.ended.await(timeout, unit);
    }
}

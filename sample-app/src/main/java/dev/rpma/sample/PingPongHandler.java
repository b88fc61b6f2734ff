package dev.rpma.sample;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.Semaphore;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import dev.rpma.client.protocol.ExampleProtocols;
import dev.rpma.jna.CompletionMode;
import dev.rpma.jna.MemoryUsage;
import dev.rpma.jna.RpmaCompletionQueue;
import dev.rpma.jna.RpmaCompletions;
import dev.rpma.jna.RpmaConnection;
import dev.rpma.jna.RpmaException;
import dev.rpma.jna.RpmaMemoryRegion;
import dev.rpma.jna.RpmaOpcode;
import dev.rpma.jna.RpmaPeer;
import dev.rpma.jna.io.FdPoller;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.server.RpmaIncomingRequest;
import dev.rpma.spring.server.RpmaServerConnection;

/**
 * librpma's example 08-messages-ping-pong on the {@code pingpong} endpoint: a receive is posted on
 * the request before accepting (so the client's first message has a buffer), then for each 8-byte
 * counter received the server posts the next receive and sends the counter plus one, until the
 * client sends {@code I_M_DONE}; then it disconnects.
 *
 * <p>The handler serves the whole session on its handler thread and owns the session's two
 * registered buffers, which it deregisters before it returns. It waits for completions in slices,
 * so that it notices a connection the client closed or lost (the acceptor then disconnects it, which
 * flushes the posted receive) and a server that is stopping.
 *
 * <p>Each wake-up costs what the C baseline's does ({@code benchmarks/rdma-vs-c}): {@code poll()} on the
 * completion channel, {@code rpma_cq_wait} (consume the event, re-arm), and {@code rpma_cq_get_wc}
 * until a batch comes back short; the completions are read in place, nothing is allocated per
 * message. With {@code sample.pingpong.busy-poll-micros} above 0 the session polls its queue that
 * long before it sleeps on the channel, when fewer than {@code sample.pingpong.busy-poll-sessions}
 * sessions (default: half the CPUs, at least one) are polling at that moment; the others sleep at
 * once (see docs/performance.md for what that buys and costs).
 *
 * <p>Meters: {@code sample.pingpong.rounds} (exchanges served) and {@code sample.pingpong.sessions}
 * tagged {@code outcome}: {@code done} (the client said I_M_DONE), {@code closed} (the connection
 * closed or was lost first), {@code failed} (anything else).
 */
@Component
class PingPongHandler {

    private static final Log logger = LogFactory.getLog(PingPongHandler.class);

    private static final long RECV_CONTEXT = 1;

    private static final long SEND_CONTEXT = 2;

    /** How long to wait for ESTABLISHED after accepting. */
    private static final Duration ESTABLISH_TIMEOUT = Duration.ofSeconds(30);

    /** How often a quiet session looks whether its connection is still open, in ms. */
    private static final int SLICE_MILLIS = 500;

    /** Completions taken per {@code rpma_cq_get_wc}. */
    private static final int BATCH = 8;

    /** {@code IBV_WC_WR_FLUSH_ERR}: how a closed connection shows up on the data path. */
    private static final int WC_FLUSHED = 5;

    private final Counter rounds;

    private final Counter done;

    private final Counter closed;

    private final Counter failed;

    private final long busyPollNanos;

    /**
     * Sessions allowed to busy-poll at the same time. A spinning session holds a CPU; more spinners
     * than CPUs would take them from the threads that must run for a message to arrive (the peer's,
     * soft-RoCE's), and the sessions that lose their CPU pay a scheduler time slice in latency.
     */
    private final Semaphore spinners;

    PingPongHandler(MeterRegistry registry, @Value("${sample.pingpong.busy-poll-micros:0}") long busyPollMicros,
            @Value("${sample.pingpong.busy-poll-sessions:0}") int busyPollSessions) {
        this.busyPollNanos = busyPollMicros * 1000;
        this.spinners = new Semaphore((busyPollSessions > 0) ? busyPollSessions
                : Math.max(1, Runtime.getRuntime().availableProcessors() / 2));
        this.rounds = Counter.builder("sample.pingpong.rounds")
            .description("Ping-pong exchanges served (a counter received and its successor sent)")
            .register(registry);
        this.done = sessions(registry, "done");
        this.closed = sessions(registry, "closed");
        this.failed = sessions(registry, "failed");
    }

    private static Counter sessions(MeterRegistry registry, String outcome) {
        return Counter.builder("sample.pingpong.sessions")
            .description("Ping-pong sessions that ended, by how they ended")
            .tag("outcome", outcome)
            .register(registry);
    }

    @RpmaConnectionHandler(endpoint = "pingpong")
    void pingPong(RpmaIncomingRequest request) throws InterruptedException {
        ByteBuffer received = ByteBuffer.allocateDirect(ExampleProtocols.MESSAGE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer sent = ByteBuffer.allocateDirect(ExampleProtocols.MESSAGE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        RpmaPeer peer = request.peer();
        try (RpmaMemoryRegion receiveRegion = peer.register(received, MemoryUsage.RECV);
                RpmaMemoryRegion sendRegion = peer.register(sent, MemoryUsage.SEND)) {
            request.receive(receiveRegion, 0, ExampleProtocols.MESSAGE_SIZE, RECV_CONTEXT);
            RpmaServerConnection connection = request.connect();
            Session session = new Session(connection.connection(), receiveRegion, received, sendRegion, sent);
            try {
                if (connection.awaitEstablished(ESTABLISH_TIMEOUT)) {
                    session.serve(connection);
                }
                else {
                    session.outcome = connection.isClosed() ? "closed" : "failed";
                }
            }
            catch (RpmaException ex) {
                session.outcome = connection.isClosed() ? "closed" : "failed";
                if (!connection.isClosed()) {
                    logger.warn("pingpong: session failed after " + session.rounds + " rounds: " + ex.getMessage());
                }
            }
            finally {
                if (!connection.isClosed()) {
                    // also for I_M_DONE: the example's server disconnects; the acceptor deletes it after CLOSED
                    disconnectQuietly(connection);
                }
                count(session);
            }
        }
    }

    private void count(Session session) {
        switch (session.outcome) {
            case "done" -> this.done.increment();
            case "closed" -> this.closed.increment();
            default -> this.failed.increment();
        }
        logger.info("pingpong: session ended (" + session.outcome + ") after " + session.rounds + " rounds");
    }

    private static void disconnectQuietly(RpmaServerConnection connection) {
        try {
            connection.disconnect();
        }
        catch (RpmaException ex) {
            logger.debug("pingpong: disconnect failed", ex);
        }
    }

    /** One client's session: the protocol's state between completions. */
    private final class Session {

        private final RpmaConnection connection;

        private final RpmaMemoryRegion receiveRegion;

        private final ByteBuffer received;

        private final RpmaMemoryRegion sendRegion;

        private final ByteBuffer sent;

        private boolean sendInFlight;

        /** A reply that waits for the previous send to complete (the send buffer is still in use). */
        private long deferredReply;

        private boolean replyDeferred;

        private boolean finished;

        private String outcome = "failed";

        private long rounds;

        Session(RpmaConnection connection, RpmaMemoryRegion receiveRegion, ByteBuffer received,
                RpmaMemoryRegion sendRegion, ByteBuffer sent) {
            this.connection = connection;
            this.receiveRegion = receiveRegion;
            this.received = received;
            this.sendRegion = sendRegion;
            this.sent = sent;
        }

        void serve(RpmaServerConnection server) {
            RpmaCompletionQueue rcq = this.connection.receiveCompletionQueue();
            RpmaCompletionQueue[] queues = (rcq != null)
                    ? new RpmaCompletionQueue[] { this.connection.completionQueue(), rcq }
                    : new RpmaCompletionQueue[] { this.connection.completionQueue() };
            int[] fds = new int[queues.length];
            for (int i = 0; i < queues.length; i++) {
                fds[i] = queues[i].fd();
            }
            RpmaCompletions batch = new RpmaCompletions(BATCH);
            try (FdPoller poller = new FdPoller(queues.length)) {
                // what completed before the first wait
                drain(queues, batch);
                while (!this.finished) {
                    if (PingPongHandler.this.busyPollNanos > 0 && PingPongHandler.this.spinners.tryAcquire()) {
                        try {
                            if (busyPoll(queues, batch)) {
                                continue;
                            }
                        }
                        finally {
                            PingPongHandler.this.spinners.release();
                        }
                    }
                    if (poller.await(fds, fds.length, SLICE_MILLIS) == 0) {
                        if (server.isClosed()) {
                            this.outcome = "closed";
                            return;
                        }
                        continue;
                    }
                    for (int i = 0; i < queues.length; i++) {
                        if (poller.isReadable(i)) {
                            // consumes the channel's event and re-arms the queue; does not block here
                            queues[i].await();
                        }
                    }
                    drain(queues, batch);
                }
            }
        }

        /**
         * Takes completions until a batch comes back short. The queues were re-armed before, so a
         * completion that arrives after the last look raises a new event: no look more is needed.
         */
        private void drain(RpmaCompletionQueue[] queues, RpmaCompletions batch) {
            for (RpmaCompletionQueue queue : queues) {
                int got;
                do {
                    got = queue.poll(batch);
                    for (int i = 0; i < got; i++) {
                        onCompletion(batch, i);
                    }
                }
                while (got == batch.capacity());
            }
        }

        /**
         * Polls the queues for up to the busy-poll time; {@code true} when completions came. Their
         * events stay on the channel, so the next wait returns at once and only consumes them.
         */
        private boolean busyPoll(RpmaCompletionQueue[] queues, RpmaCompletions batch) {
            long deadline = System.nanoTime() + PingPongHandler.this.busyPollNanos;
            do {
                for (RpmaCompletionQueue queue : queues) {
                    int got = queue.poll(batch);
                    if (got > 0) {
                        for (int i = 0; i < got; i++) {
                            onCompletion(batch, i);
                        }
                        return true;
                    }
                }
                // lets another runnable thread on this CPU (a client, another session) go on
                Thread.yield();
            }
            while (System.nanoTime() - deadline < 0);
            return false;
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
            PingPongHandler.this.rounds.increment();
        }
    }
}

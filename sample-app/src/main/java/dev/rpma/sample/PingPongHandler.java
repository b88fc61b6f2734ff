package dev.rpma.sample;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

import dev.rpma.client.CompletionWaiter;
import dev.rpma.client.protocol.ExampleProtocols;
import dev.rpma.jna.CompletionMode;
import dev.rpma.jna.MemoryUsage;
import dev.rpma.jna.RpmaCompletion;
import dev.rpma.jna.RpmaConnection;
import dev.rpma.jna.RpmaException;
import dev.rpma.jna.RpmaMemoryRegion;
import dev.rpma.jna.RpmaOpcode;
import dev.rpma.jna.RpmaPeer;
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

    /** How often a quiet session looks whether its connection is still open. */
    private static final Duration SLICE = Duration.ofMillis(500);

    private final Counter rounds;

    private final Counter done;

    private final Counter closed;

    private final Counter failed;

    PingPongHandler(MeterRegistry registry) {
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
            try (CompletionWaiter completions = new CompletionWaiter(this.connection)) {
                while (!this.finished) {
                    int got = completions.await(SLICE, this::onCompletion);
                    if (got == 0 && server.isClosed()) {
                        this.outcome = "closed";
                        return;
                    }
                }
            }
        }

        private void onCompletion(RpmaCompletion completion) {
            if (this.finished) {
                return;
            }
            if (!completion.isSuccess()) {
                // a flushed receive (status 5) is how a closed connection shows up on the data path
                this.outcome = (completion.status() == 5) ? "closed" : "failed";
                if (completion.status() != 5) {
                    logger.warn("pingpong: " + completion.opcode() + " failed with ibv_wc_status " + completion.status());
                }
                this.finished = true;
                return;
            }
            if (completion.opcode() == RpmaOpcode.SEND) {
                this.sendInFlight = false;
                if (this.replyDeferred) {
                    this.replyDeferred = false;
                    reply(this.deferredReply);
                }
                return;
            }
            if (completion.opcode() != RpmaOpcode.RECV || completion.byteLength() != ExampleProtocols.MESSAGE_SIZE) {
                logger.warn("pingpong: unexpected completion " + completion + "; ending the session");
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

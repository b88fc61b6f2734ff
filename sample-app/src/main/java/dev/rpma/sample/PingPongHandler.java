package dev.rpma.sample;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import dev.rpma.client.protocol.ExampleProtocols;
import dev.rpma.jna.MemoryUsage;
import dev.rpma.jna.RpmaException;
import dev.rpma.jna.RpmaMemoryRegion;
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
 * <p>The handler owns the session's two registered buffers and its connection for as long as the
 * session lasts, and deregisters the buffers before it returns. The messages themselves are served
 * by one {@link PingPongLoop} thread for all sessions, the way the C baseline serves them from one
 * {@code poll()} loop ({@code benchmarks/rdma-vs-c}): the handler thread waits meanwhile. With
 * {@code sample.pingpong.busy-poll-micros} above 0 the loop polls the sessions' queues that long
 * after completions before it sleeps on their completion channels (see docs/performance.md for what
 * that buys and costs).
 *
 * <p>Meters: {@code sample.pingpong.rounds} (exchanges served) and {@code sample.pingpong.sessions}
 * tagged {@code outcome}: {@code done} (the client said I_M_DONE), {@code closed} (the connection
 * closed or was lost first), {@code failed} (anything else).
 */
@Component
class PingPongHandler implements DisposableBean {

    private static final Log logger = LogFactory.getLog(PingPongHandler.class);

    /** How long to wait for ESTABLISHED after accepting. */
    private static final Duration ESTABLISH_TIMEOUT = Duration.ofSeconds(30);

    private final Counter rounds;

    private final Counter done;

    private final Counter closed;

    private final Counter failed;

    private final PingPongLoop loop;

    PingPongHandler(MeterRegistry registry, @Value("${sample.pingpong.busy-poll-micros:0}") long busyPollMicros) {
        this.rounds = Counter.builder("sample.pingpong.rounds")
            .description("Ping-pong exchanges served (a counter received and its successor sent)")
            .register(registry);
        this.done = sessions(registry, "done");
        this.closed = sessions(registry, "closed");
        this.failed = sessions(registry, "failed");
        this.loop = new PingPongLoop(busyPollMicros * 1000);
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
            request.receive(receiveRegion, 0, ExampleProtocols.MESSAGE_SIZE, PingPongSession.RECV_CONTEXT);
            RpmaServerConnection connection = request.connect();
            PingPongSession session = new PingPongSession(connection, receiveRegion, received, sendRegion, sent,
                    this.rounds);
            try {
                if (connection.awaitEstablished(ESTABLISH_TIMEOUT)) {
                    // returns once the loop let the session go: nothing touches the buffers after it
                    this.loop.serve(session);
                }
                else {
                    session.setOutcome(connection.isClosed() ? "closed" : "failed");
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

    private void count(PingPongSession session) {
        switch (session.outcome()) {
            case "done" -> this.done.increment();
            case "closed" -> this.closed.increment();
            default -> this.failed.increment();
        }
        logger.info("pingpong: session ended (" + session.outcome() + ") after " + session.rounds() + " rounds");
    }

    private static void disconnectQuietly(RpmaServerConnection connection) {
        try {
            connection.disconnect();
        }
        catch (RpmaException ex) {
            logger.debug("pingpong: disconnect failed", ex);
        }
    }

    @Override
    public void destroy() throws InterruptedException {
        this.loop.close();
    }
}

package dev.rpma.sample;

import java.nio.ByteBuffer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.server.RpmaProtocolException;
import dev.rpma.server.RpmaSession;
import dev.rpma.server.RpmaSessionEnd;
import dev.rpma.spring.annotation.RpmaMessageHandler;
import dev.rpma.spring.annotation.RpmaSessionEvent;

/**
 * librpma's example 08-messages-ping-pong on the {@code pingpong} endpoint (raw messages of 8
 * bytes): each counter received is answered with the counter plus one, until the client sends
 * {@code I_M_DONE}; then the server disconnects, as the example's server does. The starter posts the
 * receives (before accepting, so the first message has a buffer), reposts each slot after the
 * handler, and sends the returned buffer, which was built in a registered send slot.
 *
 * <p>Meters: {@code sample.pingpong.rounds} (exchanges served) and {@code sample.pingpong.sessions}
 * tagged {@code outcome}: {@code done} (the client said I_M_DONE), {@code closed} (the connection
 * closed or was lost first), {@code failed} (anything else).
 */
@Component
class PingPongHandler {

    private static final Log logger = LogFactory.getLog(PingPongHandler.class);

    private static final String DONE = "pingpong.done";

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

    @RpmaMessageHandler(endpoint = "pingpong")
    @Nullable ByteBuffer pong(ByteBuffer message, RpmaSession session) {
        if (message.remaining() != ExampleProtocols.MESSAGE_SIZE) {
            throw new RpmaProtocolException("a ping-pong message is " + ExampleProtocols.MESSAGE_SIZE + " bytes, not "
                    + message.remaining());
        }
        long counter = message.getLong(0);
        if (counter == ExampleProtocols.I_M_DONE) {
            session.attributes().put(DONE, Boolean.TRUE);
            session.close();
            return null;
        }
        this.rounds.increment();
        return session.newMessage().putLong(counter + 1).flip();
    }

    @RpmaSessionEvent(endpoint = "pingpong")
    void ended(RpmaSession session, RpmaSessionEnd end) {
        String outcome;
        if (session.attributes().containsKey(DONE)) {
            outcome = "done";
            this.done.increment();
        }
        else if (end.reason() == RpmaSessionEnd.Reason.CLOSED || end.reason() == RpmaSessionEnd.Reason.LOST
                || end.reason() == RpmaSessionEnd.Reason.SHUTDOWN) {
            outcome = "closed";
            this.closed.increment();
        }
        else {
            outcome = "failed";
            this.failed.increment();
        }
        // a round is a counter answered: every message this handler sends is one
        logger.info("pingpong: session ended (" + outcome + ") after " + session.messagesSent() + " rounds");
    }
}

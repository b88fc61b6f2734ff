package dev.rpma.sample;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.server.RpmaEscaping;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaSession;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.annotation.RpmaSessionEvent;

/**
 * librpma's example 01-connection on the default endpoint: the client's greeting arrives in the
 * request's private data, the server's goes back in the accept's. Once the connection is established
 * the server disconnects, as the example's server does, and its client waits for that CLOSED. A
 * request without the example's greeting is rejected, so clients of other protocols that knock on
 * the wrong port see REJECTED.
 */
@Component
class HelloHandler {

    private static final Log logger = LogFactory.getLog(HelloHandler.class);

    private static final byte[] REPLY = ExampleProtocols.cString(ExampleProtocols.SERVER_GREETING);

    /** How much of a stranger's private data the log shows. */
    private static final int LOGGED_BYTES = 32;

    @RpmaConnectionHandler
    void hello(RpmaIncomingRequest request) {
        byte[] greeting = request.privateData();
        if (!ExampleProtocols.isClientGreeting(greeting)) {
            // the peer's bytes, escaped and cut: a log line is not the peer's to write
            logger.info("hello: rejecting a request whose private data is not \"" + ExampleProtocols.CLIENT_GREETING
                    + "\" but \"" + RpmaEscaping.escape(trimmed(greeting), LOGGED_BYTES) + "\"");
            request.reject();
            return;
        }
        request.connect(REPLY);
    }

    @RpmaSessionEvent
    void established(RpmaSession session) {
        session.close();
    }

    /** Without the zero padding RoCE adds to private data. */
    private static byte[] trimmed(byte[] data) {
        int end = data.length;
        while (end > 0 && data[end - 1] == 0) {
            end--;
        }
        return java.util.Arrays.copyOf(data, end);
    }
}

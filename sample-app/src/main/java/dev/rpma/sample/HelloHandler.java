package dev.rpma.sample;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

import dev.rpma.client.protocol.ExampleProtocols;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.server.RpmaIncomingRequest;

/**
 * librpma's example 01-connection on the default endpoint: the client's greeting arrives in the
 * request's private data, the server's goes back in the accept's. A request without the example's
 * greeting is rejected, so clients of other protocols that knock on the wrong port see REJECTED.
 */
@Component
class HelloHandler {

    private static final Log logger = LogFactory.getLog(HelloHandler.class);

    private static final byte[] REPLY = ExampleProtocols.cString(ExampleProtocols.SERVER_GREETING);

    @RpmaConnectionHandler
    void hello(RpmaIncomingRequest request) {
        byte[] greeting = request.privateData();
        if (!ExampleProtocols.isClientGreeting(greeting)) {
            logger.info("hello: rejecting a request whose private data is not \"" + ExampleProtocols.CLIENT_GREETING
                    + "\" but \"" + ExampleProtocols.fromCString(greeting) + "\"");
            request.reject();
            return;
        }
        request.connect(REPLY);
        logger.debug("hello: greeted a client");
    }
}

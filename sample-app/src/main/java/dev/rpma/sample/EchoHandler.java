package dev.rpma.sample;

import java.nio.ByteBuffer;
import java.util.Locale;

import org.springframework.stereotype.Component;

import dev.rpma.server.RpmaSession;
import dev.rpma.spring.annotation.RpmaMessageHandler;

/**
 * The starter's own framed protocol on the {@code echo} endpoint, for clients such as
 * {@code dev.rpma.client.RpmaClient}: each request names a route and is answered by the method of
 * that route, replies matched to requests by the framing. {@code echo} returns the payload as it is,
 * copied into a registered send slot; {@code upper} returns a UTF-8 text upper-cased (decoded and
 * encoded by the built-in String codec), so that a reply shows which request it answers. A route
 * without a method is answered with an error, and the session goes on. There is no connection
 * handler: the endpoint accepts every request.
 */
@Component
class EchoHandler {

    static final String ENDPOINT = "echo";

    @RpmaMessageHandler(endpoint = ENDPOINT, route = "echo")
    ByteBuffer echo(ByteBuffer message, RpmaSession session) {
        return session.newMessage().put(message).flip();
    }

    @RpmaMessageHandler(endpoint = ENDPOINT, route = "upper")
    String upper(String text) {
        return text.toUpperCase(Locale.ROOT);
    }
}

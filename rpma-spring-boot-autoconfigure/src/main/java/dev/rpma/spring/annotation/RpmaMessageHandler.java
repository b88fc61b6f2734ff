package dev.rpma.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.core.annotation.AliasFor;

/**
 * Marks a method that handles the messages of an RDMA endpoint's sessions (of one route, on a framed
 * endpoint), or a bean class whose annotated methods do (setting their default endpoint). May be used
 * as a meta-annotation.
 *
 * <p>Parameters, in any order: the message as a {@link java.nio.ByteBuffer} (a read-only view of the
 * registered receive slot, little-endian, valid during the call), as a {@code byte[]} (a copy), or as
 * any other type a {@link dev.rpma.server.RpmaMessageCodec} decodes (a {@code String} as UTF-8, a JSON
 * type with Jackson); and the {@link dev.rpma.server.RpmaSession}. The return value is the reply, sent on
 * the same session: {@code void} or {@code null} for none (a framed request gets an empty reply), a
 * {@code ByteBuffer} (its remaining bytes; build it in {@code session.newMessage()} to send it without a
 * copy), a {@code byte[]}, or a type a codec encodes. Throw
 * {@link dev.rpma.server.RpmaProtocolException} for a message that breaks the protocol: its session ends.
 *
 * <p>The method runs on the session's event loop unless the endpoint dispatches to a pool
 * ({@code rpma.server.messages.dispatch=pool}), so by default it must not block; either way the
 * messages of one session come in order.
 *
 * <p>A message is the client's bytes: log them only through {@link dev.rpma.server.RpmaEscaping}
 * (a newline in them would otherwise forge a log line). The server escapes what it logs of a failure,
 * an exception's message included.
 *
 * <pre class="code">
 * &#64;Component
 * class PingPong {
 *     &#64;RpmaMessageHandler(endpoint = "pingpong")
 *     ByteBuffer pong(ByteBuffer ping, RpmaSession session) {
 *         return session.newMessage().putLong(ping.getLong(0) + 1).flip();
 *     }
 * }
 * </pre>
 */
@Target({ ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RpmaMessageHandler {

    /** Alias for {@link #endpoint()}. */
    @AliasFor("endpoint")
    String value() default "";

    /**
     * The name of the endpoint ({@code rpma.server.endpoints.<name>}); placeholders are resolved.
     * Empty: the class-level value, else the endpoint configured under {@code rpma.server}.
     */
    @AliasFor("value")
    String endpoint() default "";

    /**
     * The route that selects this method on a framed endpoint (at most 64 bytes of UTF-8); empty on a
     * raw endpoint, whose messages carry no route and which takes one message handler.
     */
    String route() default "";
}

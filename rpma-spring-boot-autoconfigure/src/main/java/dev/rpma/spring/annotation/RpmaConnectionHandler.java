package dev.rpma.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.core.annotation.AliasFor;

/**
 * Marks a method that decides the connection requests of an RDMA endpoint, or a bean class whose
 * annotated methods do (setting their default endpoint). The method takes a
 * {@link dev.rpma.server.RpmaIncomingRequest} and, optionally, a {@code String} that receives
 * the endpoint's name, and returns {@code void}; it runs on a handler thread and must
 * {@code connect} or {@code reject} the request before it returns. The session a connect starts is
 * served by the server's event loops; the method does not wait for it. May be used as a
 * meta-annotation.
 *
 * <p>The request's private data is the client's: log it only through
 * {@link dev.rpma.server.RpmaEscaping} (a newline in it would otherwise forge a log line), and do
 * not quote it unescaped in an exception's message either.
 *
 * <pre class="code">
 * &#64;Component
 * class Greeter {
 *     &#64;RpmaConnectionHandler
 *     void hello(RpmaIncomingRequest request) {
 *         request.connect("Hello client!\0".getBytes(StandardCharsets.US_ASCII));
 *     }
 * }
 * </pre>
 */
@Target({ ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RpmaConnectionHandler {

    /** Alias for {@link #endpoint()}. */
    @AliasFor("endpoint")
    String value() default "";

    /**
     * The name of the endpoint ({@code rpma.server.endpoints.<name>}); placeholders are resolved.
     * Empty: the class-level value, else the endpoint configured under {@code rpma.server}
     * ({@code "default"}).
     */
    @AliasFor("value")
    String endpoint() default "";
}

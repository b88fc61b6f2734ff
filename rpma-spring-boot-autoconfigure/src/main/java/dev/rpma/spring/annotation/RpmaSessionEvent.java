package dev.rpma.spring.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.core.annotation.AliasFor;

/**
 * Marks a method called when a session of an RDMA endpoint is established, or, when the method takes
 * an {@link dev.rpma.server.RpmaSessionEnd}, when one ends (closed by the client, lost, idle, an error,
 * a limit, the server's stop). Parameters, in any order: the {@link dev.rpma.server.RpmaSession}, the
 * {@code RpmaSessionEnd}, a {@code String} for the endpoint's name; it returns {@code void}. It runs on
 * the session's event loop: keep it short and never block. Beans that implement
 * {@link dev.rpma.server.RpmaSessionListener} hear of every endpoint's sessions.
 *
 * <pre class="code">
 * &#64;RpmaSessionEvent(endpoint = "default")
 * void greeted(RpmaSession session) {
 *     session.close();   // as librpma's example 01 server: disconnect once established
 * }
 * </pre>
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RpmaSessionEvent {

    /** Alias for {@link #endpoint()}. */
    @AliasFor("endpoint")
    String value() default "";

    /** The endpoint's name; placeholders are resolved. Empty: the endpoint configured under {@code rpma.server}. */
    @AliasFor("value")
    String endpoint() default "";
}

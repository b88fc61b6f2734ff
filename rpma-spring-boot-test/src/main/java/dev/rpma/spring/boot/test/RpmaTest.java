package dev.rpma.spring.boot.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.annotation.AliasFor;

/**
 * A {@code @SpringBootTest} of an RDMA application on the in-JVM loopback
 * ({@link AutoConfigureRpmaLoopback}): the whole application starts, its endpoints listen, and its
 * auto-configured clients (or the test's) call them, with no RDMA device and no librpma.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@SpringBootTest
@AutoConfigureRpmaLoopback
public @interface RpmaTest {

    /** Properties for the test, as {@link SpringBootTest#properties()}. */
    @AliasFor(annotation = SpringBootTest.class)
    String[] properties() default {};

    /** The configuration classes to start, as {@link SpringBootTest#classes()}. */
    @AliasFor(annotation = SpringBootTest.class)
    Class<?>[] classes() default {};
}

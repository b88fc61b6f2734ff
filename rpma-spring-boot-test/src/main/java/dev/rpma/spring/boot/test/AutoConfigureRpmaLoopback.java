package dev.rpma.spring.boot.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * On a {@code @SpringBootTest}: the application's RDMA endpoints and auto-configured clients run on an
 * in-JVM {@link RpmaLoopback} instead of librpma, so the test needs no RDMA device and no librpma.
 * Clients reach the endpoint listening on the port they dial, whatever the configured addresses; with
 * no {@code rpma.server.address} configured, the endpoints listen on {@code 192.0.2.1}. Inject the
 * {@link RpmaLoopback} bean to inject faults.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureRpmaLoopback {

}

package dev.rpma.spring.boot.actuate.observation;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;
import dev.rpma.server.RpmaServer;

/**
 * An {@link io.micrometer.observation.Observation} around each connection handler invocation and each
 * message handler invocation whose message carried a client's trace context, opt-in with
 * {@code rpma.server.observation-enabled=true} (as spring-kafka's listener observation), when an
 * {@link ObservationRegistry} is present. With a tracer on the classpath each invocation becomes a span.
 */
@AutoConfiguration(after = RpmaAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean({ RpmaServer.class, ObservationRegistry.class })
@ConditionalOnBooleanProperty("rpma.server.observation-enabled")
public final class RpmaObservationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RpmaHandlerObservations rpmaHandlerObservations(ObservationRegistry observationRegistry,
            ObjectProvider<RpmaHandlerObservationConvention> convention,
            ObjectProvider<RpmaMessageObservationConvention> messageConvention) {
        return new RpmaHandlerObservations(observationRegistry, convention.getIfUnique(),
                messageConvention.getIfUnique());
    }
}

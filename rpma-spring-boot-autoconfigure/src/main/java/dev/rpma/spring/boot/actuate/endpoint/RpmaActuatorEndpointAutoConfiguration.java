package dev.rpma.spring.boot.actuate.endpoint;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;
import dev.rpma.server.RpmaServer;

/**
 * The {@code rpma} actuator endpoint, when actuator is present and the endpoint is available: its
 * access allowed and exposed through {@code management.endpoints.web.exposure.include} (or JMX).
 */
@AutoConfiguration(after = RpmaAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean(RpmaServer.class)
public final class RpmaActuatorEndpointAutoConfiguration {

    // on the method, not the class: the class's own conditions must not need actuator to be evaluated
    @Bean
    @ConditionalOnAvailableEndpoint(RpmaActuatorEndpoint.class)
    @ConditionalOnMissingBean
    RpmaActuatorEndpoint rpmaActuatorEndpoint(RpmaServer rpmaServer) {
        return new RpmaActuatorEndpoint(rpmaServer);
    }
}

package dev.rpma.spring.boot.actuate.health;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.context.annotation.Bean;

import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaServer;

/**
 * The {@code rpma} health contributor: one {@link RpmaEndpointHealthIndicator} per endpoint, by
 * endpoint name. Off with {@code management.health.rpma.enabled=false}.
 */
@AutoConfiguration(after = RpmaAutoConfiguration.class)
@ConditionalOnClass({ HealthContributor.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(RpmaServer.class)
public final class RpmaHealthContributorAutoConfiguration {

    // on the method, not the class: the class's own conditions must not need spring-boot-health to be evaluated
    @Bean
    @ConditionalOnEnabledHealthIndicator("rpma")
    @ConditionalOnMissingBean(name = { "rpmaHealthIndicator", "rpmaHealthContributor" })
    HealthContributor rpmaHealthContributor(RpmaServer rpmaServer) {
        // from the settings: the server listens only once the context has started
        Map<String, RpmaEndpointHealthIndicator> indicators = new LinkedHashMap<>();
        for (RpmaEndpointSettings endpoint : rpmaServer.settings().endpoints()) {
            indicators.put(endpoint.name(), new RpmaEndpointHealthIndicator(rpmaServer, endpoint));
        }
        return CompositeHealthContributor.fromMap(indicators);
    }
}

package dev.rpma.spring.boot.actuate.metrics;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;
import dev.rpma.server.RpmaServer;

/**
 * Micrometer metrics of the RDMA server ({@code rpma.*} meters), when Micrometer and a
 * {@link MeterRegistry} are present. The {@link RpmaServerMetrics} observer is picked up by
 * {@link RpmaAutoConfiguration} when it creates the server, so it sees every endpoint from its start.
 */
@AutoConfiguration(after = RpmaAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ RpmaServer.class, MeterRegistry.class })
public final class RpmaMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RpmaServerMetrics rpmaServerMetrics(MeterRegistry meterRegistry) {
        return new RpmaServerMetrics(meterRegistry);
    }
}

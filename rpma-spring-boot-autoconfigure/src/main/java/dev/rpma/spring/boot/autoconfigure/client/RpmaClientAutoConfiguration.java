package dev.rpma.spring.boot.autoconfigure.client;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

import dev.rpma.binding.Rpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientObserver;
import dev.rpma.client.RpmaRequestObserver;
import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;

/**
 * RDMA clients, when {@code rpma-client} is on the class path: {@link RpmaClients} to make clients
 * with the application's librpma, codecs, metrics and observations, and a client bean per
 * {@code rpma.client.servers.<name>}.
 */
@AutoConfiguration(after = RpmaAutoConfiguration.class,
        afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
                "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnClass({ RpmaClient.class, Rpma.class })
@EnableConfigurationProperties(RpmaClientProperties.class)
@Import(RpmaClientBeanRegistrar.class)
public final class RpmaClientAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RpmaClients rpmaClients(ObjectProvider<Rpma> rpma, ObjectProvider<RpmaMessageCodec> codecs,
            ObjectProvider<RpmaClientObserver> observer, ObjectProvider<RpmaRequestObserver> requestObserver,
            ObjectProvider<RpmaClients.Listener> listeners, ObjectProvider<RpmaServiceDiscovery> discovery,
            RpmaClientProperties properties) {
        return new RpmaClients(() -> rpma.getIfAvailable(Rpma::get), codecs.orderedStream().toList(),
                observer.getIfUnique(() -> RpmaClientObserver.NONE),
                requestObserver.getIfUnique(() -> RpmaRequestObserver.NONE), properties,
                listeners.orderedStream().toList(), discovery.getIfUnique());
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    @ConditionalOnBooleanProperty(name = "rpma.client.observation-enabled", matchIfMissing = true)
    static class RpmaClientObservationConfiguration {

        @Bean
        @ConditionalOnMissingBean
        RpmaClientObservations rpmaClientObservations(ObservationRegistry observationRegistry,
                ObjectProvider<RpmaClientObservationConvention> convention) {
            return new RpmaClientObservations(observationRegistry, convention.getIfUnique());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    static class RpmaClientMetricsConfiguration {

        /** Observed requests are timed by Micrometer's meter handler, from the observations: not twice. */
        @Bean
        @ConditionalOnMissingBean
        RpmaClientMetrics rpmaClientMetrics(MeterRegistry registry, ObjectProvider<RpmaClientObservations> observations) {
            return new RpmaClientMetrics(registry, observations.getIfAvailable() == null);
        }

        /**
         * A percentile histogram for {@code rpma.client.requests}, also when the timer comes from the
         * observations; first, so that
         * {@code management.metrics.distribution.percentiles-histogram.rpma.client.requests=false} still
         * turns it off.
         */
        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE)
        MeterFilter rpmaClientRequestsHistogram() {
            return new MeterFilter() {

                @Override
                public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                    if (id.getType() != Meter.Type.TIMER
                            || !DefaultRpmaClientObservationConvention.NAME.equals(id.getName())) {
                        return config;
                    }
                    return DistributionStatisticConfig.builder().percentilesHistogram(true).build().merge(config);
                }
            };
        }
    }
}

package dev.rpma.spring.boot.autoconfigure.client;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import dev.rpma.binding.Rpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientObserver;
import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;

/**
 * RDMA clients, when {@code rpma-client} is on the class path: {@link RpmaClients} to make clients
 * with the application's librpma, codecs and metrics, and a client bean per
 * {@code rpma.client.servers.<name>}.
 */
@AutoConfiguration(after = RpmaAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass({ RpmaClient.class, Rpma.class })
@EnableConfigurationProperties(RpmaClientProperties.class)
@Import(RpmaClientBeanRegistrar.class)
public final class RpmaClientAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RpmaClients rpmaClients(ObjectProvider<Rpma> rpma, ObjectProvider<RpmaMessageCodec> codecs,
            ObjectProvider<RpmaClientObserver> observer, ObjectProvider<RpmaClients.Listener> listeners,
            ObjectProvider<RpmaServiceDiscovery> discovery, RpmaClientProperties properties) {
        return new RpmaClients(() -> rpma.getIfAvailable(Rpma::get), codecs.orderedStream().toList(),
                observer.getIfUnique(() -> RpmaClientObserver.NONE), properties, listeners.orderedStream().toList(),
                discovery.getIfUnique());
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    static class RpmaClientMetricsConfiguration {

        @Bean
        @ConditionalOnMissingBean
        RpmaClientMetrics rpmaClientMetrics(MeterRegistry registry) {
            return new RpmaClientMetrics(registry);
        }
    }
}

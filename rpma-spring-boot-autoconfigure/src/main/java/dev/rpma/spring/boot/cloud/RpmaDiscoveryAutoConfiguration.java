package dev.rpma.spring.boot.cloud;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

import dev.rpma.client.RpmaClient;
import dev.rpma.server.RpmaServer;
import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;
import dev.rpma.spring.boot.autoconfigure.client.RpmaServiceDiscovery;

/**
 * Spring Cloud service discovery for RDMA, when Spring Cloud Commons is on the class path: the RDMA
 * server's endpoints in the service registration's metadata, and an {@link RpmaServiceDiscovery} for the
 * clients configured with a service id, through Spring Cloud LoadBalancer when it is there and the
 * {@link DiscoveryClient} otherwise.
 */
@AutoConfiguration(after = RpmaAutoConfiguration.class)
@ConditionalOnClass(DiscoveryClient.class)
public final class RpmaDiscoveryAutoConfiguration {

    @Bean
    @ConditionalOnBean(RpmaServer.class)
    RpmaRegistrationMetadata rpmaRegistrationMetadata(RpmaServer rpmaServer, BeanFactory beanFactory) {
        return new RpmaRegistrationMetadata(rpmaServer, beanFactory);
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(RpmaClient.class)
    static class RpmaServiceDiscoveryConfiguration {

        @Bean
        @ConditionalOnMissingBean
        RpmaServiceDiscovery rpmaServiceDiscovery(ObjectProvider<DiscoveryClient> discovery,
                ObjectProvider<ReactiveLoadBalancer.Factory<ServiceInstance>> balancers, ApplicationContext context) {
            // the balancers' answers are Reactor publishers: without Reactor there is no balancer to ask
            boolean reactor = ClassUtils.isPresent("reactor.core.publisher.Mono", context.getClassLoader());
            return new SpringCloudServiceDiscovery(discovery, reactor ? balancers : null);
        }
    }
}

package dev.rpma.spring.boot.cloud;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;

import dev.rpma.client.RpmaServerLocator;
import dev.rpma.spring.boot.autoconfigure.client.RpmaServiceDiscovery;

/**
 * A service's servers through Spring Cloud LoadBalancer when its factory is there (it may be turned off
 * with {@code spring.cloud.loadbalancer.enabled=false}), else in turn over the {@link DiscoveryClient}'s
 * instances.
 */
final class SpringCloudServiceDiscovery implements RpmaServiceDiscovery {

    private final ObjectProvider<DiscoveryClient> discovery;

    /** {@code null} without Reactor, which Spring Cloud LoadBalancer needs. */
    private final @Nullable ObjectProvider<ReactiveLoadBalancer.Factory<ServiceInstance>> balancers;

    SpringCloudServiceDiscovery(ObjectProvider<DiscoveryClient> discovery,
            @Nullable ObjectProvider<ReactiveLoadBalancer.Factory<ServiceInstance>> balancers) {
        this.discovery = discovery;
        this.balancers = balancers;
    }

    @Override
    public RpmaServerLocator locator(String serviceId, String endpoint, Duration timeout) {
        ReactiveLoadBalancer.Factory<ServiceInstance> factory = (this.balancers != null) ? this.balancers.getIfAvailable()
                : null;
        if (factory != null) {
            return new LoadBalancerServerLocator(factory.getInstance(serviceId), serviceId, endpoint, timeout);
        }
        DiscoveryClient client = this.discovery.getIfAvailable();
        if (client == null) {
            throw new IllegalStateException("RDMA clients of service '" + serviceId + "' need a DiscoveryClient bean;"
                    + " add a service registry's Spring Cloud starter");
        }
        return new DiscoveryClientServerLocator(client, serviceId, endpoint);
    }
}

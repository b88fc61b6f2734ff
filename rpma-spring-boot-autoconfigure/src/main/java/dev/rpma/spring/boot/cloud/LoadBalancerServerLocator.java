package dev.rpma.spring.boot.cloud;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import reactor.core.publisher.Mono;

import dev.rpma.client.RpmaServerAddress;
import dev.rpma.client.RpmaServerLocator;

/**
 * The instance Spring Cloud LoadBalancer chooses for each attempt (its configured algorithm, round robin
 * by default, over its instance list with its cache and filters), asked again when it chooses the
 * previous server or an instance that does not publish the endpoint.
 */
final class LoadBalancerServerLocator implements RpmaServerLocator {

    /**
     * Choices per attempt at most: a round robin over two instances gives the other one at the second;
     * a random choice among many rarely needs a third. The previous server is taken when nothing else
     * came up, rather than failing the attempt.
     */
    private static final int CHOICES = 3;

    private final ReactiveLoadBalancer<ServiceInstance> balancer;

    private final String serviceId;

    private final String endpoint;

    private final Duration timeout;

    LoadBalancerServerLocator(ReactiveLoadBalancer<ServiceInstance> balancer, String serviceId, String endpoint,
            Duration timeout) {
        this.balancer = balancer;
        this.serviceId = serviceId;
        this.endpoint = endpoint;
        this.timeout = timeout;
    }

    @Override
    public RpmaServerAddress next(@Nullable RpmaServerAddress previous) {
        RpmaServerAddress again = null;
        for (int i = 0; i < CHOICES; i++) {
            Response<ServiceInstance> response = Mono.from(this.balancer.choose()).block(this.timeout);
            if (response == null || !response.hasServer()) {
                break;
            }
            RpmaServerAddress server = RpmaServiceMetadata.addressOf(response.getServer(), this.endpoint);
            if (server != null && !server.equals(previous)) {
                return server;
            }
            if (server != null) {
                again = server;
            }
        }
        if (again != null) {
            return again;
        }
        throw DiscoveryClientServerLocator.noInstance(this.serviceId, this.endpoint, toString());
    }

    @Override
    public String toString() {
        return "service '" + this.serviceId + "' (endpoint '" + this.endpoint + "', load-balanced)";
    }
}

package dev.rpma.spring.boot.cloud;

import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.discovery.DiscoveryClient;

import dev.rpma.client.RpmaServerAddress;
import dev.rpma.client.RpmaServerLocator;
import dev.rpma.client.RpmaServerUnreachableException;

/**
 * The instances of a service that publish an endpoint, from the {@link DiscoveryClient} at each attempt,
 * in turn (round robin over them in address order), never the previous server when there is another.
 * Used without Spring Cloud LoadBalancer.
 */
final class DiscoveryClientServerLocator implements RpmaServerLocator {

    private static final Comparator<RpmaServerAddress> ORDER = Comparator.comparing(RpmaServerAddress::address)
        .thenComparingInt(RpmaServerAddress::port);

    private final DiscoveryClient discovery;

    private final String serviceId;

    private final String endpoint;

    private final AtomicInteger turn = new AtomicInteger();

    DiscoveryClientServerLocator(DiscoveryClient discovery, String serviceId, String endpoint) {
        this.discovery = discovery;
        this.serviceId = serviceId;
        this.endpoint = endpoint;
    }

    @Override
    public RpmaServerAddress next(@Nullable RpmaServerAddress previous) {
        List<RpmaServerAddress> servers = this.discovery.getInstances(this.serviceId).stream()
            .map((instance) -> RpmaServiceMetadata.addressOf(instance, this.endpoint))
            .filter(Objects::nonNull)
            .distinct()
            .sorted(ORDER)
            .toList();
        if (servers.isEmpty()) {
            throw noInstance(this.serviceId, this.endpoint, toString());
        }
        int start = Math.floorMod(this.turn.getAndIncrement(), servers.size());
        RpmaServerAddress chosen = servers.get(start);
        return (chosen.equals(previous) && servers.size() > 1) ? servers.get((start + 1) % servers.size()) : chosen;
    }

    static RpmaServerUnreachableException noInstance(String serviceId, String endpoint, String servers) {
        return new RpmaServerUnreachableException(servers, "no instance of service '" + serviceId
                + "' is registered with the metadata " + RpmaServiceMetadata.addressKey(endpoint) + " and "
                + RpmaServiceMetadata.portKey(endpoint) + " of endpoint '" + endpoint + "'", null);
    }

    @Override
    public String toString() {
        return "service '" + this.serviceId + "' (endpoint '" + this.endpoint + "')";
    }
}

package dev.rpma.spring.boot.autoconfigure.client;

import java.time.Duration;

import dev.rpma.client.RpmaServerLocator;

/**
 * Finds the servers of a client configured with {@code rpma.client.servers.<name>.service-id}: with
 * Spring Cloud Commons on the class path, its {@code DiscoveryClient} and, when present, Spring Cloud
 * LoadBalancer. An application bean of this type replaces that.
 */
@FunctionalInterface
public interface RpmaServiceDiscovery {

    /**
     * The servers of the instances of {@code serviceId} that publish {@code endpoint}.
     *
     * @param timeout the longest a connection attempt may wait for the locator's answer: the client's
     *     connect timeout
     */
    RpmaServerLocator locator(String serviceId, String endpoint, Duration timeout);
}

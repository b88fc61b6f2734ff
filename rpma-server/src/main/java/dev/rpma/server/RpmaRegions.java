package dev.rpma.server;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;

/**
 * The memory regions a server exposes ({@link RpmaRegionDefinition}): known from the server's
 * creation, so the application can fill a region ({@link #memory(String)}) before the server
 * listens; registered when it listens, on the peers of the endpoints that serve them; a connection
 * handler asks its request for a region's descriptor. Thread-safe.
 */
public final class RpmaRegions {

    private static final Logger logger = LoggerFactory.getLogger(RpmaRegions.class);

    private final Map<String, RpmaRegionDefinition> definitions = new LinkedHashMap<>();

    /** Registrations by region name, then by peer address; filled when the server listens. */
    private final Map<String, Map<String, Registration>> registered = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @throws IllegalArgumentException when two regions share a name, or one names an endpoint that is
     *     not among {@code endpoints}
     */
    RpmaRegions(List<RpmaRegionDefinition> definitions, List<RpmaEndpointSettings> endpoints) {
        for (RpmaRegionDefinition definition : definitions) {
            if (this.definitions.putIfAbsent(definition.name(), definition) != null) {
                throw new IllegalArgumentException("Two regions are named '" + definition.name() + "'");
            }
            for (String endpoint : definition.endpoints()) {
                if (endpoints.stream().noneMatch((settings) -> settings.name().equals(endpoint))) {
                    throw new IllegalArgumentException("Region '" + definition.name() + "' names endpoint '" + endpoint
                            + "', which is not configured");
                }
            }
        }
    }

    private record Registration(RpmaMemoryRegion region, byte[] descriptor) {
    }

    /**
     * Registers each region on the peer of every endpoint it serves; if one fails, those already
     * registered are deregistered before the exception leaves.
     */
    void register(List<RpmaEndpointSettings> endpoints, Map<String, RpmaPeer> peers) {
        try {
            for (RpmaRegionDefinition definition : this.definitions.values()) {
                Map<String, Registration> byAddress = new LinkedHashMap<>();
                MemoryUsage[] usages = definition.usages().toArray(MemoryUsage[]::new);
                try {
                    for (RpmaEndpointSettings endpoint : endpoints) {
                        if (definition.serves(endpoint.name()) && !byAddress.containsKey(endpoint.address())) {
                            RpmaMemoryRegion region = peers.get(endpoint.address()).register(definition.memory(), usages);
                            byAddress.put(endpoint.address(), new Registration(region, region.descriptor()));
                        }
                    }
                }
                finally {
                    // whole, once filled: the acceptors read it without a lock
                    this.registered.put(definition.name(), Map.copyOf(byAddress));
                }
            }
        }
        catch (RuntimeException ex) {
            deregister();
            throw ex;
        }
    }

    /** The names of the regions, in declaration order. */
    public Set<String> names() {
        return this.definitions.keySet();
    }

    /** A region's memory, to fill or read; the buffer the definition gave. */
    public ByteBuffer memory(String name) {
        return definition(name).memory();
    }

    public RpmaRegionDefinition definition(String name) {
        RpmaRegionDefinition definition = this.definitions.get(name);
        if (definition == null) {
            throw new IllegalArgumentException("No region is named '" + name + "'; the regions are " + names());
        }
        return definition;
    }

    /**
     * The descriptor ({@code rpma_mr_get_descriptor}, 21 bytes) of a region as registered for the
     * connections of {@code endpoint} on {@code address}.
     *
     * @throws IllegalArgumentException when there is no such region, or it does not serve that endpoint
     */
    byte[] descriptor(String name, String endpoint, String address) {
        RpmaRegionDefinition definition = definition(name);
        Map<String, Registration> byAddress = this.registered.get(name);
        Registration registration = (byAddress != null) ? byAddress.get(address) : null;
        if (!definition.serves(endpoint) || registration == null) {
            throw new IllegalArgumentException("Region '" + name + "' is not exposed to endpoint '" + endpoint
                    + "'; it serves " + definition.endpoints());
        }
        return registration.descriptor().clone();
    }

    /** Deregisters every region; after every connection that could reach them is deleted. Idempotent. */
    void deregister() {
        List<String> failures = new ArrayList<>();
        for (Map<String, Registration> byAddress : this.registered.values()) {
            for (Registration registration : byAddress.values()) {
                try {
                    registration.region().close();
                }
                catch (RuntimeException ex) {
                    failures.add(ex.getMessage());
                }
            }
        }
        this.registered.clear();
        if (!failures.isEmpty()) {
            logger.warn("Deregistering exposed memory failed: {}", failures);
        }
    }

    @Override
    public String toString() {
        return "RpmaRegions" + names();
    }

    /** A region's registration on the peer of {@code address}, or {@code null}; for tests. */
    @Nullable RpmaMemoryRegion registration(String name, String address) {
        Map<String, Registration> byAddress = this.registered.get(name);
        Registration registration = (byAddress != null) ? byAddress.get(address) : null;
        return (registration != null) ? registration.region() : null;
    }
}

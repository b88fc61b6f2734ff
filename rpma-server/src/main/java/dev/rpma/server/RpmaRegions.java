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

import dev.rpma.jna.MemoryUsage;
import dev.rpma.jna.RpmaMemoryRegion;
import dev.rpma.jna.RpmaPeer;

/**
 * The memory regions a server exposes ({@link RpmaRegionDefinition}), registered on the peers of the
 * endpoints that serve them. The application fills a region through {@link #memory(String)}; a
 * connection handler asks its request for the descriptor. Thread-safe.
 */
public final class RpmaRegions {

    private static final Logger logger = LoggerFactory.getLogger(RpmaRegions.class);

    private final Map<String, RpmaRegionDefinition> definitions;

    /** Registrations by region name, then by peer address. */
    private final Map<String, Map<String, Registration>> registered;

    private RpmaRegions(Map<String, RpmaRegionDefinition> definitions, Map<String, Map<String, Registration>> registered) {
        this.definitions = definitions;
        this.registered = registered;
    }

    private record Registration(RpmaMemoryRegion region, byte[] descriptor) {
    }

    /** No regions. */
    static RpmaRegions none() {
        return new RpmaRegions(Map.of(), Map.of());
    }

    /**
     * Registers each region on the peer of every endpoint it serves; if one fails, those already
     * registered are deregistered before the exception leaves.
     */
    static RpmaRegions register(List<RpmaRegionDefinition> definitions, List<RpmaEndpointSettings> endpoints,
            Map<String, RpmaPeer> peers) {
        Map<String, RpmaRegionDefinition> byName = new LinkedHashMap<>();
        Map<String, Map<String, Registration>> registered = new LinkedHashMap<>();
        RpmaRegions regions = new RpmaRegions(byName, registered);
        try {
            for (RpmaRegionDefinition definition : definitions) {
                if (byName.putIfAbsent(definition.name(), definition) != null) {
                    throw new IllegalArgumentException("Two regions are named '" + definition.name() + "'");
                }
                for (String endpoint : definition.endpoints()) {
                    if (endpoints.stream().noneMatch((settings) -> settings.name().equals(endpoint))) {
                        throw new IllegalArgumentException("Region '" + definition.name() + "' names endpoint '"
                                + endpoint + "', which is not configured");
                    }
                }
                Map<String, Registration> byAddress = new LinkedHashMap<>();
                registered.put(definition.name(), byAddress);
                MemoryUsage[] usages = definition.usages().toArray(MemoryUsage[]::new);
                for (RpmaEndpointSettings endpoint : endpoints) {
                    if (definition.serves(endpoint.name()) && !byAddress.containsKey(endpoint.address())) {
                        RpmaMemoryRegion region = peers.get(endpoint.address()).register(definition.memory(), usages);
                        byAddress.put(endpoint.address(), new Registration(region, region.descriptor()));
                    }
                }
            }
            return regions;
        }
        catch (RuntimeException ex) {
            regions.deregister();
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
        Registration registration = this.registered.get(name).get(address);
        if (!definition.serves(endpoint) || registration == null) {
            throw new IllegalArgumentException("Region '" + name + "' is not exposed to endpoint '" + endpoint
                    + "'; it serves " + definition.endpoints());
        }
        return registration.descriptor().clone();
    }

    /** Deregisters every region; after every connection that could reach them is deleted. */
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

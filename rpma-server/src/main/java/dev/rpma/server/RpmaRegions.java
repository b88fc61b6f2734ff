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

    /**
     * Registrations by region name, then by peer ({@link RpmaEndpointSettings#peerKey()}); filled when
     * the server listens.
     */
    private final Map<String, Map<String, Registration>> registered = new java.util.concurrent.ConcurrentHashMap<>();

    /** The peer of each endpoint, by endpoint name. */
    private final Map<String, String> peerOfEndpoint = new LinkedHashMap<>();

    /**
     * @throws IllegalArgumentException when two regions share a name, or one names an endpoint that is
     *     not among {@code endpoints}
     */
    RpmaRegions(List<RpmaRegionDefinition> definitions, List<RpmaEndpointSettings> endpoints) {
        endpoints.forEach((endpoint) -> this.peerOfEndpoint.put(endpoint.name(), endpoint.peerKey()));
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
     * Registers each region on the peer of every endpoint it serves, once per peer (an endpoint on a
     * peer of its own gets a registration, and keys, of its own); if one fails, those already
     * registered are deregistered before the exception leaves.
     *
     * @param peers by {@link RpmaEndpointSettings#peerKey()}
     */
    void register(List<RpmaEndpointSettings> endpoints, Map<String, RpmaPeer> peers) {
        try {
            for (RpmaRegionDefinition definition : this.definitions.values()) {
                Map<String, Registration> byPeer = new LinkedHashMap<>();
                MemoryUsage[] usages = definition.usages().toArray(MemoryUsage[]::new);
                try {
                    for (RpmaEndpointSettings endpoint : endpoints) {
                        String peer = endpoint.peerKey();
                        if (definition.serves(endpoint.name()) && !byPeer.containsKey(peer)) {
                            RpmaMemoryRegion region = peers.get(peer).register(definition.memory(), usages);
                            byPeer.put(peer, new Registration(region, region.descriptor()));
                        }
                    }
                }
                finally {
                    // whole, once filled: the acceptors read it without a lock
                    this.registered.put(definition.name(), Map.copyOf(byPeer));
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
     * connections of {@code endpoint}, on its peer.
     *
     * @throws IllegalArgumentException when there is no such region, or it does not serve that endpoint
     */
    byte[] descriptor(String name, String endpoint) {
        RpmaRegionDefinition definition = definition(name);
        Registration registration = registered(name, endpoint);
        if (!definition.serves(endpoint) || registration == null) {
            throw new IllegalArgumentException("Region '" + name + "' is not exposed to endpoint '" + endpoint
                    + "'; it serves " + definition.endpoints());
        }
        return registration.descriptor().clone();
    }

    /** Deregisters every region; after every connection that could reach them is deleted. Idempotent. */
    void deregister() {
        List<String> failures = new ArrayList<>();
        for (Map<String, Registration> byPeer : this.registered.values()) {
            for (Registration registration : byPeer.values()) {
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

    /** A region's registration for the connections of {@code endpoint}, or {@code null}; for tests. */
    @Nullable RpmaMemoryRegion registration(String name, String endpoint) {
        Registration registration = registered(name, endpoint);
        return (registration != null) ? registration.region() : null;
    }

    private @Nullable Registration registered(String name, String endpoint) {
        Map<String, Registration> byPeer = this.registered.get(name);
        String peer = this.peerOfEndpoint.get(endpoint);
        return (byPeer != null && peer != null) ? byPeer.get(peer) : null;
    }
}

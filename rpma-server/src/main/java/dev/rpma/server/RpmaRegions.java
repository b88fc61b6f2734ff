package dev.rpma.server;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.Errno;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.RpmaPeerConfig;

/**
 * The memory regions a server exposes ({@link RpmaRegionDefinition}): known from the server's
 * creation, so the application can fill a region ({@link #memory(String)}), or find what a file
 * kept from the last run, before the server listens; registered when it listens, on the peers of
 * the endpoints that serve them; a connection handler asks its request for a region's descriptors.
 * At the stop, after every connection is deleted, the regions are deregistered and the mapped ones
 * written back whole ({@link #makeDurable}). Thread-safe.
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

    /** The descriptor of each region's peer configuration ({@code rpma_peer_cfg_get_descriptor}); filled when the server listens. */
    private final Map<String, byte[]> peerConfigDescriptors = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Registers each region on the peer of every endpoint it serves, once per peer (an endpoint on a
     * peer of its own gets a registration, and keys, of its own); if one fails, those already
     * registered are deregistered before the exception leaves. The peer configuration a region
     * declares is needed only as its descriptor, so it is freed at once.
     *
     * @param peers by {@link RpmaEndpointSettings#peerKey()}
     */
    void register(Rpma rpma, List<RpmaEndpointSettings> endpoints, Map<String, RpmaPeer> peers) {
        try {
            for (RpmaRegionDefinition definition : this.definitions.values()) {
                try (RpmaPeerConfig config = rpma.newPeerConfig()) {
                    this.peerConfigDescriptors.put(definition.name(),
                            config.directWriteToPmem(definition.directWriteToPmem()).descriptor());
                }
                Map<String, Registration> byPeer = new LinkedHashMap<>();
                MemoryUsage[] usages = registeredUsages(definition);
                try {
                    for (RpmaEndpointSettings endpoint : endpoints) {
                        String peer = endpoint.peerKey();
                        if (definition.serves(endpoint.name()) && !byPeer.containsKey(peer)) {
                            RpmaMemoryRegion region = register(definition, peers.get(peer), usages);
                            byPeer.put(peer, new Registration(region, region.descriptor()));
                        }
                    }
                }
                finally {
                    // whole, once filled: the acceptors read it without a lock
                    this.registered.put(definition.name(), Map.copyOf(byPeer));
                }
                logger.info("RDMA region '{}': {} bytes of {}, usage {}{}, registered on {} device(s)", definition.name(),
                        definition.memory().capacity(), definition.store(), definition.usages(),
                        definition.directWriteToPmem() ? ", direct write to PMem declared" : "", byPeer.size());
            }
        }
        catch (RuntimeException ex) {
            deregister();
            throw ex;
        }
    }

    /**
     * Registers each region anew on {@code peer}, for the endpoints of {@code peerKey} it serves: after
     * that peer's device was lost and came back. If one fails, those registered here are deregistered.
     */
    void registerOn(String peerKey, RpmaPeer peer) {
        try {
            for (RpmaRegionDefinition definition : this.definitions.values()) {
                boolean serves = this.peerOfEndpoint.entrySet().stream()
                    .anyMatch((entry) -> entry.getValue().equals(peerKey) && definition.serves(entry.getKey()));
                if (serves) {
                    RpmaMemoryRegion region = register(definition, peer, registeredUsages(definition));
                    this.registered.merge(definition.name(), Map.of(peerKey, new Registration(region, region.descriptor())),
                            (old, added) -> {
                                Map<String, Registration> both = new LinkedHashMap<>(old);
                                both.putAll(added);
                                return Map.copyOf(both);
                            });
                }
            }
        }
        catch (RuntimeException ex) {
            deregisterOn(peerKey);
            throw ex;
        }
    }

    /**
     * Deregisters the regions registered on the peer of {@code peerKey}, whose device was lost, once
     * every connection that could reach them is deleted. The others stay.
     */
    void deregisterOn(String peerKey) {
        for (String name : this.definitions.keySet()) {
            Map<String, Registration> byPeer = this.registered.get(name);
            Registration registration = (byPeer != null) ? byPeer.get(peerKey) : null;
            if (registration == null) {
                continue;
            }
            Map<String, Registration> rest = new LinkedHashMap<>(byPeer);
            rest.remove(peerKey);
            this.registered.put(name, Map.copyOf(rest));
            try {
                registration.region().close();
            }
            catch (RuntimeException ex) {
                logger.warn("Deregistering region '{}' from a lost device failed: {}", name, ex.getMessage());
            }
        }
    }

    /**
     * The usages a region is registered with: those it declares, and {@link MemoryUsage#READ_DST} with
     * {@link MemoryUsage#WRITE_DST}, so that a session's {@link RpmaSession#read} can land in it. READ_DST
     * is the server's own access, {@code IBV_ACCESS_LOCAL_WRITE}, which WRITE_DST includes already
     * (with {@code IBV_ACCESS_REMOTE_WRITE}): added there, it grants peers nothing on any transport.
     * Added to a region without WRITE_DST it would: librpma maps READ_DST to remote write as well on
     * iWARP, whose read is a write from the peer; and local write cannot pin read-only memory.
     */
    private static MemoryUsage[] registeredUsages(RpmaRegionDefinition definition) {
        Set<MemoryUsage> usages = EnumSet.copyOf(definition.usages());
        if (usages.contains(MemoryUsage.WRITE_DST)) {
            usages.add(MemoryUsage.READ_DST);
        }
        return usages.toArray(MemoryUsage[]::new);
    }

    /**
     * {@code rpma_mr_reg}; a file on a DAX file system that the device refuses gets an exception
     * that says why: the kernel does not pin file system DAX pages for long, so only a device with
     * on-demand paging (librpma retries with ODP when the peer has it) can register them (measured
     * with soft-RoCE on Linux 6.1: {@code EOPNOTSUPP}, for MAP_SYNC and plain shared mappings alike).
     */
    private static RpmaMemoryRegion register(RpmaRegionDefinition definition, RpmaPeer peer, MemoryUsage[] usages) {
        try {
            return peer.register(definition.memory(), usages);
        }
        catch (RpmaException ex) {
            if (definition.store().kind() == RpmaBackingStore.Kind.DAX && ex.errno() == Errno.EOPNOTSUPP
                    && !definition.store().deviceDax()) {
                throw new RpmaRegionStoreException(definition.store().path().orElseThrow(), RpmaBackingStore.Kind.DAX,
                        "the RDMA device of " + peer.address() + " cannot register file system DAX memory (rpma_mr_reg: "
                        + Errno.name(ex.errno()) + "): Linux pins such pages only for devices with on-demand paging"
                        + " (ODP), which this one lacks (soft-RoCE has none). Use a device with ODP, or a device DAX"
                        + " (/dev/daxX.Y)", ex);
            }
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

    /**
     * The registration of region {@code name} for the connections of {@code endpoint}, checked as the
     * destination of a session's read of {@code length} bytes at {@code offset}.
     *
     * @throws IllegalArgumentException when there is no such region, it does not serve that endpoint,
     *     it is not registered as a read destination (it declares no WRITE_DST), or the range is
     *     outside it
     */
    RpmaMemoryRegion readDestination(String name, String endpoint, int offset, int length) {
        RpmaRegionDefinition definition = definition(name);
        Registration registration = registered(name, endpoint);
        if (!definition.serves(endpoint) || registration == null) {
            throw new IllegalArgumentException("Region '" + name + "' is not exposed to endpoint '" + endpoint
                    + "'; it serves " + (definition.endpoints().isEmpty() ? "every endpoint" : definition.endpoints())
                    + ": read into a region that lists the endpoint");
        }
        if (!definition.usages().contains(MemoryUsage.WRITE_DST)) {
            throw new IllegalArgumentException("Region '" + name + "' declares " + definition.usages() + ", no"
                    + " WRITE_DST: only a region that declares it is registered as a read destination (READ_DST)."
                    + " Read into a write-dst region");
        }
        int capacity = definition.memory().capacity();
        if (offset < 0 || offset > capacity - length) {
            throw new IllegalArgumentException("A read of " + length + " bytes at offset " + offset + " is outside region '"
                    + name + "' of " + capacity + " bytes");
        }
        return registration.region();
    }

    /**
     * What librpma's examples 04 and 05 send in the accept: {@code struct common_data} with the
     * region's descriptor (for {@code endpoint}, on its peer), data at offset
     * {@code dataOffset}, and the descriptor of the peer configuration the region declares, from
     * which a client learns whether it may flush with {@code RPMA_FLUSH_TYPE_PERSISTENT}.
     *
     * @throws IllegalArgumentException when there is no such region, or it does not serve that endpoint
     */
    RpmaCommonData commonData(String name, int dataOffset, String endpoint) {
        byte[] descriptor = descriptor(name, endpoint);
        if (dataOffset >= definition(name).memory().capacity()) {
            throw new IllegalArgumentException("Data offset " + dataOffset + " is outside region '" + name + "' of "
                    + definition(name).memory().capacity() + " bytes");
        }
        return new RpmaCommonData(dataOffset, descriptor, this.peerConfigDescriptors.get(name).clone());
    }

    /**
     * Makes {@code length} bytes of region {@code name} from {@code index} durable
     * ({@link RpmaBackingStore#makeDurable}): once this returns, the range of a DAX store is in
     * persistent memory and that of a file store on its disk (both survive a crash of the machine);
     * on process memory it does nothing, and returns {@code false}. A message handler calls it before it
     * replies that a client's write is durable, as librpma's example 09 does. Blocks while the
     * kernel writes: call it from a message handler dispatched to a pool if the ranges are large.
     *
     * @return whether the store can be made durable at all (not process memory)
     * @throws IllegalArgumentException when no region has that name
     * @throws IndexOutOfBoundsException when the range is outside the region
     */
    public boolean makeDurable(String name, int index, int length) {
        RpmaBackingStore store = definition(name).store();
        store.makeDurable(index, length);
        return store.kind() != RpmaBackingStore.Kind.VOLATILE;
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
        this.peerConfigDescriptors.clear();
        // no device writes into them any more: what clients wrote and never had made durable is written back now
        for (RpmaRegionDefinition definition : this.definitions.values()) {
            try {
                definition.store().makeDurable(0, definition.memory().capacity());
            }
            catch (RuntimeException ex) {
                failures.add("writing back " + definition.name() + ": " + ex);
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

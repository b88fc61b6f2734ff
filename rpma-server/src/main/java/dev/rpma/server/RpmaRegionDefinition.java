package dev.rpma.server;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

import dev.rpma.binding.MemoryUsage;

/**
 * Memory the server exposes to its clients for one-sided {@code rpma_read}, {@code rpma_write} and
 * {@code rpma_flush}: registered once when the server starts, on the peer of every endpoint it
 * serves, with exactly the usages declared; deregistered when the server stops, after every
 * connection that could reach it is deleted and before the peer. A connection handler hands its
 * descriptor, and that of the peer configuration the region declares, to a client in the accept's
 * private data ({@link RpmaIncomingRequest#commonData(String)}).
 *
 * <p>A definition refuses to promise more durability than its store gives:
 * {@link MemoryUsage#FLUSH_TYPE_PERSISTENT} and a direct write to PMem tell a client that data is
 * persistent once a flush made it reach the memory, which holds only for memory mapped with
 * {@code MAP_SYNC} ({@link RpmaBackingStore.Kind#DAX}). Whether the platform also keeps the RDMA
 * write out of a volatile cache on the way (DDIO off, or eADR) is for the operator to know: the
 * starter cannot see it.
 *
 * @param name how handlers ask for it
 * @param store the memory, whole (index 0 to its capacity), and where it lives
 * @param usages what clients may do with it: {@link MemoryUsage#READ_SRC}, {@link MemoryUsage#WRITE_DST},
 *     {@link MemoryUsage#FLUSH_TYPE_VISIBILITY}, {@link MemoryUsage#FLUSH_TYPE_PERSISTENT}
 * @param endpoints the endpoints whose connections may reach it; empty: all
 * @param directWriteToPmem what the peer configuration sent with the region declares
 *     ({@code rpma_peer_cfg_set_direct_write_to_pmem}): whether a client may flush it with
 *     {@code RPMA_FLUSH_TYPE_PERSISTENT}
 */
public record RpmaRegionDefinition(String name, RpmaBackingStore store, Set<MemoryUsage> usages, Set<String> endpoints,
        boolean directWriteToPmem) {

    /** What a client can be allowed to do with exposed memory. */
    public static final Set<MemoryUsage> REMOTE_USAGES = EnumSet.of(MemoryUsage.READ_SRC, MemoryUsage.WRITE_DST,
            MemoryUsage.FLUSH_TYPE_VISIBILITY, MemoryUsage.FLUSH_TYPE_PERSISTENT);

    /**
     * @throws IllegalArgumentException when the memory is not native or empty, a usage is not for
     *     exposed memory, or the definition claims persistence its store does not give
     */
    public RpmaRegionDefinition {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(store, "store");
        if (store.memory().capacity() == 0) {
            throw new IllegalArgumentException("Region '" + name + "' is empty: give it at least one byte");
        }
        if (usages.isEmpty()) {
            throw new IllegalArgumentException("Region '" + name + "' needs at least one usage, e.g. READ_SRC");
        }
        for (MemoryUsage usage : usages) {
            if (!REMOTE_USAGES.contains(usage)) {
                throw new IllegalArgumentException("Region '" + name + "' declares usage " + usage + ", which is not for"
                        + " exposed memory; choose from " + REMOTE_USAGES);
            }
        }
        if (!store.persistentOnArrival()) {
            if (usages.contains(MemoryUsage.FLUSH_TYPE_PERSISTENT)) {
                throw new IllegalArgumentException("Region '" + name + "' declares FLUSH_TYPE_PERSISTENT, but its memory ("
                        + store + ") is not persistent memory mapped with MAP_SYNC: a client's persistent flush would"
                        + " return before the data is durable. Use a dax store, or FLUSH_TYPE_VISIBILITY and make the"
                        + " data durable on the server (RpmaRegions.makeDurable)");
            }
            if (directWriteToPmem) {
                throw new IllegalArgumentException("Region '" + name + "' declares direct write to PMem, but its memory ("
                        + store + ") is not persistent memory mapped with MAP_SYNC. Use a dax store, or leave"
                        + " direct-write-to-pmem off");
            }
        }
        usages = Set.copyOf(usages);
        endpoints = Set.copyOf(endpoints);
    }

    /** Process memory the application allocated, no direct write to PMem. */
    public RpmaRegionDefinition(String name, ByteBuffer memory, Set<MemoryUsage> usages, Set<String> endpoints) {
        this(name, RpmaBackingStore.of(memory), usages, endpoints, false);
    }

    /** A region readable by the clients of every endpoint: the least a client can be given. */
    public static RpmaRegionDefinition readOnly(String name, ByteBuffer memory) {
        return new RpmaRegionDefinition(name, memory, EnumSet.of(MemoryUsage.READ_SRC), Set.of());
    }

    /** The region's memory: its store's buffer. */
    public ByteBuffer memory() {
        return this.store.memory();
    }

    /** Whether connections of {@code endpoint} may reach it. */
    public boolean serves(String endpoint) {
        return this.endpoints.isEmpty() || this.endpoints.contains(endpoint);
    }
}

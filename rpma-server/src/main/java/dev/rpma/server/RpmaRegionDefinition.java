package dev.rpma.server;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

import dev.rpma.binding.MemoryUsage;

/**
 * Memory the server exposes to its clients for one-sided {@code rpma_read} and {@code rpma_write}:
 * registered once when the server starts, on the peer of every endpoint it serves, with exactly the
 * usages declared; deregistered when the server stops, after every connection that could reach it
 * is deleted and before the peer. A connection handler hands its descriptor to a client in the
 * accept's private data ({@link RpmaIncomingRequest#regionDescriptor(String)}, {@link RpmaCommonData}).
 *
 * @param name how handlers ask for it
 * @param memory a direct buffer, whole (index 0 to its capacity); the application fills it
 * @param usages what clients may do with it: {@link MemoryUsage#READ_SRC}, {@link MemoryUsage#WRITE_DST},
 *     {@link MemoryUsage#FLUSH_TYPE_VISIBILITY}, {@link MemoryUsage#FLUSH_TYPE_PERSISTENT}
 * @param endpoints the endpoints whose connections may reach it; empty: all
 */
public record RpmaRegionDefinition(String name, ByteBuffer memory, Set<MemoryUsage> usages, Set<String> endpoints) {

    /** What a client can be allowed to do with exposed memory. */
    public static final Set<MemoryUsage> REMOTE_USAGES = EnumSet.of(MemoryUsage.READ_SRC, MemoryUsage.WRITE_DST,
            MemoryUsage.FLUSH_TYPE_VISIBILITY, MemoryUsage.FLUSH_TYPE_PERSISTENT);

    public RpmaRegionDefinition {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(memory, "memory");
        if (!memory.isDirect()) {
            throw new IllegalArgumentException("Region '" + name + "' needs native memory: a direct ByteBuffer"
                    + " (ByteBuffer.allocateDirect), not a heap buffer");
        }
        if (memory.capacity() == 0) {
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
        usages = Set.copyOf(usages);
        endpoints = Set.copyOf(endpoints);
    }

    /** A region readable by the clients of every endpoint: the least a client can be given. */
    public static RpmaRegionDefinition readOnly(String name, ByteBuffer memory) {
        return new RpmaRegionDefinition(name, memory, EnumSet.of(MemoryUsage.READ_SRC), Set.of());
    }

    /** Whether connections of {@code endpoint} may reach it. */
    public boolean serves(String endpoint) {
        return this.endpoints.isEmpty() || this.endpoints.contains(endpoint);
    }
}

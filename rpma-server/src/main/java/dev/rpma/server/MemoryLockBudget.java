package dev.rpma.server;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.io.MemoryLockLimit;

/**
 * The memory a server's configuration registers, which the kernel pins and counts against the
 * memory-lock limit, worked out from the settings before anything is registered: each region once
 * per peer that serves it, the slots of each shared receive queue (one per endpoint and event loop),
 * and the sessions' slots, which an endpoint registers a chunk of {@value BufferPool#BLOCKS_PER_CHUNK}
 * sessions at a time. What the server needs to start is the regions, the shared queues and each
 * data-path endpoint's first chunk (without it no session can be served); what it needs at its
 * connection limits is every chunk besides.
 *
 * <p>A registration pins whole pages, one more than its size rounded up, since a direct buffer does
 * not start on a page boundary ({@link MemoryLockLimit#pinnedBytes}). The queues the provider itself
 * creates per connection are not counted: on hardware whose queues live in user memory they pin some
 * more.
 */
final class MemoryLockBudget {

    private static final Logger logger = LoggerFactory.getLogger(RpmaServer.class);

    /** One thing the server registers, and the bytes it pins. */
    record Need(String what, long bytes) {

        @Override
        public String toString() {
            return this.what + " " + MemoryLockLimit.size(this.bytes);
        }
    }

    private final MemoryLockLimit limit;

    private final List<Need> atStart = new ArrayList<>();

    /** What the chunks past each endpoint's first pin when every endpoint is at its connection limit. */
    private final List<Need> atLimits = new ArrayList<>();

    private MemoryLockBudget(MemoryLockLimit limit) {
        this.limit = limit;
    }

    /**
     * @param hasDataPath whether an endpoint (by name) has message handlers, and so slots
     */
    static MemoryLockBudget of(RpmaServerSettings settings, Predicate<String> hasDataPath, MemoryLockLimit limit) {
        MemoryLockBudget budget = new MemoryLockBudget(limit);
        for (RpmaRegionDefinition region : settings.regions()) {
            Set<String> peers = new LinkedHashSet<>();
            settings.endpoints().stream().filter((endpoint) -> region.serves(endpoint.name()))
                .forEach((endpoint) -> peers.add(endpoint.peerKey()));
            for (String peer : peers) {
                budget.atStart.add(new Need("region '" + region.name() + "' on the peer of " + peer,
                        limit.pinnedBytes(region.memory().capacity())));
            }
        }
        for (RpmaEndpointSettings endpoint : settings.endpoints()) {
            if (hasDataPath.test(endpoint.name())) {
                budget.addSlots(endpoint, settings.eventLoops());
            }
        }
        return budget;
    }

    private void addSlots(RpmaEndpointSettings endpoint, int loops) {
        RpmaEndpointSettings.Messages messages = endpoint.messages();
        String name = "endpoint '" + endpoint.name() + "'";
        if (messages.sharesReceives()) {
            int slot = BufferPool.alignedSlotSize(messages.maxMessageSize());
            long queue = this.limit.pinnedBytes(BufferPool.chunkRegistration(slot, messages.sharedReceiveSlots(), 1));
            this.atStart.add(new Need("the shared receive queues of " + name + " (" + loops + ")", queue * loops));
        }
        int slot = BufferPool.alignedSlotSize(slotSize(messages));
        int receiveSlots = messages.sharesReceives() ? 0 : messages.receiveSlots();
        long chunk = this.limit.pinnedBytes(BufferPool.chunkRegistration(slot, receiveSlots,
                BufferPool.BLOCKS_PER_CHUNK))
                + this.limit.pinnedBytes(BufferPool.chunkRegistration(slot, messages.sendSlots(),
                        BufferPool.BLOCKS_PER_CHUNK));
        this.atStart.add(new Need("the first slots of " + name + " (" + BufferPool.BLOCKS_PER_CHUNK + " sessions)",
                chunk));
        int perChunk = BufferPool.BLOCKS_PER_CHUNK;
        int chunks = (endpoint.limits().maxConnections() + perChunk - 1) / perChunk;
        if (chunks > 1) {
            this.atLimits.add(new Need("the slots of " + name + " at " + endpoint.limits().maxConnections()
                    + " connections", chunk * (chunks - 1)));
        }
    }

    /** The bytes of a session's slot on an endpoint: the largest message, with the framing header in framed mode. */
    static int slotSize(RpmaEndpointSettings.Messages messages) {
        return (messages.mode() == RpmaWireMode.RAW) ? messages.maxMessageSize()
                : FramedWire.slotSize(messages.maxMessageSize());
    }

    MemoryLockLimit limit() {
        return this.limit;
    }

    /** What the server registers to start and serve its first sessions. */
    List<Need> atStart() {
        return List.copyOf(this.atStart);
    }

    long startBytes() {
        return sum(this.atStart);
    }

    /** What it registers with every endpoint at its connection limit. */
    long limitsBytes() {
        return startBytes() + sum(this.atLimits);
    }

    /**
     * Fails when the limit is smaller than what the server needs to start; logs a warning when it is
     * smaller than what it needs at its connection limits (the sessions past it are rejected as
     * capacity).
     *
     * @throws RpmaMemoryLockException when the server cannot start under the limit
     */
    void check() {
        long start = startBytes();
        if (!this.limit.allows(start)) {
            throw new RpmaMemoryLockException(this.limit, start, atStart(), null);
        }
        long full = limitsBytes();
        if (!this.limit.allows(full)) {
            logger.warn("RDMA server: at its connection limits its registered memory pins {} ({}), more than the {}"
                    + " this process may lock (RLIMIT_MEMLOCK); sessions past what fits are rejected as 'capacity'. {}",
                    MemoryLockLimit.size(full), this.atLimits, this.limit.describe(),
                    dev.rpma.binding.RpmaFailureKind.MEMORY_LOCK_ADVICE + ", or lower limits.max-connections");
        }
        else {
            logger.debug("RDMA server: its registered memory pins {} at start and {} at its connection limits; the"
                    + " memory-lock limit is {}", MemoryLockLimit.size(start), MemoryLockLimit.size(full),
                    this.limit.describe());
        }
    }

    private static long sum(List<Need> needs) {
        return needs.stream().mapToLong(Need::bytes).sum();
    }
}

package dev.rpma.server;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.jna.MemoryUsage;
import dev.rpma.jna.RpmaMemoryRegion;
import dev.rpma.jna.RpmaPeer;
import dev.rpma.jna.raw.NativeMemory;

/**
 * The registered memory of one endpoint's sessions: each session takes a {@link Block} of receive
 * and send slots, and blocks are cut from chunks of {@value #BLOCKS_PER_CHUNK} that are registered
 * as one memory region each, when the sessions need them, not one region per buffer or per session
 * ({@code rpma_mr_reg} is a system call that pins the pages, and not thread-safe in librpma). A
 * block goes back to the pool only after its session's connection is deleted, so the device never
 * writes into a slot that another session uses; chunks are deregistered when the endpoint stops.
 *
 * <p>Thread-safe: the acceptor takes blocks, event loops give them back.
 */
final class BufferPool {

    private static final Logger logger = LoggerFactory.getLogger(BufferPool.class);

    /** Sessions one registered chunk serves: memory grows in steps of this many sessions. */
    static final int BLOCKS_PER_CHUNK = 16;

    /** Slots start on cache lines. */
    private static final int ALIGNMENT = 64;

    private final RpmaPeer peer;

    private final int slotSize;

    /** The largest message: what a receive is posted for, so that the device refuses a longer one. */
    private final int receiveLength;

    private final int receiveSlots;

    private final int sendSlots;

    private final int payloadOffset;

    private final List<RpmaMemoryRegion> chunks = new ArrayList<>();

    private final ArrayDeque<Block> free = new ArrayDeque<>();

    private boolean closed;

    /**
     * @param slotSize bytes of the largest message (a slot is that, rounded up to a cache line)
     * @param payloadOffset where a message's payload starts in its slot (after the framing header)
     */
    BufferPool(RpmaPeer peer, int slotSize, int payloadOffset, int receiveSlots, int sendSlots) {
        this.peer = peer;
        this.slotSize = (slotSize + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
        this.receiveLength = slotSize;
        this.payloadOffset = payloadOffset;
        this.receiveSlots = receiveSlots;
        this.sendSlots = sendSlots;
    }

    int slotSize() {
        return this.slotSize;
    }

    int blockSize() {
        return this.slotSize * (this.receiveSlots + this.sendSlots);
    }

    /**
     * A block for a new session; registers a chunk when none is free.
     *
     * @throws dev.rpma.jna.RpmaException when registering fails (e.g. {@code ENOMEM} past the memlock limit)
     */
    synchronized Block take() {
        if (this.closed) {
            throw new IllegalStateException("The endpoint's buffers are released: it is stopping");
        }
        Block block = this.free.poll();
        if (block == null) {
            addChunk();
            block = this.free.poll();
        }
        return block;
    }

    /** Gives a block back; its session's connection is deleted. */
    synchronized void give(Block block) {
        if (!this.closed) {
            this.free.push(block);
        }
    }

    private void addChunk() {
        long bytes = (long) blockSize() * BLOCKS_PER_CHUNK;
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("A chunk of " + BLOCKS_PER_CHUNK + " sessions' slots would take " + bytes
                    + " bytes; lower receive-slots, send-slots or max-message-size");
        }
        ByteBuffer memory = NativeMemory.allocate((int) bytes);
        RpmaMemoryRegion region = this.peer.register(memory, MemoryUsage.RECV, MemoryUsage.SEND);
        this.chunks.add(region);
        for (int i = BLOCKS_PER_CHUNK - 1; i >= 0; i--) {
            this.free.push(new Block(memory, region, i * blockSize()));
        }
    }

    /** Bytes registered. */
    synchronized long registeredBytes() {
        return (long) this.chunks.size() * blockSize() * BLOCKS_PER_CHUNK;
    }

    /** Deregisters every chunk; once the endpoint's every session is deleted. Idempotent. */
    synchronized void close() {
        if (this.closed) {
            return;
        }
        this.closed = true;
        this.free.clear();
        for (RpmaMemoryRegion chunk : this.chunks) {
            try {
                chunk.close();
            }
            catch (RuntimeException ex) {
                logger.warn("Deregistering the sessions' buffers failed: {}", ex.getMessage());
            }
        }
        this.chunks.clear();
    }

    /**
     * One session's slots in a registered chunk, with views of each made once and reused by every
     * session that takes the block: receives from index 0, sends after them.
     */
    final class Block {

        final RpmaMemoryRegion region;

        /** Offset of the first slot in the region. */
        final int offset;

        /** Whole receive slots, read-only: the framing header is read here. */
        final ByteBuffer[] receiveFrames;

        /** Receive payloads from position 0, read-only: what a handler gets. */
        final ByteBuffer[] receivePayloads;

        /** Whole send slots: the framing header is written here. */
        final ByteBuffer[] sendFrames;

        /** Send payloads from position 0: what {@link RpmaSession#newMessage()} hands out. */
        final ByteBuffer[] sendPayloads;

        private Block(ByteBuffer memory, RpmaMemoryRegion region, int offset) {
            this.region = region;
            this.offset = offset;
            int size = BufferPool.this.slotSize;
            int payload = BufferPool.this.payloadOffset;
            this.receiveFrames = new ByteBuffer[BufferPool.this.receiveSlots];
            this.receivePayloads = new ByteBuffer[BufferPool.this.receiveSlots];
            for (int i = 0; i < this.receiveFrames.length; i++) {
                ByteBuffer slot = memory.slice(offset + i * size, size).order(memory.order());
                this.receiveFrames[i] = slot.asReadOnlyBuffer().order(memory.order());
                this.receivePayloads[i] = slot.slice(payload, size - payload).asReadOnlyBuffer().order(memory.order());
            }
            this.sendFrames = new ByteBuffer[BufferPool.this.sendSlots];
            this.sendPayloads = new ByteBuffer[BufferPool.this.sendSlots];
            for (int i = 0; i < this.sendFrames.length; i++) {
                ByteBuffer slot = memory.slice(offset + (BufferPool.this.receiveSlots + i) * size, size)
                    .order(memory.order());
                this.sendFrames[i] = slot;
                this.sendPayloads[i] = slot.slice(payload, size - payload).order(memory.order());
            }
        }

        /** Offset of receive slot {@code index} in {@link #region}. */
        long receiveOffset(int index) {
            return this.offset + (long) index * BufferPool.this.slotSize;
        }

        /** Offset of send slot {@code index} in {@link #region}. */
        long sendOffset(int index) {
            return this.offset + (long) (BufferPool.this.receiveSlots + index) * BufferPool.this.slotSize;
        }

        int slotSize() {
            return BufferPool.this.slotSize;
        }

        /** Bytes a receive is posted for: the largest message, not the whole slot. */
        int receiveLength() {
            return BufferPool.this.receiveLength;
        }

        BufferPool pool() {
            return BufferPool.this;
        }
    }
}

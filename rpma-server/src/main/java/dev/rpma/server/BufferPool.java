package dev.rpma.server;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.internal.NativeMemory;

/**
 * The registered memory of one endpoint's sessions: each session takes a {@link Block} of receive
 * and send slots, and blocks are cut from chunks of {@value #BLOCKS_PER_CHUNK} sessions' slots,
 * registered when the sessions need them, not per buffer or per session ({@code rpma_mr_reg} is a
 * system call that pins the pages, and not thread-safe in librpma). A chunk is two regions, each with
 * only the access it needs: the receive slots {@code RECV} (the device writes them), the send slots
 * {@code SEND} (it only reads them). A block goes back to the pool only after its
 * session's connection is deleted, so the device never writes into a slot that another session
 * uses; chunks are deregistered when the endpoint stops. A pool of blocks without send slots, one
 * per chunk, holds the slots of a shared receive queue ({@link SharedReceives}); sessions that
 * receive through one take blocks without receive slots.
 *
 * <p>Thread-safe: the acceptor takes blocks, event loops give them back.
 */
final class BufferPool {

    private static final Logger logger = LoggerFactory.getLogger(BufferPool.class);

    /** Sessions one registered chunk serves: memory grows in steps of this many sessions. */
    static final int BLOCKS_PER_CHUNK = 16;

    private final int blocksPerChunk;

    /** Slots start on cache lines. */
    private static final int ALIGNMENT = 64;

    private final RpmaPeer peer;

    private final int slotSize;

    /** The largest message: what a receive is posted for, so that the device refuses a longer one. */
    private final int receiveLength;

    private final int receiveSlots;

    private final int sendSlots;

    private final int payloadOffset;

    /** The chunks' registrations, two per chunk (receive slots, send slots) where both have slots. */
    private final List<RpmaMemoryRegion> regions = new ArrayList<>();

    private final ArrayDeque<Block> free = new ArrayDeque<>();

    private boolean closed;

    /**
     * @param slotSize bytes of the largest message (a slot is that, rounded up to a cache line)
     * @param payloadOffset where a message's payload starts in its slot (after the framing header)
     */
    BufferPool(RpmaPeer peer, int slotSize, int payloadOffset, int receiveSlots, int sendSlots) {
        this(peer, slotSize, payloadOffset, receiveSlots, sendSlots, BLOCKS_PER_CHUNK);
    }

    BufferPool(RpmaPeer peer, int slotSize, int payloadOffset, int receiveSlots, int sendSlots, int blocksPerChunk) {
        this.peer = peer;
        this.blocksPerChunk = blocksPerChunk;
        this.slotSize = alignedSlotSize(slotSize);
        this.receiveLength = slotSize;
        this.payloadOffset = payloadOffset;
        this.receiveSlots = receiveSlots;
        this.sendSlots = sendSlots;
    }

    int slotSize() {
        return this.slotSize;
    }

    /** The bytes a slot for messages of {@code messageSize} bytes takes: rounded up to a cache line. */
    static int alignedSlotSize(int messageSize) {
        return (messageSize + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }

    /**
     * The bytes one of a chunk's two registrations takes: {@code slots} slots of {@code alignedSlotSize}
     * bytes per block; 0 registers nothing.
     */
    static long chunkRegistration(int alignedSlotSize, int slots, int blocksPerChunk) {
        return (long) alignedSlotSize * slots * blocksPerChunk;
    }

    int blockSize() {
        return this.slotSize * (this.receiveSlots + this.sendSlots);
    }

    /**
     * A block for a new session; registers a chunk when none is free.
     *
     * @throws dev.rpma.binding.RpmaException when registering fails (e.g. {@code ENOMEM} past the memlock limit)
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
        long bytes = (long) blockSize() * this.blocksPerChunk;
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("A chunk of " + this.blocksPerChunk + " blocks of slots would take " + bytes
                    + " bytes; lower receive-slots, shared-receive-slots, send-slots or max-message-size");
        }
        int receiveBytes = (int) chunkRegistration(this.slotSize, this.receiveSlots, this.blocksPerChunk);
        int sendBytes = (int) chunkRegistration(this.slotSize, this.sendSlots, this.blocksPerChunk);
        ByteBuffer receives = NativeMemory.allocate(receiveBytes);
        ByteBuffer sends = NativeMemory.allocate(sendBytes);
        // librpma refuses a region of 0 bytes: a pool without receive (or send) slots registers none
        RpmaMemoryRegion receiveRegion = (receiveBytes > 0) ? this.peer.register(receives, MemoryUsage.RECV) : null;
        RpmaMemoryRegion sendRegion = null;
        try {
            sendRegion = (sendBytes > 0) ? this.peer.register(sends, MemoryUsage.SEND) : null;
        }
        catch (RuntimeException ex) {
            if (receiveRegion != null) {
                receiveRegion.close();
            }
            throw ex;
        }
        if (receiveRegion != null) {
            this.regions.add(receiveRegion);
        }
        if (sendRegion != null) {
            this.regions.add(sendRegion);
        }
        for (int i = this.blocksPerChunk - 1; i >= 0; i--) {
            this.free.push(new Block(receives, receiveRegion, i * this.slotSize * this.receiveSlots, sends, sendRegion,
                    i * this.slotSize * this.sendSlots));
        }
    }

    /** Bytes registered. */
    synchronized long registeredBytes() {
        return this.regions.stream().mapToLong(RpmaMemoryRegion::size).sum();
    }

    /** Deregisters every chunk; once the endpoint's every session is deleted. Idempotent. */
    synchronized void close() {
        if (this.closed) {
            return;
        }
        this.closed = true;
        this.free.clear();
        for (RpmaMemoryRegion region : this.regions) {
            try {
                region.close();
            }
            catch (RuntimeException ex) {
                logger.warn("Deregistering the sessions' buffers failed: {}", ex.getMessage());
            }
        }
        this.regions.clear();
    }

    /**
     * One session's slots in a registered chunk, with views of each made once and reused by every
     * session that takes the block.
     */
    final class Block {

        /** The chunk's receive slots; {@code null} in a pool without them. */
        final @Nullable RpmaMemoryRegion receiveRegion;

        /** The chunk's send slots; {@code null} in a pool without them. */
        final @Nullable RpmaMemoryRegion sendRegion;

        /** Offset of this block's first receive slot in {@link #receiveRegion}. */
        private final int receiveBase;

        /** Offset of this block's first send slot in {@link #sendRegion}. */
        private final int sendBase;

        /** Whole receive slots, read-only: the framing header is read here. */
        final ByteBuffer[] receiveFrames;

        /** Receive payloads from position 0, read-only: what a handler gets. */
        final ByteBuffer[] receivePayloads;

        /** Whole send slots: the framing header is written here. */
        final ByteBuffer[] sendFrames;

        /** Send payloads from position 0: what {@link RpmaSession#newMessage()} hands out. */
        final ByteBuffer[] sendPayloads;

        private Block(ByteBuffer receives, @Nullable RpmaMemoryRegion receiveRegion, int receiveBase, ByteBuffer sends,
                @Nullable RpmaMemoryRegion sendRegion, int sendBase) {
            this.receiveRegion = receiveRegion;
            this.sendRegion = sendRegion;
            this.receiveBase = receiveBase;
            this.sendBase = sendBase;
            int size = BufferPool.this.slotSize;
            int payload = BufferPool.this.payloadOffset;
            this.receiveFrames = new ByteBuffer[BufferPool.this.receiveSlots];
            this.receivePayloads = new ByteBuffer[BufferPool.this.receiveSlots];
            for (int i = 0; i < this.receiveFrames.length; i++) {
                ByteBuffer slot = receives.slice(receiveBase + i * size, size).order(receives.order());
                this.receiveFrames[i] = slot.asReadOnlyBuffer().order(receives.order());
                this.receivePayloads[i] = slot.slice(payload, size - payload).asReadOnlyBuffer().order(receives.order());
            }
            this.sendFrames = new ByteBuffer[BufferPool.this.sendSlots];
            this.sendPayloads = new ByteBuffer[BufferPool.this.sendSlots];
            for (int i = 0; i < this.sendFrames.length; i++) {
                ByteBuffer slot = sends.slice(sendBase + i * size, size).order(sends.order());
                this.sendFrames[i] = slot;
                this.sendPayloads[i] = slot.slice(payload, size - payload).order(sends.order());
            }
        }

        /** Offset of receive slot {@code index} in {@link #receiveRegion}. */
        long receiveOffset(int index) {
            return this.receiveBase + (long) index * BufferPool.this.slotSize;
        }

        /** Offset of send slot {@code index} in {@link #sendRegion}. */
        long sendOffset(int index) {
            return this.sendBase + (long) index * BufferPool.this.slotSize;
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

package dev.rpma.binding;

import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

/**
 * A registered local memory region ({@code struct rpma_mr_local}), created by
 * {@link RpmaPeer#register}. Its {@link #descriptor()} lets the other side address it.
 *
 * <p>Thread-safe; {@link #close()} ({@code rpma_mr_dereg}, not thread-safe in librpma) is serialized
 * with the peer's other registrations and waits for operations that are being posted with it.
 */
public final class RpmaMemoryRegion extends NativeHandle implements AutoCloseable {

    /** Size of a memory region descriptor: u64 address, u64 length, u32 rkey, u8 usage. */
    public static final int DESCRIPTOR_SIZE = 21;

    private final RpmaPeer peer;

    private final long address;

    private final long size;

    @SuppressWarnings("unused") // keeps a registered direct buffer's memory alive
    private final @Nullable ByteBuffer buffer;

    RpmaMemoryRegion(RpmaPeer peer, long pointer, long address, long size, @Nullable ByteBuffer buffer) {
        super(peer.rpma, pointer);
        this.peer = peer;
        this.address = address;
        this.size = size;
        this.buffer = buffer;
    }

    @Override
    String kind() {
        return "memory region";
    }

    /** Address of the registered memory. */
    public long address() {
        return this.address;
    }

    /** Registered size in bytes. */
    public long size() {
        return this.size;
    }

    /** The descriptor to send to the other side ({@code rpma_mr_get_descriptor}). */
    public byte[] descriptor() {
        Scratch scratch = Scratch.get();
        long mr = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_mr_get_descriptor_size(mr, scratch.at(Scratch.OUT)),
                    "rpma_mr_get_descriptor_size");
            int length = (int) scratch.buffer.getLong(Scratch.OUT);
            this.rpma.check(this.rpma.lib().rpma_mr_get_descriptor(mr, scratch.at(Scratch.BYTES)), "rpma_mr_get_descriptor");
            byte[] descriptor = new byte[length];
            scratch.buffer.get(Scratch.BYTES, descriptor);
            return descriptor;
        }
        finally {
            release();
        }
    }

    /** Advises the provider about use of a range ({@code rpma_mr_advise}, {@code ibv_advise_mr}). */
    public void advise(long offset, long length, int advice, int flags) {
        long mr = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_mr_advise(mr, offset, length, advice, flags), "rpma_mr_advise");
        }
        finally {
            release();
        }
    }

    /** Deregisters the memory ({@code rpma_mr_dereg}); idempotent. */
    @Override
    public void close() {
        long mr = beginClose();
        if (mr != 0) {
            this.peer.notThreadSafe.lock();
            try {
                this.rpma.check(this.rpma.lib().rpma_mr_dereg(Scratch.get().pointerSlot(mr)), "rpma_mr_dereg");
            }
            finally {
                this.peer.notThreadSafe.unlock();
                this.peer.childClosed();
            }
        }
    }
}

package dev.rpma.binding;

/**
 * The other side's memory region ({@code struct rpma_mr_remote}), made from its
 * {@value RpmaMemoryRegion#DESCRIPTOR_SIZE}-byte descriptor. Thread-safe.
 */
public final class RpmaRemoteMemoryRegion extends NativeHandle implements AutoCloseable {

    private RpmaRemoteMemoryRegion(Rpma rpma, long pointer) {
        super(rpma, pointer);
    }

    static RpmaRemoteMemoryRegion fromDescriptor(Rpma rpma, byte[] descriptor) {
        if (descriptor.length > Scratch.SIZE - Scratch.BYTES) {
            throw new IllegalArgumentException("A memory region descriptor is " + RpmaMemoryRegion.DESCRIPTOR_SIZE
                    + " bytes, got " + descriptor.length);
        }
        Scratch scratch = Scratch.get();
        scratch.buffer.put(Scratch.BYTES, descriptor);
        int rc = rpma.lib().rpma_mr_remote_from_descriptor(scratch.at(Scratch.BYTES), descriptor.length,
                scratch.at(Scratch.OUT));
        if (rc != 0) {
            String hint = (descriptor.length != RpmaMemoryRegion.DESCRIPTOR_SIZE)
                    ? "A memory region descriptor is " + RpmaMemoryRegion.DESCRIPTOR_SIZE + " bytes (from"
                            + " RpmaMemoryRegion.descriptor() on the other side), got " + descriptor.length
                    : null;
            throw rpma.failure(rc, "rpma_mr_remote_from_descriptor", hint);
        }
        return new RpmaRemoteMemoryRegion(rpma, scratch.outPointer());
    }

    @Override
    String kind() {
        return "remote memory region";
    }

    /** Size of the remote memory ({@code rpma_mr_remote_get_size}). */
    public long size() {
        Scratch scratch = Scratch.get();
        long mr = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_mr_remote_get_size(mr, scratch.at(Scratch.OUT)), "rpma_mr_remote_get_size");
        }
        finally {
            release();
        }
        return scratch.buffer.getLong(Scratch.OUT);
    }

    /** Flush types the remote region supports ({@code rpma_mr_remote_get_flush_type}), as usage flags. */
    public int flushTypes() {
        Scratch scratch = Scratch.get();
        long mr = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_mr_remote_get_flush_type(mr, scratch.at(Scratch.OUT)),
                    "rpma_mr_remote_get_flush_type");
        }
        finally {
            release();
        }
        return scratch.buffer.getInt(Scratch.OUT);
    }

    /** Frees it ({@code rpma_mr_remote_delete}); idempotent. */
    @Override
    public void close() {
        long mr = beginClose();
        if (mr != 0) {
            this.rpma.check(this.rpma.lib().rpma_mr_remote_delete(Scratch.get().pointerSlot(mr)), "rpma_mr_remote_delete");
        }
    }
}

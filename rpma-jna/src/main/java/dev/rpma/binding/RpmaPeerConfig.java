package dev.rpma.binding;

/**
 * A peer configuration ({@code struct rpma_peer_cfg}): whether the peer supports direct writes to
 * persistent memory, exchanged with the other side as a descriptor. Thread-safe per object.
 */
public final class RpmaPeerConfig extends NativeHandle implements AutoCloseable {

    private RpmaPeerConfig(Rpma rpma, long pointer) {
        super(rpma, pointer);
    }

    static RpmaPeerConfig create(Rpma rpma) {
        Scratch scratch = Scratch.get();
        rpma.check(rpma.lib().rpma_peer_cfg_new(scratch.at(Scratch.OUT)), "rpma_peer_cfg_new");
        return new RpmaPeerConfig(rpma, scratch.outPointer());
    }

    static RpmaPeerConfig fromDescriptor(Rpma rpma, byte[] descriptor) {
        Scratch scratch = Scratch.get();
        if (descriptor.length > Scratch.SIZE - Scratch.BYTES) {
            throw new IllegalArgumentException("A peer configuration descriptor is a few bytes, got " + descriptor.length);
        }
        scratch.buffer.put(Scratch.BYTES, descriptor);
        rpma.check(rpma.lib().rpma_peer_cfg_from_descriptor(scratch.at(Scratch.BYTES), descriptor.length,
                scratch.at(Scratch.OUT)), "rpma_peer_cfg_from_descriptor");
        return new RpmaPeerConfig(rpma, scratch.outPointer());
    }

    @Override
    String kind() {
        return "peer configuration";
    }

    /** Whether direct writes to persistent memory are supported. */
    public boolean directWriteToPmem() {
        Scratch scratch = Scratch.get();
        scratch.buffer.put(Scratch.OUT, (byte) 0);
        long cfg = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_peer_cfg_get_direct_write_to_pmem(cfg, scratch.at(Scratch.OUT)),
                    "rpma_peer_cfg_get_direct_write_to_pmem");
        }
        finally {
            release();
        }
        return scratch.buffer.get(Scratch.OUT) != 0;
    }

    public RpmaPeerConfig directWriteToPmem(boolean supported) {
        long cfg = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_peer_cfg_set_direct_write_to_pmem(cfg, (byte) (supported ? 1 : 0)),
                    "rpma_peer_cfg_set_direct_write_to_pmem");
        }
        finally {
            release();
        }
        return this;
    }

    /** The descriptor to send to the other side. */
    public byte[] descriptor() {
        Scratch scratch = Scratch.get();
        long cfg = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_peer_cfg_get_descriptor_size(cfg, scratch.at(Scratch.OUT)),
                    "rpma_peer_cfg_get_descriptor_size");
            int size = (int) scratch.buffer.getLong(Scratch.OUT);
            this.rpma.check(this.rpma.lib().rpma_peer_cfg_get_descriptor(cfg, scratch.at(Scratch.BYTES)),
                    "rpma_peer_cfg_get_descriptor");
            byte[] descriptor = new byte[size];
            scratch.buffer.get(Scratch.BYTES, descriptor);
            return descriptor;
        }
        finally {
            release();
        }
    }

    /** Frees the configuration ({@code rpma_peer_cfg_delete}); idempotent. */
    @Override
    public void close() {
        long cfg = beginClose();
        if (cfg != 0) {
            this.rpma.check(this.rpma.lib().rpma_peer_cfg_delete(Scratch.get().pointerSlot(cfg)), "rpma_peer_cfg_delete");
        }
    }
}

package dev.rpma.binding;

import dev.rpma.binding.internal.LibRpma;

/**
 * A shared receive queue configuration ({@code struct rpma_srq_cfg}): receive queue and receive
 * completion queue sizes. Thread-safe per object.
 */
public final class RpmaSrqConfig extends NativeHandle implements AutoCloseable {

    private RpmaSrqConfig(Rpma rpma, long pointer) {
        super(rpma, pointer);
    }

    static RpmaSrqConfig create(Rpma rpma) {
        Scratch scratch = Scratch.get();
        rpma.check(rpma.lib().rpma_srq_cfg_new(scratch.at(Scratch.OUT)), "rpma_srq_cfg_new");
        return new RpmaSrqConfig(rpma, scratch.outPointer());
    }

    @Override
    String kind() {
        return "shared receive queue configuration";
    }

    public int rqSize() {
        return get(LibRpma::rpma_srq_cfg_get_rq_size, "rpma_srq_cfg_get_rq_size");
    }

    public RpmaSrqConfig rqSize(int size) {
        return set(LibRpma::rpma_srq_cfg_set_rq_size, RpmaConnectionConfig.unsigned("rqSize", size), "rpma_srq_cfg_set_rq_size");
    }

    public int rcqSize() {
        return get(LibRpma::rpma_srq_cfg_get_rcq_size, "rpma_srq_cfg_get_rcq_size");
    }

    public RpmaSrqConfig rcqSize(int size) {
        return set(LibRpma::rpma_srq_cfg_set_rcq_size, RpmaConnectionConfig.unsigned("rcqSize", size), "rpma_srq_cfg_set_rcq_size");
    }

    /** Frees the configuration ({@code rpma_srq_cfg_delete}); idempotent. */
    @Override
    public void close() {
        long cfg = beginClose();
        if (cfg != 0) {
            this.rpma.check(this.rpma.lib().rpma_srq_cfg_delete(Scratch.get().pointerSlot(cfg)), "rpma_srq_cfg_delete");
        }
    }

    private int get(RpmaConnectionConfig.IntGetter getter, String function) {
        Scratch scratch = Scratch.get();
        long cfg = acquire();
        try {
            this.rpma.check(getter.get(this.rpma.lib(), cfg, scratch.at(Scratch.OUT)), function);
        }
        finally {
            release();
        }
        return scratch.buffer.getInt(Scratch.OUT);
    }

    private RpmaSrqConfig set(RpmaConnectionConfig.IntSetter setter, int value, String function) {
        long cfg = acquire();
        try {
            this.rpma.check(setter.set(this.rpma.lib(), cfg, value), function);
        }
        finally {
            release();
        }
        return this;
    }
}

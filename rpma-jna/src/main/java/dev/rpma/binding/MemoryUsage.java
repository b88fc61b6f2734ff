package dev.rpma.binding;

/** What a memory region may be used for ({@code RPMA_MR_USAGE_*}). */
public enum MemoryUsage {

    /** Source of the other side's reads. */
    READ_SRC(1),
    /** Destination of this side's reads. */
    READ_DST(2),
    /** Source of this side's writes. */
    WRITE_SRC(4),
    /** Destination of the other side's writes. */
    WRITE_DST(8),
    /** Flushable to visibility. */
    FLUSH_TYPE_VISIBILITY(16),
    /** Flushable to persistence. */
    FLUSH_TYPE_PERSISTENT(32),
    /** Source of sends. */
    SEND(64),
    /** Destination of receives. */
    RECV(128);

    private final int flag;

    MemoryUsage(int flag) {
        this.flag = flag;
    }

    public int flag() {
        return this.flag;
    }

    static int mask(MemoryUsage... usages) {
        if (usages == null || usages.length == 0) {
            throw new IllegalArgumentException("Say what the memory region is for: at least one MemoryUsage");
        }
        int mask = 0;
        for (MemoryUsage usage : usages) {
            mask |= usage.flag;
        }
        return mask;
    }
}

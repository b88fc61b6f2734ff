package dev.rpma.binding;

import java.nio.ByteBuffer;

import dev.rpma.binding.internal.NativeMemory;

/**
 * A batch of completions ({@code struct ibv_wc[]}) in native memory allocated once, filled by
 * {@link RpmaCompletionQueue#poll}. The accessors read fields at their C offsets and allocate
 * nothing; {@link #get(int)} copies one into a {@link RpmaCompletion} record. Not thread-safe: one
 * batch per polling thread.
 */
public final class RpmaCompletions {

    /** {@code sizeof(struct ibv_wc)} on LP64 (rdma-core). */
    public static final int WC_SIZE = 48;

    static final int WR_ID = 0;
    static final int STATUS = 8;
    static final int OPCODE = 12;
    static final int VENDOR_ERR = 16;
    static final int BYTE_LEN = 20;
    static final int IMM_DATA = 24;
    static final int QP_NUM = 28;
    static final int SRC_QP = 32;
    static final int WC_FLAGS = 36;

    /** {@code IBV_WC_WITH_IMM}: the completion carries immediate data. */
    public static final int FLAG_WITH_IMM = 1 << 1;

    private final int capacity;

    private final ByteBuffer wc;

    private final ByteBuffer count;

    final long address;

    final long countAddress;

    private int size;

    public RpmaCompletions(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("A completion batch holds at least one completion, got " + capacity);
        }
        this.capacity = capacity;
        this.wc = NativeMemory.allocate(capacity * WC_SIZE);
        this.count = NativeMemory.allocate(Integer.BYTES);
        this.address = NativeMemory.address(this.wc);
        this.countAddress = NativeMemory.address(this.count);
    }

    public int capacity() {
        return this.capacity;
    }

    /** How many completions the last poll delivered. */
    public int size() {
        return this.size;
    }

    int filled() {
        this.size = this.count.getInt(0);
        return this.size;
    }

    void clear() {
        this.size = 0;
    }

    /** The context the operation was posted with ({@code wr_id}). */
    public long context(int index) {
        return this.wc.getLong(offset(index) + WR_ID);
    }

    /** {@code enum ibv_wc_status}; 0 is success ({@link CompletionStatus} names them). */
    public int status(int index) {
        return this.wc.getInt(offset(index) + STATUS);
    }

    public boolean isSuccess(int index) {
        return status(index) == 0;
    }

    /**
     * {@code enum ibv_wc_opcode}; defined only for a successful completion (verbs leaves it undefined
     * on error, when it is often 0, {@code IBV_WC_SEND}): name a failed one by its {@link #context}.
     */
    public int opcodeValue(int index) {
        return this.wc.getInt(offset(index) + OPCODE);
    }

    /** {@link #opcodeValue}: defined only for a successful completion. */
    public RpmaOpcode opcode(int index) {
        return RpmaOpcode.of(opcodeValue(index));
    }

    public int vendorError(int index) {
        return this.wc.getInt(offset(index) + VENDOR_ERR);
    }

    /** Bytes received (receives only). */
    public int byteLength(int index) {
        return this.wc.getInt(offset(index) + BYTE_LEN);
    }

    /** The immediate value, host order ({@code be32toh(imm_data)}) when {@link #hasImmediate(int)}. */
    public int immediate(int index) {
        return Integer.reverseBytes(this.wc.getInt(offset(index) + IMM_DATA));
    }

    public boolean hasImmediate(int index) {
        return (this.wc.getInt(offset(index) + WC_FLAGS) & FLAG_WITH_IMM) != 0;
    }

    public int qpNumber(int index) {
        return this.wc.getInt(offset(index) + QP_NUM);
    }

    public int sourceQp(int index) {
        return this.wc.getInt(offset(index) + SRC_QP);
    }

    public int flags(int index) {
        return this.wc.getInt(offset(index) + WC_FLAGS);
    }

    /** A copy of one completion. */
    public RpmaCompletion get(int index) {
        return new RpmaCompletion(context(index), status(index), opcode(index), byteLength(index),
                hasImmediate(index) ? immediate(index) : 0, hasImmediate(index), qpNumber(index), vendorError(index));
    }

    private int offset(int index) {
        if (index < 0 || index >= this.size) {
            throw new IndexOutOfBoundsException("completion " + index + " of " + this.size);
        }
        return index * WC_SIZE;
    }
}

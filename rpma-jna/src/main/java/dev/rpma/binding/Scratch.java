package dev.rpma.binding;

import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.internal.NativeMemory;

/**
 * Per-thread native memory for out-parameters ({@code T **}, {@code int *}, ...) and for the few
 * small inputs librpma reads by pointer (private data, the 8 bytes of an atomic write), so that
 * calls allocate nothing. A call uses it only between entering and leaving librpma on its own
 * thread; librpma's log callback never touches it.
 */
final class Scratch {

    /** Out-parameter slots, 8 bytes each. */
    static final int OUT = 0;
    static final int OUT2 = 8;
    /** A {@code struct rpma_conn_private_data} (16 bytes). */
    static final int PDATA_STRUCT = 16;
    /** Bytes of private data or other small inputs, up to 256. */
    static final int BYTES = 64;
    static final int SIZE = BYTES + 256;

    private static final ThreadLocal<Scratch> CURRENT = ThreadLocal.withInitial(Scratch::new);

    final ByteBuffer buffer = NativeMemory.allocate(SIZE);

    final long address = NativeMemory.address(this.buffer);

    Scratch() {
    }

    static Scratch get() {
        // a field of the server's threads, not a ThreadLocal: code compiled by C1, the JIT's first tier,
        // calls into the JVM for a ThreadLocal lookup (Reference.refersTo), which took 2 % of an
        // acceptor's time (measured with -XX:TieredStopAtLevel=1)
        return (Thread.currentThread() instanceof RpmaThread thread) ? thread.scratch() : CURRENT.get();
    }

    long at(int offset) {
        return this.address + offset;
    }

    long outPointer() {
        return this.buffer.getLong(OUT);
    }

    /** Stores a pointer in the out slot, for the {@code T **} of delete calls. */
    long pointerSlot(long pointer) {
        this.buffer.putLong(OUT, pointer);
        return this.address + OUT;
    }

    /** Copies {@code bytes} into a {@code struct rpma_conn_private_data}; returns its address (0 for none). */
    long privateData(byte @Nullable [] bytes) {
        if (bytes == null || bytes.length == 0) {
            return 0;
        }
        this.buffer.put(BYTES, bytes);
        this.buffer.putLong(PDATA_STRUCT, this.address + BYTES);
        this.buffer.put(PDATA_STRUCT + 8, (byte) bytes.length);
        return this.address + PDATA_STRUCT;
    }
}

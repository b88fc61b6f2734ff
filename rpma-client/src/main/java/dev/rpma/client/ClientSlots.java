package dev.rpma.client;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;

/**
 * One pooled connection's receive and send slots: two direct buffers, each registered once, cut into
 * slots of the largest frame rounded up to 64 bytes, with a little-endian view per slot. They outlive
 * each connection made with them (a deleted connection's device writes into them no more) and are
 * deregistered when the pooled connection closes for good, or moves to a server on another device.
 */
final class ClientSlots implements AutoCloseable {

    private static final int ALIGN = 64;

    /**
     * Up to this many bytes are copied between a slot and an array eight at a time on the caller's
     * stack; longer ones by the buffer's bulk copy, which calls the JVM's copy routine: for the
     * small messages a request/reply client mostly sends, that call is most of the copy.
     */
    private static final int SMALL_COPY = 64;

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** The peer they are registered on: a connection on another device's peer needs slots of its own. */
    final RpmaPeer peer;

    final RpmaMemoryRegion receiveRegion;

    final RpmaMemoryRegion sendRegion;

    final ByteBuffer[] receives;

    final ByteBuffer[] sends;

    final int stride;

    /** Bytes each receive is posted for. */
    final int receiveLength;

    ClientSlots(RpmaPeer peer, int receiveSlots, int sendSlots, int receiveLength) {
        this.peer = peer;
        this.receiveLength = receiveLength;
        this.stride = (receiveLength + ALIGN - 1) / ALIGN * ALIGN;
        ByteBuffer receiveMemory = ByteBuffer.allocateDirect(receiveSlots * this.stride);
        ByteBuffer sendMemory = ByteBuffer.allocateDirect(sendSlots * this.stride);
        this.receiveRegion = peer.register(receiveMemory, MemoryUsage.RECV);
        try {
            this.sendRegion = peer.register(sendMemory, MemoryUsage.SEND);
        }
        catch (RuntimeException ex) {
            this.receiveRegion.close();
            throw ex;
        }
        this.receives = views(receiveMemory, receiveSlots, this.stride);
        this.sends = views(sendMemory, sendSlots, this.stride);
    }

    private static ByteBuffer[] views(ByteBuffer memory, int count, int stride) {
        ByteBuffer[] views = new ByteBuffer[count];
        for (int i = 0; i < count; i++) {
            views[i] = memory.duplicate().position(i * stride).limit((i + 1) * stride).slice()
                .order(ByteOrder.LITTLE_ENDIAN);
        }
        return views;
    }

    /** Copies {@code bytes} into the little-endian {@code slot} at {@code at}. */
    static void write(ByteBuffer slot, int at, byte[] bytes) {
        int length = bytes.length;
        if (length > SMALL_COPY) {
            slot.put(at, bytes);
            return;
        }
        int i = 0;
        for (; i + Long.BYTES <= length; i += Long.BYTES) {
            slot.putLong(at + i, (long) LONGS.get(bytes, i));
        }
        for (; i < length; i++) {
            slot.put(at + i, bytes[i]);
        }
    }

    /** Copies {@code into.length} bytes from the little-endian {@code slot} at {@code at}. */
    static void read(ByteBuffer slot, int at, byte[] into) {
        int length = into.length;
        if (length > SMALL_COPY) {
            slot.get(at, into);
            return;
        }
        int i = 0;
        for (; i + Long.BYTES <= length; i += Long.BYTES) {
            LONGS.set(into, i, slot.getLong(at + i));
        }
        for (; i < length; i++) {
            into[i] = slot.get(at + i);
        }
    }

    long offset(int slot) {
        return (long) slot * this.stride;
    }

    @Override
    public void close() {
        try {
            this.sendRegion.close();
        }
        finally {
            this.receiveRegion.close();
        }
    }
}

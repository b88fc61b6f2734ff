package dev.rpma.binding.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import com.sun.jna.Native;
import com.sun.jna.Pointer;

/**
 * Native memory as the typed API sees it: direct little-endian {@link ByteBuffer}s and their
 * addresses. Internal API: the only place besides the bindings where JNA is touched.
 */
public final class NativeMemory {

    private NativeMemory() {
    }

    /** A zeroed direct buffer in the platform's byte order (little-endian on every librpma target). */
    public static ByteBuffer allocate(int size) {
        return ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
    }

    /** Address of the first byte of a direct buffer (not of its position). */
    public static long address(ByteBuffer direct) {
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("RDMA needs native memory: pass a direct ByteBuffer "
                    + "(ByteBuffer.allocateDirect), not a heap buffer");
        }
        return Pointer.nativeValue(Native.getDirectBufferPointer(direct));
    }

    /** Copies {@code length} bytes at {@code address} into a new array. */
    public static byte[] copyOut(long address, int length) {
        byte[] bytes = new byte[length];
        if (length > 0) {
            new Pointer(address).read(0, bytes, 0, length);
        }
        return bytes;
    }

    /** A view of native memory that librpma owns; valid only as long as librpma says. */
    public static ByteBuffer view(long address, long length) {
        return new Pointer(address).getByteBuffer(0, length).order(ByteOrder.nativeOrder());
    }
}

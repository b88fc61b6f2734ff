package dev.rpma.binding.io;

import java.nio.ByteBuffer;

import dev.rpma.binding.internal.LibC;
import dev.rpma.binding.internal.NativeMemory;

/**
 * The {@code eventfd} a waiting loop is woken through: {@link #wakeup()} from any thread makes it
 * readable, the loop's own thread {@link #drain()}s it. Closing and waking up exclude each other, so
 * a late wake-up never writes to a closed fd number that the process may have reused.
 */
final class WakeupFd {

    /** The 8 bytes {@link #wakeup()} writes; never changed, so threads may share it. */
    private static final ByteBuffer ONE = NativeMemory.allocate(Long.BYTES).putLong(0, 1);

    private static final long ONE_ADDRESS = NativeMemory.address(ONE);

    private final int fd;

    private final ByteBuffer counter = NativeMemory.allocate(Long.BYTES);

    private final long counterAddress = NativeMemory.address(this.counter);

    private boolean closed;

    WakeupFd() {
        this.fd = LibC.eventfd(0, LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);
        if (this.fd < 0) {
            throw new IllegalStateException("eventfd() failed with errno " + LibC.errno());
        }
    }

    int fd() {
        return this.fd;
    }

    /** Makes the fd readable. Any thread. */
    void wakeup() {
        synchronized (this.counter) {
            if (!this.closed) {
                LibC.write(this.fd, ONE_ADDRESS, Long.BYTES);
            }
        }
    }

    /** Reads the wake-ups that came; by the waiting thread. */
    void drain() {
        LibC.read(this.fd, this.counterAddress, Long.BYTES);
    }

    boolean isClosed() {
        synchronized (this.counter) {
            return this.closed;
        }
    }

    /** Closes the fd; {@code false} when it was closed already. */
    boolean close() {
        synchronized (this.counter) {
            if (this.closed) {
                return false;
            }
            this.closed = true;
            LibC.close(this.fd);
            return true;
        }
    }
}

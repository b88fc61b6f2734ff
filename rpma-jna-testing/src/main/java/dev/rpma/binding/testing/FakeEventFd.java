package dev.rpma.binding.testing;

import com.sun.jna.Memory;

import dev.rpma.binding.internal.LibC;

/**
 * A real {@code eventfd} standing in for one of librpma's file descriptors: readable exactly while
 * {@link #readable(boolean)} says so, so that {@code poll(2)} on it behaves like on librpma's fd.
 * Blocking, like librpma's own fds; the fake only reads it when it wrote to it, so it never blocks.
 * Guarded by the fake's lock.
 */
final class FakeEventFd {

    private final int fd;

    private final Memory buffer = new Memory(Long.BYTES);

    private boolean signaled;

    private boolean open = true;

    FakeEventFd() {
        this.fd = LibC.eventfd(0, LibC.EFD_CLOEXEC);
        if (this.fd < 0) {
            throw new IllegalStateException("eventfd() failed with errno " + LibC.errno());
        }
    }

    int fd() {
        return this.fd;
    }

    /** The number of {@code fd} while it is open; -1 once it is closed, or where there is none. */
    static int numberOf(FakeEventFd fd) {
        return (fd != null && fd.isOpen()) ? fd.fd() : -1;
    }

    boolean isOpen() {
        return this.open;
    }

    void readable(boolean readable) {
        if (!this.open || readable == this.signaled) {
            return;
        }
        if (readable) {
            this.buffer.setLong(0, 1);
            if (LibC.write(this.fd, com.sun.jna.Pointer.nativeValue(this.buffer), Long.BYTES) != Long.BYTES) {
                throw new IllegalStateException("write(eventfd) failed with errno " + LibC.errno());
            }
        }
        else if (LibC.read(this.fd, com.sun.jna.Pointer.nativeValue(this.buffer), Long.BYTES) != Long.BYTES) {
            throw new IllegalStateException("read(eventfd) failed with errno " + LibC.errno());
        }
        this.signaled = readable;
    }

    void close() {
        if (this.open) {
            this.open = false;
            LibC.close(this.fd);
        }
    }
}

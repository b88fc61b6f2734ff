package dev.rpma.binding.io;

import dev.rpma.binding.internal.LibC;

/** File descriptor flags of librpma's event and completion fds. */
public final class FileDescriptors {

    private FileDescriptors() {
    }

    /** Sets or clears {@code O_NONBLOCK}. */
    public static void setBlocking(int fd, boolean blocking) {
        int flags = LibC.fcntl(fd, LibC.F_GETFL, 0);
        if (flags < 0) {
            throw new IllegalStateException("fcntl(" + fd + ", F_GETFL) failed with errno " + LibC.errno());
        }
        int updated = blocking ? (flags & ~LibC.O_NONBLOCK) : (flags | LibC.O_NONBLOCK);
        if (updated != flags && LibC.fcntl(fd, LibC.F_SETFL, updated) < 0) {
            throw new IllegalStateException("fcntl(" + fd + ", F_SETFL) failed with errno " + LibC.errno());
        }
    }

    /** Whether {@code O_NONBLOCK} is clear. */
    public static boolean isBlocking(int fd) {
        int flags = LibC.fcntl(fd, LibC.F_GETFL, 0);
        if (flags < 0) {
            throw new IllegalStateException("fcntl(" + fd + ", F_GETFL) failed with errno " + LibC.errno());
        }
        return (flags & LibC.O_NONBLOCK) == 0;
    }
}

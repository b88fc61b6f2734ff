package dev.rpma.binding.io;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import dev.rpma.binding.internal.LibC;

/** Two real eventfds for the pollers' tests to make readable and drain again. */
final class EventFdPair implements AutoCloseable {

    /** Non-blocking. */
    final int first = LibC.eventfd(0, LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);

    final int second;

    private final Memory one = new Memory(8);

    /** {@code secondFlags}: the {@code eventfd(2)} flags of {@link #second}. */
    EventFdPair(int secondFlags) {
        this.second = LibC.eventfd(0, secondFlags);
    }

    /** Makes {@code fd} readable. */
    void signal(int fd) {
        this.one.setLong(0, 1);
        assertThat(LibC.write(fd, Pointer.nativeValue(this.one), 8)).isEqualTo(8);
    }

    /** Makes {@code fd} not readable again. */
    void drain(int fd) {
        assertThat(LibC.read(fd, Pointer.nativeValue(this.one), 8)).isEqualTo(8);
    }

    @Override
    public void close() {
        LibC.close(this.first);
        LibC.close(this.second);
        this.one.close();
    }
}

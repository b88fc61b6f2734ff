package dev.rpma.binding.io;

import java.nio.ByteBuffer;

import dev.rpma.binding.internal.LibC;
import dev.rpma.binding.internal.NativeMemory;

/**
 * Waits until one of several file descriptors is readable, or another thread calls
 * {@link #wakeup()} ({@code poll(2)} over the fds and an {@code eventfd}). This is how an event loop
 * that owns librpma objects waits without ever blocking inside librpma, so stopping it never needs
 * a call from another thread into librpma.
 *
 * <p>{@link #await} and {@link #isReadable} belong to the one polling thread; {@link #wakeup()} is
 * thread-safe. Allocates nothing per wait.
 */
public final class FdPoller implements AutoCloseable {

    private static final int POLLFD_SIZE = 8;

    private final WakeupFd wakeup = new WakeupFd();

    private final ByteBuffer pollFds;

    private final long pollFdsAddress;

    private final int capacity;

    private int count;

    /** A poller for up to {@code capacity} fds besides its own wake-up fd. */
    public FdPoller(int capacity) {
        this.capacity = capacity;
        // slot 0: the wake-up fd; 1..capacity: the fds of await; the last: the fd of isReadableNow
        this.pollFds = NativeMemory.allocate((capacity + 2) * POLLFD_SIZE);
        this.pollFdsAddress = NativeMemory.address(this.pollFds);
        this.pollFds.putInt(0, this.wakeup.fd());
        this.pollFds.putShort(4, LibC.POLLIN);
    }

    public int capacity() {
        return this.capacity;
    }

    /**
     * Waits until one of {@code fds[0..count)} is readable, {@link #wakeup()} is called, or the
     * timeout passes (negative: no timeout).
     *
     * @return how many of {@code fds} are readable (see {@link #isReadable(int)}); 0 on wake-up,
     *     timeout or an interrupted wait
     */
    public int await(int[] fds, int count, int timeoutMillis) {
        if (count > this.capacity) {
            throw new IllegalArgumentException("At most " + this.capacity + " fds, got " + count);
        }
        for (int i = 0; i < count; i++) {
            int base = (i + 1) * POLLFD_SIZE;
            this.pollFds.putInt(base, fds[i]);
            this.pollFds.putShort(base + 4, LibC.POLLIN);
            this.pollFds.putShort(base + 6, (short) 0);
        }
        this.pollFds.putShort(6, (short) 0);
        this.count = count;
        int ready = LibC.poll(this.pollFdsAddress, count + 1, timeoutMillis);
        if (ready < 0) {
            int errno = LibC.errno();
            if (errno == LibC.EINTR) {
                clearReady();
                return 0;
            }
            throw new IllegalStateException("poll() failed with errno " + errno);
        }
        if (this.pollFds.getShort(6) != 0) {
            this.wakeup.drain();
            ready--;
        }
        return ready;
    }

    /**
     * Whether {@code fd} is readable (or in error/hang-up) right now, without a wait; the results of
     * the last {@link #await} stay as they were. For the polling thread.
     */
    public boolean isReadableNow(int fd) {
        int base = (this.capacity + 1) * POLLFD_SIZE;
        this.pollFds.putInt(base, fd);
        this.pollFds.putShort(base + 4, LibC.POLLIN);
        this.pollFds.putShort(base + 6, (short) 0);
        return LibC.poll(this.pollFdsAddress + base, 1, 0) > 0;
    }

    /** Whether {@code fds[index]} of the last {@link #await} was readable (or in error/hang-up). */
    public boolean isReadable(int index) {
        if (index < 0 || index >= this.count) {
            throw new IndexOutOfBoundsException(index);
        }
        return this.pollFds.getShort((index + 1) * POLLFD_SIZE + 6) != 0;
    }

    private void clearReady() {
        for (int i = 0; i <= this.count; i++) {
            this.pollFds.putShort(i * POLLFD_SIZE + 6, (short) 0);
        }
    }

    /** Makes the current or next {@link #await} return at once. Any thread. */
    public void wakeup() {
        this.wakeup.wakeup();
    }

    /** Whether {@link #close()} released the wake-up fd. */
    public boolean isClosed() {
        return this.wakeup.isClosed();
    }

    @Override
    public void close() {
        this.wakeup.close();
    }
}

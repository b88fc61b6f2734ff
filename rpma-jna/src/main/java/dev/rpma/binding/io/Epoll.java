package dev.rpma.binding.io;

import java.nio.ByteBuffer;

import dev.rpma.binding.internal.LibC;
import dev.rpma.binding.internal.NativeMemory;

/**
 * An {@code epoll} instance with its own wake-up: an event loop registers librpma's file descriptors
 * (endpoint, connection events, completion channels) once, level-triggered, each with a 64-bit token
 * of its choice, and waits in {@link #await(int)} until some are readable or another thread calls
 * {@link #wakeup()}. Unlike {@code poll(2)}, a wait costs the same with 2 fds or 2,000.
 *
 * <p>{@link #add}, {@link #remove}, {@link #await}, {@link #isReadableNow} and the accessors of the
 * last wait belong to the one loop thread; {@link #wakeup()} and {@link #close()} are thread-safe.
 * Allocates nothing per wait.
 */
public final class Epoll implements AutoCloseable {

    /** The token of the wake-up fd; tokens of registered fds must differ from it. */
    public static final long WAKEUP_TOKEN = -1L;

    private static final int POLLFD_SIZE = 8;

    private final int epfd;

    private final WakeupFd wakeup;

    private final int maxEvents;

    private final ByteBuffer events;

    private final long eventsAddress;

    /** The {@code struct pollfd} of {@link #isReadableNow}. */
    private final ByteBuffer pollFd = NativeMemory.allocate(POLLFD_SIZE);

    private final long pollFdAddress = NativeMemory.address(this.pollFd);


    /** Up to {@code maxEvents} readable fds are reported per wait; more are reported by the next. */
    public Epoll(int maxEvents) {
        if (maxEvents < 1) {
            throw new IllegalArgumentException("maxEvents must be at least 1, got " + maxEvents);
        }
        this.maxEvents = maxEvents;
        this.epfd = LibC.epoll_create1(LibC.EPOLL_CLOEXEC);
        if (this.epfd < 0) {
            throw new IllegalStateException("epoll_create1() failed with errno " + LibC.errno());
        }
        try {
            this.wakeup = new WakeupFd();
        }
        catch (IllegalStateException ex) {
            LibC.close(this.epfd);
            throw ex;
        }
        this.events = NativeMemory.allocate(maxEvents * LibC.EPOLL_EVENT_SIZE);
        this.eventsAddress = NativeMemory.address(this.events);
        if (LibC.epoll_ctl(this.epfd, LibC.EPOLL_CTL_ADD, this.wakeup.fd(), LibC.EPOLLIN, WAKEUP_TOKEN) < 0) {
            int errno = LibC.errno();
            this.wakeup.close();
            LibC.close(this.epfd);
            throw new IllegalStateException("epoll_ctl(EPOLL_CTL_ADD) of the wake-up fd failed with errno " + errno);
        }
    }

    /** Watches {@code fd} for readability (level-triggered), reporting it with {@code token}. */
    public void add(int fd, long token) {
        if (token == WAKEUP_TOKEN) {
            throw new IllegalArgumentException("token " + WAKEUP_TOKEN + " is the wake-up's");
        }
        if (LibC.epoll_ctl(this.epfd, LibC.EPOLL_CTL_ADD, fd, LibC.EPOLLIN, token) < 0) {
            throw new IllegalStateException("epoll_ctl(EPOLL_CTL_ADD, " + fd + ") failed with errno " + LibC.errno());
        }
    }

    /**
     * Stops watching {@code fd}. Call it before the fd is closed (librpma closes a connection's fds
     * when the connection is deleted): epoll forgets a closed fd only once every copy of it is closed.
     */
    public void remove(int fd) {
        if (LibC.epoll_ctl(this.epfd, LibC.EPOLL_CTL_DEL, fd, 0, 0) < 0) {
            throw new IllegalStateException("epoll_ctl(EPOLL_CTL_DEL, " + fd + ") failed with errno " + LibC.errno());
        }
    }

    /**
     * Waits until a watched fd is readable, {@link #wakeup()} is called, or {@code timeoutMillis}
     * passes (0: look without waiting; negative: no timeout). A wake-up is consumed here and not
     * reported.
     *
     * @return how many fds are readable: their tokens are {@link #token(int)} for 0 to the result
     *     minus one; 0 on wake-up, timeout or an interrupted wait
     */
    public int await(int timeoutMillis) {
        int ready = LibC.epoll_wait(this.epfd, this.eventsAddress, this.maxEvents, timeoutMillis);
        if (ready < 0) {
            int errno = LibC.errno();
            if (errno == LibC.EINTR) {
                return 0;
            }
            throw new IllegalStateException("epoll_wait() failed with errno " + errno);
        }
        for (int i = 0; i < ready; i++) {
            if (token(i) == WAKEUP_TOKEN) {
                this.wakeup.drain();
                // the last event takes the wake-up's place, so that the caller sees only its own fds
                int last = ready - 1;
                if (i != last) {
                    copyEvent(last, i);
                }
                return last;
            }
        }
        return ready;
    }

    /**
     * Whether {@code fd} is readable right now: one {@code poll(2)} without a wait, which leaves the
     * results of the last {@link #await} as they were. For a caller that drains a level-triggered fd
     * and must not read it once too often (a read of an empty librpma fd is an error librpma logs).
     */
    public boolean isReadableNow(int fd) {
        this.pollFd.putInt(0, fd);
        this.pollFd.putShort(4, LibC.POLLIN);
        this.pollFd.putShort(6, (short) 0);
        return LibC.poll(this.pollFdAddress, 1, 0) > 0;
    }

    /** The token of readable fd {@code index} of the last {@link #await}. */
    public long token(int index) {
        return this.events.getLong(index * LibC.EPOLL_EVENT_SIZE + 4);
    }

    /** The {@code EPOLL*} bits of readable fd {@code index} of the last {@link #await}. */
    public int readyEvents(int index) {
        return this.events.getInt(index * LibC.EPOLL_EVENT_SIZE);
    }

    private void copyEvent(int from, int to) {
        int source = from * LibC.EPOLL_EVENT_SIZE;
        int target = to * LibC.EPOLL_EVENT_SIZE;
        this.events.putInt(target, this.events.getInt(source));
        this.events.putLong(target + 4, this.events.getLong(source + 4));
    }

    /** Makes the current or next {@link #await} return at once. Any thread. */
    public void wakeup() {
        this.wakeup.wakeup();
    }

    /** Whether {@link #close()} released the epoll instance and its wake-up fd. */
    public boolean isClosed() {
        return this.wakeup.isClosed();
    }

    @Override
    public void close() {
        if (this.wakeup.close()) {
            LibC.close(this.epfd);
        }
    }
}

package dev.rpma.binding.internal;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

/**
 * The few libc calls the event loops need to wait on librpma's file descriptors: {@code fcntl},
 * {@code poll}, {@code epoll_*}, {@code eventfd}, {@code read}, {@code write}, {@code close};
 * {@code sched_setscheduler} for the threads around them; and {@code getrlimit} and {@code sysconf}
 * for the memory-lock limit that registered memory counts against. Direct-mapped; {@code poll},
 * {@code fcntl} and epoll, which run per wake-up and per connection, through JNI where it is
 * available ({@link JniCalls}).
 * Internal API.
 */
public final class LibC {

    public static final int F_GETFL = 3;
    public static final int F_SETFL = 4;
    public static final int O_NONBLOCK = 0x800;
    public static final short POLLIN = 0x1;
    public static final int EFD_CLOEXEC = 0x80000;
    public static final int EFD_NONBLOCK = 0x800;
    public static final int EINTR = 4;
    public static final int EAGAIN = 11;
    public static final int SCHED_BATCH = 3;
    public static final int EPOLL_CLOEXEC = 0x80000;
    public static final int EPOLL_CTL_ADD = 1;
    public static final int EPOLL_CTL_DEL = 2;
    public static final int EPOLL_CTL_MOD = 3;
    public static final int EPOLLIN = 0x1;
    public static final int EPOLLERR = 0x8;
    public static final int EPOLLHUP = 0x10;
    public static final int RLIMIT_MEMLOCK = 8;
    /** {@code RLIM_INFINITY}: all ones, -1 as a Java long. */
    public static final long RLIM_INFINITY = -1L;
    /** {@code sizeof(struct rlimit)}: two {@code rlim_t} (u64), the soft limit first. */
    public static final int RLIMIT_SIZE = 16;
    public static final int SC_PAGESIZE = 30;
    /** {@code sizeof(struct epoll_event)} on x86-64, where the struct is packed: u32 events, u64 data. */
    public static final int EPOLL_EVENT_SIZE = 12;

    static {
        Native.register(LibC.class, Platform.C_LIBRARY_NAME);
        Native.register(Direct.class, Platform.C_LIBRARY_NAME);
    }

    private LibC() {
    }

    /** {@code errno} as it was right after this thread's last call through JNA. */
    public static int errno() {
        return Native.getLastError();
    }

    // int fcntl(int fd, int cmd, ... /* int arg */);
    public static int fcntl(int fd, int cmd, int arg) {
        if (JniCalls.LIBC) {
            return keepErrno(JniCalls.fcntl(fd, cmd, arg));
        }
        return Direct.fcntl(fd, cmd, arg);
    }

    // int poll(struct pollfd *fds, nfds_t nfds, int timeout);
    public static int poll(long fds, long nfds, int timeoutMillis) {
        if (JniCalls.LIBC) {
            return keepErrno(JniCalls.poll(fds, nfds, timeoutMillis));
        }
        return Direct.poll(fds, nfds, timeoutMillis);
    }

    // int epoll_create1(int flags);
    public static native int epoll_create1(int flags);

    // int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event); the event's two fields as arguments
    public static int epoll_ctl(int epfd, int op, int fd, int events, long data) {
        if (JniCalls.LIBC) {
            return keepErrno(JniCalls.epollCtl(epfd, op, fd, events, data));
        }
        try (Memory event = new Memory(EPOLL_EVENT_SIZE)) {
            event.setInt(0, events);
            event.setLong(4, data);
            return Direct.epoll_ctl(epfd, op, fd, Pointer.nativeValue(event));
        }
    }

    // int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout);
    public static int epoll_wait(int epfd, long events, int maxEvents, int timeoutMillis) {
        if (JniCalls.LIBC) {
            return keepErrno(JniCalls.epollWait(epfd, events, maxEvents, timeoutMillis));
        }
        return Direct.epoll_wait(epfd, events, maxEvents, timeoutMillis);
    }

    /** A failed JNI call's errno is where {@link #errno()} finds a JNA call's. */
    private static int keepErrno(int rc) {
        if (rc < 0) {
            JniCalls.passErrnoToJna();
        }
        return rc;
    }

    // int eventfd(unsigned int initval, int flags);
    public static native int eventfd(int initval, int flags);

    // ssize_t read(int fd, void *buf, size_t count);
    public static native long read(int fd, long buf, long count);

    // ssize_t write(int fd, const void *buf, size_t count);
    public static native long write(int fd, long buf, long count);

    // int *__errno_location(void);
    public static native long __errno_location();

    // int close(int fd);
    public static native int close(int fd);

    // int getrlimit(int resource, struct rlimit *rlim);
    public static native int getrlimit(int resource, long rlim);

    // long sysconf(int name);
    public static native long sysconf(int name);

    // int sched_setscheduler(pid_t pid, int policy, const struct sched_param *param); pid 0: this thread
    public static native int sched_setscheduler(int pid, int policy, long param);

    /**
     * The calls the event loops make per wake-up or per connection, through JNA where JNI is not
     * available ({@link JniCalls}).
     */
    private static final class Direct {

        static native int fcntl(int fd, int cmd, int arg);

        static native int poll(long fds, long nfds, int timeoutMillis);

        static native int epoll_ctl(int epfd, int op, int fd, long event);

        static native int epoll_wait(int epfd, long events, int maxEvents, int timeoutMillis);
    }
}

package dev.rpma.binding.internal;

import java.io.File;
import java.io.IOException;
import java.util.function.ToLongFunction;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import org.jspecify.annotations.Nullable;

/**
 * The librpma calls that run per message or per connection, and libc's {@code poll}, {@code fcntl}
 * and {@code epoll_wait}/{@code epoll_ctl}, as plain JNI calls, for {@link JnaLibRpma} and {@link LibC}: the C side is
 * {@code src/main/c/rpma_jni.c}, compiled by the build into this jar. JNA's direct mapping dispatches
 * every call through libffi and its own generic handler; in the soft-RoCE VM that dispatch was 15 % of
 * the ping-pong loop's CPU and 4-5 % of the acceptor's per connection (see docs/performance.md).
 *
 * <p>librpma is not linked by the JNI library: each call takes the address of the librpma function,
 * looked up in the library JNA bound, so both bindings call the same code. A failed call's errno is
 * saved on the calling thread before the JVM can change it, and read back with {@link #savedErrno()}.
 *
 * <p>Optional: where the JNI library cannot be loaded (no build for this platform, a temporary
 * directory that does not allow executables) or the system property {@value #PROPERTY} is
 * {@code false}, {@link #bind} returns {@code null} and every call goes through JNA.
 */
final class JniCalls {

    /** {@code false} turns the JNI calls off: every call through JNA (for comparisons, or as a way out). */
    static final String PROPERTY = "rpma.jni";

    /** Where the build puts the JNI library in the jar, when it can make one. */
    static final String RESOURCE = "/dev/rpma/binding/internal/" + Platform.RESOURCE_PREFIX + "/librpmajni.so";

    /** Why the JNI library is not loaded, or {@code null} when it is. */
    private static final @Nullable String UNAVAILABLE = load();

    /** Whether {@link LibC} calls {@code poll}, {@code fcntl} and epoll through JNI; decided once, when it is loaded. */
    static final boolean LIBC = unavailableReason() == null;

    final long getWc;

    final long cqWait;

    final long send;

    final long recv;

    final long srqRecv;

    final long epNextConnReq;

    final long connReqGetPrivateData;

    final long connReqConnect;

    final long connReqRecv;

    final long connReqDelete;

    final long connGetEventFd;

    final long connNextEvent;

    final long connDisconnect;

    final long connDelete;

    /** Calls the functions whose addresses {@code address} gives for their librpma names. */
    JniCalls(ToLongFunction<String> address) {
        this.getWc = address.applyAsLong("rpma_cq_get_wc");
        this.cqWait = address.applyAsLong("rpma_cq_wait");
        this.send = address.applyAsLong("rpma_send");
        this.recv = address.applyAsLong("rpma_recv");
        this.srqRecv = address.applyAsLong("rpma_srq_recv");
        this.epNextConnReq = address.applyAsLong("rpma_ep_next_conn_req");
        this.connReqGetPrivateData = address.applyAsLong("rpma_conn_req_get_private_data");
        this.connReqConnect = address.applyAsLong("rpma_conn_req_connect");
        this.connReqRecv = address.applyAsLong("rpma_conn_req_recv");
        this.connReqDelete = address.applyAsLong("rpma_conn_req_delete");
        this.connGetEventFd = address.applyAsLong("rpma_conn_get_event_fd");
        this.connNextEvent = address.applyAsLong("rpma_conn_next_event");
        this.connDisconnect = address.applyAsLong("rpma_conn_disconnect");
        this.connDelete = address.applyAsLong("rpma_conn_delete");
    }

    /** The calls into {@code library}'s functions, or {@code null} when JNI is not available. */
    static @Nullable JniCalls bind(NativeLibrary library) {
        if (unavailableReason() != null) {
            return null;
        }
        return new JniCalls((function) -> Pointer.nativeValue(library.getFunction(function)));
    }

    /** Why calls go through JNA, or {@code null} when the JNI calls can be used. */
    static @Nullable String unavailableReason() {
        if (!Boolean.parseBoolean(System.getProperty(PROPERTY, "true"))) {
            return "turned off by the system property " + PROPERTY;
        }
        return UNAVAILABLE;
    }

    private static @Nullable String load() {
        try {
            if (JniCalls.class.getResource(RESOURCE) == null) {
                return "no JNI library for " + Platform.RESOURCE_PREFIX + " in the jar";
            }
            File library = Native.extractFromResourcePath(RESOURCE, JniCalls.class.getClassLoader());
            System.load(library.getAbsolutePath());
            return null;
        }
        catch (IOException | UnsatisfiedLinkError | SecurityException ex) {
            return "the JNI library could not be loaded: " + ex;
        }
    }

    /** A librpma function taking one pointer. */
    static native int call1(long function, long a);

    /** A librpma function taking two pointers. */
    static native int call2(long function, long a, long b);

    /** A librpma function taking three pointers. */
    static native int call3(long function, long a, long b, long c);

    static native int getWc(long function, long cq, int numEntries, long wc, long numEntriesGot);

    static native int send(long function, long conn, long src, long offset, long len, int flags, long opContext);

    /** {@code rpma_recv}, {@code rpma_conn_req_recv} or {@code rpma_srq_recv}, which take the same arguments. */
    static native int recv(long function, long connOrReq, long dst, long offset, long len, long opContext);

    static native int poll(long fds, long nfds, int timeoutMillis);

    static native int fcntl(int fd, int cmd, int arg);

    /** {@code epoll_ctl} with the {@code struct epoll_event} built on the C side (it is packed on x86-64). */
    static native int epollCtl(int epfd, int op, int fd, int events, long data);

    static native int epollWait(int epfd, long events, int maxEvents, int timeoutMillis);

    /** The errno of this thread's last failed call through this class. */
    static native int savedErrno();

    /** Hands that errno to JNA, where {@link LibRpma#lastErrno()} and {@link LibC#errno()} read a JNA call's. */
    static void passErrnoToJna() {
        Native.setLastError(savedErrno());
    }
}

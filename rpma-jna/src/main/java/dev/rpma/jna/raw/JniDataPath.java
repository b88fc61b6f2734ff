package dev.rpma.jna.raw;

import java.io.File;
import java.io.IOException;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

/**
 * {@code rpma_cq_get_wc}, {@code rpma_send} and {@code rpma_recv} as plain JNI calls, for
 * {@link JnaLibRpma}: the C side is {@code src/main/c/rpma_jni_data_path.c}, compiled by the build
 * into this jar. JNA's direct mapping dispatches every call through libffi and its own generic
 * handler, and in the soft-RoCE VM that dispatch was 15 % of the ping-pong loop's CPU (see
 * docs/performance.md); these three calls run once or more per message.
 *
 * <p>librpma is not linked by the JNI library: each call takes the address of the librpma function,
 * looked up in the library JNA bound, so both bindings call the same code. A failed call's errno is
 * saved on the calling thread before the JVM can change it, and read back with {@link #savedErrno()}.
 *
 * <p>Optional: where the JNI library cannot be loaded (no build for this platform, a temporary
 * directory that does not allow executables) or the system property {@value #PROPERTY} is
 * {@code false}, {@link #bind} returns {@code null} and every call goes through JNA.
 */
final class JniDataPath {

    /** {@code false} turns the JNI data path off: every call through JNA (for comparisons, or as a way out). */
    static final String PROPERTY = "rpma.jni-data-path";

    private static final String RESOURCE = "/dev/rpma/jna/raw/" + Platform.RESOURCE_PREFIX + "/librpmajni.so";

    /** Why the JNI library is not loaded, or {@code null} when it is. */
    private static final String UNAVAILABLE = load();

    private final long getWc;

    private final long send;

    private final long recv;

    /** Calls the functions at these addresses (with librpma's signatures). */
    JniDataPath(long getWc, long send, long recv) {
        this.getWc = getWc;
        this.send = send;
        this.recv = recv;
    }

    /** The data path over {@code library}'s functions, or {@code null} when it is not available. */
    static JniDataPath bind(NativeLibrary library) {
        if (unavailableReason() != null) {
            return null;
        }
        return new JniDataPath(address(library, "rpma_cq_get_wc"), address(library, "rpma_send"),
                address(library, "rpma_recv"));
    }

    /** Why calls go through JNA, or {@code null} when the JNI data path can be used. */
    static String unavailableReason() {
        if (!Boolean.parseBoolean(System.getProperty(PROPERTY, "true"))) {
            return "turned off by the system property " + PROPERTY;
        }
        return UNAVAILABLE;
    }

    private static long address(NativeLibrary library, String function) {
        return Pointer.nativeValue(library.getFunction(function));
    }

    private static String load() {
        try {
            if (JniDataPath.class.getResource(RESOURCE) == null) {
                return "no JNI library for " + Platform.RESOURCE_PREFIX + " in the jar";
            }
            File library = Native.extractFromResourcePath(RESOURCE, JniDataPath.class.getClassLoader());
            System.load(library.getAbsolutePath());
            return null;
        }
        catch (IOException | UnsatisfiedLinkError | SecurityException ex) {
            return "the JNI library could not be loaded: " + ex;
        }
    }

    int getWc(long cq, int numEntries, long wc, long numEntriesGot) {
        return getWc(this.getWc, cq, numEntries, wc, numEntriesGot);
    }

    int send(long conn, long src, long offset, long len, int flags, long opContext) {
        return send(this.send, conn, src, offset, len, flags, opContext);
    }

    int recv(long conn, long dst, long offset, long len, long opContext) {
        return recv(this.recv, conn, dst, offset, len, opContext);
    }

    private static native int getWc(long function, long cq, int numEntries, long wc, long numEntriesGot);

    private static native int send(long function, long conn, long src, long offset, long len, int flags,
            long opContext);

    private static native int recv(long function, long conn, long dst, long offset, long len, long opContext);

    /** The errno of this thread's last failed call through this class. */
    static native int savedErrno();
}

package dev.rpma.binding.internal;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

/**
 * The calls of libpmem (PMDK; Debian/Ubuntu package {@code libpmem1}) that persistent memory outside
 * a file system needs: mapping a device DAX whole, and writing CPU caches back to it. Bound on first
 * use, so that an application without such a region never needs the library. Direct-mapped.
 * Internal API: users go through {@code dev.rpma.binding.pmem.PmemMapping}.
 */
public final class LibPmem {

    /** How to make libpmem loadable, as one sentence without its final period. */
    public static final String ADVICE = "Install libpmem (Debian/Ubuntu: 'sudo apt-get install libpmem1')";

    /** {@code PMEM_FILE_CREATE}: create the file when it is missing, sized to the length asked. */
    public static final int PMEM_FILE_CREATE = 1;

    private static final @Nullable String LOAD_FAILURE;

    static {
        List<String> failures = new ArrayList<>();
        for (String name : List.of("libpmem.so.1", "pmem")) {
            try {
                Native.register(LibPmem.class, NativeLibrary.getInstance(name));
                failures.clear();
                break;
            }
            catch (UnsatisfiedLinkError ex) {
                failures.add("'" + name + "': " + RpmaLibraryLoader.oneLine(ex));
            }
        }
        LOAD_FAILURE = failures.isEmpty() ? null : "Tried " + String.join("; then ", failures);
    }

    private LibPmem() {
    }

    /**
     * @throws UnsatisfiedLinkError when libpmem could not be loaded: the message says what was tried
     *     and ends with the {@link #ADVICE}
     */
    public static void requireLoaded() {
        if (LOAD_FAILURE != null) {
            throw new UnsatisfiedLinkError("libpmem could not be loaded. " + LOAD_FAILURE + ". " + ADVICE + ".");
        }
    }

    // void *pmem_map_file(const char *path, size_t len, int flags, mode_t mode, size_t *mapped_lenp, int *is_pmemp);
    public static native @Nullable Pointer pmem_map_file(String path, long len, int flags, int mode, long[] mappedLength,
            int[] isPmem);

    // int pmem_unmap(void *addr, size_t len);
    public static native int pmem_unmap(Pointer address, long length);

    // void pmem_persist(const void *addr, size_t len);
    public static native void pmem_persist(Pointer address, long length);

    // int pmem_msync(const void *addr, size_t len);
    public static native int pmem_msync(Pointer address, long length);

    // const char *pmem_errormsg(void);
    public static native String pmem_errormsg();
}

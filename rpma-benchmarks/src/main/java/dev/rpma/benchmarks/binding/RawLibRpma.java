package dev.rpma.benchmarks.binding;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

import dev.rpma.binding.internal.RpmaLibraryLoader;

/**
 * The baseline: the bare JNA direct-mapped calls, bound exactly as the binding binds its own
 * ({@code Native.register} on the same library, primitive and {@code long} arguments only), without
 * the raw layer's interface, the typed API's handles, scratch memory or error mapping. A benchmark
 * that calls these measures what JNA and librpma cost by themselves.
 */
public final class RawLibRpma {

    public static final int RPMA_E_INVAL = -100004;

    public static final int RPMA_E_NO_COMPLETION = -100005;

    public static final int RPMA_F_COMPLETION_ON_ERROR = 1;

    public static final int RPMA_F_COMPLETION_ALWAYS = 3;

    static {
        Native.register(RawLibRpma.class, library());
    }

    private RawLibRpma() {
    }

    /** The same library, searched in the same order, that {@code Rpma.get()} binds. */
    private static NativeLibrary library() {
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, String> candidate : RpmaLibraryLoader.candidates().entrySet()) {
            try {
                return NativeLibrary.getInstance(candidate.getKey());
            }
            catch (UnsatisfiedLinkError ex) {
                failures.add(candidate.getKey() + ": " + ex.getMessage());
            }
        }
        throw new UnsatisfiedLinkError("librpma not found: " + failures);
    }

    // int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr);
    public static native int rpma_conn_cfg_new(long cfgPtr);

    // int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr);
    public static native int rpma_conn_cfg_delete(long cfgPtr);

    // int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size);
    public static native int rpma_conn_cfg_get_cq_size(long cfg, long cqSize);

    // int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size);
    public static native int rpma_conn_cfg_set_cq_size(long cfg, int cqSize);

    // int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got);
    public static native int rpma_cq_get_wc(long cq, int numEntries, long wc, long numEntriesGot);

    // int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags, const void *op_context);
    public static native int rpma_write(long conn, long dst, long dstOffset, long src, long srcOffset, long len,
            int flags, long opContext);
}

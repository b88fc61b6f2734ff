package dev.rpma.jna.raw;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * {@link LibRpma} over JNA direct mapping: every call is a static native method bound to the
 * symbol of the same name, taking only primitives and strings, so no call allocates for its
 * arguments (direct mapping converts {@code long} to a 64-bit pointer argument on LP64).
 */
final class JnaLibRpma implements LibRpma {

    private static final int RPMA_E_NO_COMPLETION = -100005;

    private static final int RPMA_E_NO_EVENT = -100006;

    /**
     * The calls of the data path and of every connection through JNI ({@link JniCalls}); {@code null}:
     * through JNA.
     */
    private final @Nullable JniCalls jni;

    JnaLibRpma(NativeLibrary library) {
        this(library, JniCalls.bind(library));
        LoggerFactory.getLogger(JnaLibRpma.class).info("librpma's per-message and per-connection calls: {}",
                (this.jni != null) ? "through JNI" : "through JNA, " + JniCalls.unavailableReason());
    }

    JnaLibRpma(NativeLibrary library, @Nullable JniCalls jni) {
        Native.register(Direct.class, library);
        this.jni = jni;
    }

    /** Whether the per-message and per-connection calls go through JNI rather than JNA. */
    boolean usesJni() {
        return this.jni != null;
    }

    /**
     * A JNI call's errno is where {@link #lastErrno()} finds a JNA call's (errors only: a look at an
     * empty queue or an event queue without an event is none).
     */
    private static int keepErrno(int rc) {
        if (rc != 0 && rc != RPMA_E_NO_COMPLETION && rc != RPMA_E_NO_EVENT) {
            JniCalls.passErrnoToJna();
        }
        return rc;
    }

    @Override
    public int lastErrno() {
        return Native.getLastError();
    }

    @Override
    public int rpma_utils_get_ibv_context(String addr, int type, long ibvCtxPtr) {
        return Direct.rpma_utils_get_ibv_context(addr, type, ibvCtxPtr);
    }

    @Override
    public int rpma_utils_ibv_context_is_odp_capable(long ibvCtx, long isOdpCapable) {
        return Direct.rpma_utils_ibv_context_is_odp_capable(ibvCtx, isOdpCapable);
    }

    @Override
    public int rpma_peer_cfg_new(long pcfgPtr) {
        return Direct.rpma_peer_cfg_new(pcfgPtr);
    }

    @Override
    public int rpma_peer_cfg_delete(long pcfgPtr) {
        return Direct.rpma_peer_cfg_delete(pcfgPtr);
    }

    @Override
    public int rpma_peer_cfg_set_direct_write_to_pmem(long pcfg, byte supported) {
        return Direct.rpma_peer_cfg_set_direct_write_to_pmem(pcfg, supported);
    }

    @Override
    public int rpma_peer_cfg_get_direct_write_to_pmem(long pcfg, long supported) {
        return Direct.rpma_peer_cfg_get_direct_write_to_pmem(pcfg, supported);
    }

    @Override
    public int rpma_peer_cfg_get_descriptor(long pcfg, long desc) {
        return Direct.rpma_peer_cfg_get_descriptor(pcfg, desc);
    }

    @Override
    public int rpma_peer_cfg_get_descriptor_size(long pcfg, long descSize) {
        return Direct.rpma_peer_cfg_get_descriptor_size(pcfg, descSize);
    }

    @Override
    public int rpma_peer_cfg_from_descriptor(long desc, long descSize, long pcfgPtr) {
        return Direct.rpma_peer_cfg_from_descriptor(desc, descSize, pcfgPtr);
    }

    @Override
    public int rpma_peer_new(long ibvCtx, long peerPtr) {
        return Direct.rpma_peer_new(ibvCtx, peerPtr);
    }

    @Override
    public int rpma_peer_delete(long peerPtr) {
        return Direct.rpma_peer_delete(peerPtr);
    }

    @Override
    public int rpma_mr_reg(long peer, long ptr, long size, int usage, long mrPtr) {
        return Direct.rpma_mr_reg(peer, ptr, size, usage, mrPtr);
    }

    @Override
    public int rpma_mr_dereg(long mrPtr) {
        return Direct.rpma_mr_dereg(mrPtr);
    }

    @Override
    public int rpma_mr_get_descriptor(long mr, long desc) {
        return Direct.rpma_mr_get_descriptor(mr, desc);
    }

    @Override
    public int rpma_mr_remote_from_descriptor(long desc, long descSize, long mrPtr) {
        return Direct.rpma_mr_remote_from_descriptor(desc, descSize, mrPtr);
    }

    @Override
    public int rpma_mr_get_descriptor_size(long mr, long descSize) {
        return Direct.rpma_mr_get_descriptor_size(mr, descSize);
    }

    @Override
    public int rpma_mr_get_ptr(long mr, long ptr) {
        return Direct.rpma_mr_get_ptr(mr, ptr);
    }

    @Override
    public int rpma_mr_get_size(long mr, long size) {
        return Direct.rpma_mr_get_size(mr, size);
    }

    @Override
    public int rpma_mr_remote_get_size(long mr, long size) {
        return Direct.rpma_mr_remote_get_size(mr, size);
    }

    @Override
    public int rpma_mr_remote_get_flush_type(long mr, long flushType) {
        return Direct.rpma_mr_remote_get_flush_type(mr, flushType);
    }

    @Override
    public int rpma_mr_remote_delete(long mrPtr) {
        return Direct.rpma_mr_remote_delete(mrPtr);
    }

    @Override
    public int rpma_mr_advise(long mr, long offset, long len, int advice, int flags) {
        return Direct.rpma_mr_advise(mr, offset, len, advice, flags);
    }

    @Override
    public int rpma_conn_cfg_new(long cfgPtr) {
        return Direct.rpma_conn_cfg_new(cfgPtr);
    }

    @Override
    public int rpma_conn_cfg_delete(long cfgPtr) {
        return Direct.rpma_conn_cfg_delete(cfgPtr);
    }

    @Override
    public int rpma_conn_cfg_set_timeout(long cfg, int timeoutMs) {
        return Direct.rpma_conn_cfg_set_timeout(cfg, timeoutMs);
    }

    @Override
    public int rpma_conn_cfg_get_timeout(long cfg, long timeoutMs) {
        return Direct.rpma_conn_cfg_get_timeout(cfg, timeoutMs);
    }

    @Override
    public int rpma_conn_cfg_set_cq_size(long cfg, int cqSize) {
        return Direct.rpma_conn_cfg_set_cq_size(cfg, cqSize);
    }

    @Override
    public int rpma_conn_cfg_get_compl_channel(long cfg, long shared) {
        return Direct.rpma_conn_cfg_get_compl_channel(cfg, shared);
    }

    @Override
    public int rpma_conn_cfg_set_compl_channel(long cfg, byte shared) {
        return Direct.rpma_conn_cfg_set_compl_channel(cfg, shared);
    }

    @Override
    public int rpma_conn_cfg_get_cq_size(long cfg, long cqSize) {
        return Direct.rpma_conn_cfg_get_cq_size(cfg, cqSize);
    }

    @Override
    public int rpma_conn_cfg_set_rcq_size(long cfg, int rcqSize) {
        return Direct.rpma_conn_cfg_set_rcq_size(cfg, rcqSize);
    }

    @Override
    public int rpma_conn_cfg_get_rcq_size(long cfg, long rcqSize) {
        return Direct.rpma_conn_cfg_get_rcq_size(cfg, rcqSize);
    }

    @Override
    public int rpma_conn_cfg_set_sq_size(long cfg, int sqSize) {
        return Direct.rpma_conn_cfg_set_sq_size(cfg, sqSize);
    }

    @Override
    public int rpma_conn_cfg_get_sq_size(long cfg, long sqSize) {
        return Direct.rpma_conn_cfg_get_sq_size(cfg, sqSize);
    }

    @Override
    public int rpma_conn_cfg_set_rq_size(long cfg, int rqSize) {
        return Direct.rpma_conn_cfg_set_rq_size(cfg, rqSize);
    }

    @Override
    public int rpma_conn_cfg_get_rq_size(long cfg, long rqSize) {
        return Direct.rpma_conn_cfg_get_rq_size(cfg, rqSize);
    }

    @Override
    public int rpma_conn_cfg_set_srq(long cfg, long srq) {
        return Direct.rpma_conn_cfg_set_srq(cfg, srq);
    }

    @Override
    public int rpma_conn_cfg_get_srq(long cfg, long srqPtr) {
        return Direct.rpma_conn_cfg_get_srq(cfg, srqPtr);
    }

    @Override
    public int rpma_conn_get_event_fd(long conn, long fd) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call2(jni.connGetEventFd, conn, fd));
        }
        return Direct.rpma_conn_get_event_fd(conn, fd);
    }

    @Override
    public int rpma_conn_next_event(long conn, long event) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call2(jni.connNextEvent, conn, event));
        }
        return Direct.rpma_conn_next_event(conn, event);
    }

    @Override
    public String rpma_utils_conn_event_2str(int connEvent) {
        return Direct.rpma_utils_conn_event_2str(connEvent);
    }

    @Override
    public int rpma_conn_get_private_data(long conn, long pdata) {
        return Direct.rpma_conn_get_private_data(conn, pdata);
    }

    @Override
    public int rpma_conn_apply_remote_peer_cfg(long conn, long pcfg) {
        return Direct.rpma_conn_apply_remote_peer_cfg(conn, pcfg);
    }

    @Override
    public int rpma_conn_get_qp_num(long conn, long qpNum) {
        return Direct.rpma_conn_get_qp_num(conn, qpNum);
    }

    @Override
    public int rpma_conn_get_cq(long conn, long cqPtr) {
        return Direct.rpma_conn_get_cq(conn, cqPtr);
    }

    @Override
    public int rpma_conn_get_rcq(long conn, long rcqPtr) {
        return Direct.rpma_conn_get_rcq(conn, rcqPtr);
    }

    @Override
    public int rpma_conn_disconnect(long conn) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call1(jni.connDisconnect, conn));
        }
        return Direct.rpma_conn_disconnect(conn);
    }

    @Override
    public int rpma_conn_delete(long connPtr) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call1(jni.connDelete, connPtr));
        }
        return Direct.rpma_conn_delete(connPtr);
    }

    @Override
    public int rpma_conn_req_new(long peer, String addr, String port, long cfg, long reqPtr) {
        return Direct.rpma_conn_req_new(peer, addr, port, cfg, reqPtr);
    }

    @Override
    public int rpma_conn_req_delete(long reqPtr) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call1(jni.connReqDelete, reqPtr));
        }
        return Direct.rpma_conn_req_delete(reqPtr);
    }

    @Override
    public int rpma_conn_req_connect(long reqPtr, long pdata, long connPtr) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call3(jni.connReqConnect, reqPtr, pdata, connPtr));
        }
        return Direct.rpma_conn_req_connect(reqPtr, pdata, connPtr);
    }

    @Override
    public int rpma_conn_get_compl_fd(long conn, long fd) {
        return Direct.rpma_conn_get_compl_fd(conn, fd);
    }

    @Override
    public int rpma_conn_wait(long conn, int flags, long cq, long isRcq) {
        return Direct.rpma_conn_wait(conn, flags, cq, isRcq);
    }

    @Override
    public int rpma_conn_req_recv(long req, long dst, long offset, long len, long opContext) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.recv(jni.connReqRecv, req, dst, offset, len, opContext));
        }
        return Direct.rpma_conn_req_recv(req, dst, offset, len, opContext);
    }

    @Override
    public int rpma_ep_listen(long peer, String addr, String port, long epPtr) {
        return Direct.rpma_ep_listen(peer, addr, port, epPtr);
    }

    @Override
    public int rpma_ep_shutdown(long epPtr) {
        return Direct.rpma_ep_shutdown(epPtr);
    }

    @Override
    public int rpma_ep_get_fd(long ep, long fd) {
        return Direct.rpma_ep_get_fd(ep, fd);
    }

    @Override
    public int rpma_ep_next_conn_req(long ep, long cfg, long reqPtr) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call3(jni.epNextConnReq, ep, cfg, reqPtr));
        }
        return Direct.rpma_ep_next_conn_req(ep, cfg, reqPtr);
    }

    @Override
    public int rpma_conn_req_get_private_data(long req, long pdata) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call2(jni.connReqGetPrivateData, req, pdata));
        }
        return Direct.rpma_conn_req_get_private_data(req, pdata);
    }

    @Override
    public int rpma_srq_cfg_new(long cfgPtr) {
        return Direct.rpma_srq_cfg_new(cfgPtr);
    }

    @Override
    public int rpma_srq_cfg_delete(long cfgPtr) {
        return Direct.rpma_srq_cfg_delete(cfgPtr);
    }

    @Override
    public int rpma_srq_cfg_set_rq_size(long cfg, int rqSize) {
        return Direct.rpma_srq_cfg_set_rq_size(cfg, rqSize);
    }

    @Override
    public int rpma_srq_cfg_get_rq_size(long cfg, long rqSize) {
        return Direct.rpma_srq_cfg_get_rq_size(cfg, rqSize);
    }

    @Override
    public int rpma_srq_cfg_set_rcq_size(long cfg, int rcqSize) {
        return Direct.rpma_srq_cfg_set_rcq_size(cfg, rcqSize);
    }

    @Override
    public int rpma_srq_cfg_get_rcq_size(long cfg, long rcqSize) {
        return Direct.rpma_srq_cfg_get_rcq_size(cfg, rcqSize);
    }

    @Override
    public int rpma_srq_new(long peer, long cfg, long srqPtr) {
        return Direct.rpma_srq_new(peer, cfg, srqPtr);
    }

    @Override
    public int rpma_srq_delete(long srqPtr) {
        return Direct.rpma_srq_delete(srqPtr);
    }

    @Override
    public int rpma_srq_recv(long srq, long dst, long offset, long len, long opContext) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.recv(jni.srqRecv, srq, dst, offset, len, opContext));
        }
        return Direct.rpma_srq_recv(srq, dst, offset, len, opContext);
    }

    @Override
    public int rpma_srq_get_rcq(long srq, long rcqPtr) {
        return Direct.rpma_srq_get_rcq(srq, rcqPtr);
    }

    @Override
    public int rpma_read(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, long opContext) {
        return Direct.rpma_read(conn, dst, dstOffset, src, srcOffset, len, flags, opContext);
    }

    @Override
    public int rpma_write(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, long opContext) {
        return Direct.rpma_write(conn, dst, dstOffset, src, srcOffset, len, flags, opContext);
    }

    @Override
    public int rpma_write_with_imm(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, int imm, long opContext) {
        return Direct.rpma_write_with_imm(conn, dst, dstOffset, src, srcOffset, len, flags, imm, opContext);
    }

    @Override
    public int rpma_atomic_write(long conn, long dst, long dstOffset, long srcPtr, int flags, long opContext) {
        return Direct.rpma_atomic_write(conn, dst, dstOffset, srcPtr, flags, opContext);
    }

    @Override
    public int rpma_flush(long conn, long dst, long dstOffset, long len, int type, int flags, long opContext) {
        return Direct.rpma_flush(conn, dst, dstOffset, len, type, flags, opContext);
    }

    @Override
    public int rpma_send(long conn, long src, long offset, long len, int flags, long opContext) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.send(jni.send, conn, src, offset, len, flags, opContext));
        }
        return Direct.rpma_send(conn, src, offset, len, flags, opContext);
    }

    @Override
    public int rpma_send_with_imm(long conn, long src, long offset, long len, int flags, int imm, long opContext) {
        return Direct.rpma_send_with_imm(conn, src, offset, len, flags, imm, opContext);
    }

    @Override
    public int rpma_recv(long conn, long dst, long offset, long len, long opContext) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.recv(jni.recv, conn, dst, offset, len, opContext));
        }
        return Direct.rpma_recv(conn, dst, offset, len, opContext);
    }

    @Override
    public int rpma_cq_get_fd(long cq, long fd) {
        return Direct.rpma_cq_get_fd(cq, fd);
    }

    @Override
    public int rpma_cq_wait(long cq) {
        return Direct.rpma_cq_wait(cq);
    }

    @Override
    public int rpma_cq_get_wc(long cq, int numEntries, long wc, long numEntriesGot) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.getWc(jni.getWc, cq, numEntries, wc, numEntriesGot));
        }
        return Direct.rpma_cq_get_wc(cq, numEntries, wc, numEntriesGot);
    }

    @Override
    public String rpma_err_2str(int ret) {
        return Direct.rpma_err_2str(ret);
    }

    @Override
    public int rpma_log_set_threshold(int threshold, int level) {
        return Direct.rpma_log_set_threshold(threshold, level);
    }

    @Override
    public int rpma_log_get_threshold(int threshold, long level) {
        return Direct.rpma_log_get_threshold(threshold, level);
    }

    @Override
    public int rpma_log_set_function(long logFunction) {
        return Direct.rpma_log_set_function(logFunction);
    }

    /** The direct-mapped symbols; {@link Native#register} binds each method to its C namesake. */
    static final class Direct {

        private Direct() {
        }

        // int rpma_utils_get_ibv_context(const char *addr, enum rpma_util_ibv_context_type type, struct ibv_context **ibv_ctx_ptr);
        static native int rpma_utils_get_ibv_context(String addr, int type, long ibvCtxPtr);

        // int rpma_utils_ibv_context_is_odp_capable(struct ibv_context *ibv_ctx, int *is_odp_capable);
        static native int rpma_utils_ibv_context_is_odp_capable(long ibvCtx, long isOdpCapable);

        // int rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr);
        static native int rpma_peer_cfg_new(long pcfgPtr);

        // int rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr);
        static native int rpma_peer_cfg_delete(long pcfgPtr);

        // int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg, bool supported);
        static native int rpma_peer_cfg_set_direct_write_to_pmem(long pcfg, byte supported);

        // int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg, bool *supported);
        static native int rpma_peer_cfg_get_direct_write_to_pmem(long pcfg, long supported);

        // int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc);
        static native int rpma_peer_cfg_get_descriptor(long pcfg, long desc);

        // int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg, size_t *desc_size);
        static native int rpma_peer_cfg_get_descriptor_size(long pcfg, long descSize);

        // int rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size, struct rpma_peer_cfg **pcfg_ptr);
        static native int rpma_peer_cfg_from_descriptor(long desc, long descSize, long pcfgPtr);

        // int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr);
        static native int rpma_peer_new(long ibvCtx, long peerPtr);

        // int rpma_peer_delete(struct rpma_peer **peer_ptr);
        static native int rpma_peer_delete(long peerPtr);

        // int rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage, struct rpma_mr_local **mr_ptr);
        static native int rpma_mr_reg(long peer, long ptr, long size, int usage, long mrPtr);

        // int rpma_mr_dereg(struct rpma_mr_local **mr_ptr);
        static native int rpma_mr_dereg(long mrPtr);

        // int rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc);
        static native int rpma_mr_get_descriptor(long mr, long desc);

        // int rpma_mr_remote_from_descriptor(const void *desc, size_t desc_size, struct rpma_mr_remote **mr_ptr);
        static native int rpma_mr_remote_from_descriptor(long desc, long descSize, long mrPtr);

        // int rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size);
        static native int rpma_mr_get_descriptor_size(long mr, long descSize);

        // int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr);
        static native int rpma_mr_get_ptr(long mr, long ptr);

        // int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size);
        static native int rpma_mr_get_size(long mr, long size);

        // int rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size);
        static native int rpma_mr_remote_get_size(long mr, long size);

        // int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr, int *flush_type);
        static native int rpma_mr_remote_get_flush_type(long mr, long flushType);

        // int rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr);
        static native int rpma_mr_remote_delete(long mrPtr);

        // int rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len, int advice, uint32_t flags);
        static native int rpma_mr_advise(long mr, long offset, long len, int advice, int flags);

        // int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr);
        static native int rpma_conn_cfg_new(long cfgPtr);

        // int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr);
        static native int rpma_conn_cfg_delete(long cfgPtr);

        // int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms);
        static native int rpma_conn_cfg_set_timeout(long cfg, int timeoutMs);

        // int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms);
        static native int rpma_conn_cfg_get_timeout(long cfg, long timeoutMs);

        // int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size);
        static native int rpma_conn_cfg_set_cq_size(long cfg, int cqSize);

        // int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared);
        static native int rpma_conn_cfg_get_compl_channel(long cfg, long shared);

        // int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared);
        static native int rpma_conn_cfg_set_compl_channel(long cfg, byte shared);

        // int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size);
        static native int rpma_conn_cfg_get_cq_size(long cfg, long cqSize);

        // int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size);
        static native int rpma_conn_cfg_set_rcq_size(long cfg, int rcqSize);

        // int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size);
        static native int rpma_conn_cfg_get_rcq_size(long cfg, long rcqSize);

        // int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size);
        static native int rpma_conn_cfg_set_sq_size(long cfg, int sqSize);

        // int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg, uint32_t *sq_size);
        static native int rpma_conn_cfg_get_sq_size(long cfg, long sqSize);

        // int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size);
        static native int rpma_conn_cfg_set_rq_size(long cfg, int rqSize);

        // int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg, uint32_t *rq_size);
        static native int rpma_conn_cfg_get_rq_size(long cfg, long rqSize);

        // int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq);
        static native int rpma_conn_cfg_set_srq(long cfg, long srq);

        // int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg, struct rpma_srq **srq_ptr);
        static native int rpma_conn_cfg_get_srq(long cfg, long srqPtr);

        // int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd);
        static native int rpma_conn_get_event_fd(long conn, long fd);

        // int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event);
        static native int rpma_conn_next_event(long conn, long event);

        // const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event);
        static native String rpma_utils_conn_event_2str(int connEvent);

        // int rpma_conn_get_private_data(const struct rpma_conn *conn, struct rpma_conn_private_data *pdata);
        static native int rpma_conn_get_private_data(long conn, long pdata);

        // int rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn, const struct rpma_peer_cfg *pcfg);
        static native int rpma_conn_apply_remote_peer_cfg(long conn, long pcfg);

        // int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num);
        static native int rpma_conn_get_qp_num(long conn, long qpNum);

        // int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr);
        static native int rpma_conn_get_cq(long conn, long cqPtr);

        // int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr);
        static native int rpma_conn_get_rcq(long conn, long rcqPtr);

        // int rpma_conn_disconnect(struct rpma_conn *conn);
        static native int rpma_conn_disconnect(long conn);

        // int rpma_conn_delete(struct rpma_conn **conn_ptr);
        static native int rpma_conn_delete(long connPtr);

        // int rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port, const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr);
        static native int rpma_conn_req_new(long peer, String addr, String port, long cfg, long reqPtr);

        // int rpma_conn_req_delete(struct rpma_conn_req **req_ptr);
        static native int rpma_conn_req_delete(long reqPtr);

        // int rpma_conn_req_connect(struct rpma_conn_req **req_ptr, const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr);
        static native int rpma_conn_req_connect(long reqPtr, long pdata, long connPtr);

        // int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd);
        static native int rpma_conn_get_compl_fd(long conn, long fd);

        // int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq, bool *is_rcq);
        static native int rpma_conn_wait(long conn, int flags, long cq, long isRcq);

        // int rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst, size_t offset, size_t len, const void *op_context);
        static native int rpma_conn_req_recv(long req, long dst, long offset, long len, long opContext);

        // int rpma_ep_listen(struct rpma_peer *peer, const char *addr, const char *port, struct rpma_ep **ep_ptr);
        static native int rpma_ep_listen(long peer, String addr, String port, long epPtr);

        // int rpma_ep_shutdown(struct rpma_ep **ep_ptr);
        static native int rpma_ep_shutdown(long epPtr);

        // int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd);
        static native int rpma_ep_get_fd(long ep, long fd);

        // int rpma_ep_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr);
        static native int rpma_ep_next_conn_req(long ep, long cfg, long reqPtr);

        // int rpma_conn_req_get_private_data(const struct rpma_conn_req *req, struct rpma_conn_private_data *pdata);
        static native int rpma_conn_req_get_private_data(long req, long pdata);

        // int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr);
        static native int rpma_srq_cfg_new(long cfgPtr);

        // int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr);
        static native int rpma_srq_cfg_delete(long cfgPtr);

        // int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size);
        static native int rpma_srq_cfg_set_rq_size(long cfg, int rqSize);

        // int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size);
        static native int rpma_srq_cfg_get_rq_size(long cfg, long rqSize);

        // int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size);
        static native int rpma_srq_cfg_set_rcq_size(long cfg, int rcqSize);

        // int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size);
        static native int rpma_srq_cfg_get_rcq_size(long cfg, long rcqSize);

        // int rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg, struct rpma_srq **srq_ptr);
        static native int rpma_srq_new(long peer, long cfg, long srqPtr);

        // int rpma_srq_delete(struct rpma_srq **srq_ptr);
        static native int rpma_srq_delete(long srqPtr);

        // int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset, size_t len, const void *op_context);
        static native int rpma_srq_recv(long srq, long dst, long offset, long len, long opContext);

        // int rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr);
        static native int rpma_srq_get_rcq(long srq, long rcqPtr);

        // int rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t dst_offset, const struct rpma_mr_remote *src, size_t src_offset, size_t len, int flags, const void *op_context);
        static native int rpma_read(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, long opContext);

        // int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags, const void *op_context);
        static native int rpma_write(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, long opContext);

        // int rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags, uint32_t imm, const void *op_context);
        static native int rpma_write_with_imm(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, int imm, long opContext);

        // int rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, const char src[8], int flags, const void *op_context);
        static native int rpma_atomic_write(long conn, long dst, long dstOffset, long srcPtr, int flags, long opContext);

        // int rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, size_t len, enum rpma_flush_type type, int flags, const void *op_context);
        static native int rpma_flush(long conn, long dst, long dstOffset, long len, int type, int flags, long opContext);

        // int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len, int flags, const void *op_context);
        static native int rpma_send(long conn, long src, long offset, long len, int flags, long opContext);

        // int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len, int flags, uint32_t imm, const void *op_context);
        static native int rpma_send_with_imm(long conn, long src, long offset, long len, int flags, int imm, long opContext);

        // int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len, const void *op_context);
        static native int rpma_recv(long conn, long dst, long offset, long len, long opContext);

        // int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd);
        static native int rpma_cq_get_fd(long cq, long fd);

        // int rpma_cq_wait(struct rpma_cq *cq);
        static native int rpma_cq_wait(long cq);

        // int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got);
        static native int rpma_cq_get_wc(long cq, int numEntries, long wc, long numEntriesGot);

        // const char *rpma_err_2str(int ret);
        static native String rpma_err_2str(int ret);

        // int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level);
        static native int rpma_log_set_threshold(int threshold, int level);

        // int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level *level);
        static native int rpma_log_get_threshold(int threshold, long level);

        // int rpma_log_set_function(rpma_log_function *log_function);
        static native int rpma_log_set_function(long logFunction);
    }
}

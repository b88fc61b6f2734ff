package dev.rpma.benchmarks.binding;

import dev.rpma.jna.raw.LibRpma;

/**
 * A raw layer that forwards every call to another one; subclasses replace the calls a benchmark
 * measures. Generated from {@link LibRpma}'s declarations (regenerate when it changes).
 */
public abstract class ForwardingLibRpma implements LibRpma {

    private final LibRpma delegate;

    protected ForwardingLibRpma(LibRpma delegate) {
        this.delegate = delegate;
    }

    @Override
    public int lastErrno() {
        return this.delegate.lastErrno();
    }

    @Override
    public int rpma_utils_get_ibv_context(String addr, int type, long ibvCtxPtr) {
        return this.delegate.rpma_utils_get_ibv_context(addr, type, ibvCtxPtr);
    }

    @Override
    public int rpma_utils_ibv_context_is_odp_capable(long ibvCtx, long isOdpCapable) {
        return this.delegate.rpma_utils_ibv_context_is_odp_capable(ibvCtx, isOdpCapable);
    }

    @Override
    public int rpma_peer_cfg_new(long pcfgPtr) {
        return this.delegate.rpma_peer_cfg_new(pcfgPtr);
    }

    @Override
    public int rpma_peer_cfg_delete(long pcfgPtr) {
        return this.delegate.rpma_peer_cfg_delete(pcfgPtr);
    }

    @Override
    public int rpma_peer_cfg_set_direct_write_to_pmem(long pcfg, byte supported) {
        return this.delegate.rpma_peer_cfg_set_direct_write_to_pmem(pcfg, supported);
    }

    @Override
    public int rpma_peer_cfg_get_direct_write_to_pmem(long pcfg, long supported) {
        return this.delegate.rpma_peer_cfg_get_direct_write_to_pmem(pcfg, supported);
    }

    @Override
    public int rpma_peer_cfg_get_descriptor(long pcfg, long desc) {
        return this.delegate.rpma_peer_cfg_get_descriptor(pcfg, desc);
    }

    @Override
    public int rpma_peer_cfg_get_descriptor_size(long pcfg, long descSize) {
        return this.delegate.rpma_peer_cfg_get_descriptor_size(pcfg, descSize);
    }

    @Override
    public int rpma_peer_cfg_from_descriptor(long desc, long descSize, long pcfgPtr) {
        return this.delegate.rpma_peer_cfg_from_descriptor(desc, descSize, pcfgPtr);
    }

    @Override
    public int rpma_peer_new(long ibvCtx, long peerPtr) {
        return this.delegate.rpma_peer_new(ibvCtx, peerPtr);
    }

    @Override
    public int rpma_peer_delete(long peerPtr) {
        return this.delegate.rpma_peer_delete(peerPtr);
    }

    @Override
    public int rpma_mr_reg(long peer, long ptr, long size, int usage, long mrPtr) {
        return this.delegate.rpma_mr_reg(peer, ptr, size, usage, mrPtr);
    }

    @Override
    public int rpma_mr_dereg(long mrPtr) {
        return this.delegate.rpma_mr_dereg(mrPtr);
    }

    @Override
    public int rpma_mr_get_descriptor(long mr, long desc) {
        return this.delegate.rpma_mr_get_descriptor(mr, desc);
    }

    @Override
    public int rpma_mr_remote_from_descriptor(long desc, long descSize, long mrPtr) {
        return this.delegate.rpma_mr_remote_from_descriptor(desc, descSize, mrPtr);
    }

    @Override
    public int rpma_mr_get_descriptor_size(long mr, long descSize) {
        return this.delegate.rpma_mr_get_descriptor_size(mr, descSize);
    }

    @Override
    public int rpma_mr_get_ptr(long mr, long ptr) {
        return this.delegate.rpma_mr_get_ptr(mr, ptr);
    }

    @Override
    public int rpma_mr_get_size(long mr, long size) {
        return this.delegate.rpma_mr_get_size(mr, size);
    }

    @Override
    public int rpma_mr_remote_get_size(long mr, long size) {
        return this.delegate.rpma_mr_remote_get_size(mr, size);
    }

    @Override
    public int rpma_mr_remote_get_flush_type(long mr, long flushType) {
        return this.delegate.rpma_mr_remote_get_flush_type(mr, flushType);
    }

    @Override
    public int rpma_mr_remote_delete(long mrPtr) {
        return this.delegate.rpma_mr_remote_delete(mrPtr);
    }

    @Override
    public int rpma_mr_advise(long mr, long offset, long len, int advice, int flags) {
        return this.delegate.rpma_mr_advise(mr, offset, len, advice, flags);
    }

    @Override
    public int rpma_conn_cfg_new(long cfgPtr) {
        return this.delegate.rpma_conn_cfg_new(cfgPtr);
    }

    @Override
    public int rpma_conn_cfg_delete(long cfgPtr) {
        return this.delegate.rpma_conn_cfg_delete(cfgPtr);
    }

    @Override
    public int rpma_conn_cfg_set_timeout(long cfg, int timeoutMs) {
        return this.delegate.rpma_conn_cfg_set_timeout(cfg, timeoutMs);
    }

    @Override
    public int rpma_conn_cfg_get_timeout(long cfg, long timeoutMs) {
        return this.delegate.rpma_conn_cfg_get_timeout(cfg, timeoutMs);
    }

    @Override
    public int rpma_conn_cfg_set_cq_size(long cfg, int cqSize) {
        return this.delegate.rpma_conn_cfg_set_cq_size(cfg, cqSize);
    }

    @Override
    public int rpma_conn_cfg_get_compl_channel(long cfg, long shared) {
        return this.delegate.rpma_conn_cfg_get_compl_channel(cfg, shared);
    }

    @Override
    public int rpma_conn_cfg_set_compl_channel(long cfg, byte shared) {
        return this.delegate.rpma_conn_cfg_set_compl_channel(cfg, shared);
    }

    @Override
    public int rpma_conn_cfg_get_cq_size(long cfg, long cqSize) {
        return this.delegate.rpma_conn_cfg_get_cq_size(cfg, cqSize);
    }

    @Override
    public int rpma_conn_cfg_set_rcq_size(long cfg, int rcqSize) {
        return this.delegate.rpma_conn_cfg_set_rcq_size(cfg, rcqSize);
    }

    @Override
    public int rpma_conn_cfg_get_rcq_size(long cfg, long rcqSize) {
        return this.delegate.rpma_conn_cfg_get_rcq_size(cfg, rcqSize);
    }

    @Override
    public int rpma_conn_cfg_set_sq_size(long cfg, int sqSize) {
        return this.delegate.rpma_conn_cfg_set_sq_size(cfg, sqSize);
    }

    @Override
    public int rpma_conn_cfg_get_sq_size(long cfg, long sqSize) {
        return this.delegate.rpma_conn_cfg_get_sq_size(cfg, sqSize);
    }

    @Override
    public int rpma_conn_cfg_set_rq_size(long cfg, int rqSize) {
        return this.delegate.rpma_conn_cfg_set_rq_size(cfg, rqSize);
    }

    @Override
    public int rpma_conn_cfg_get_rq_size(long cfg, long rqSize) {
        return this.delegate.rpma_conn_cfg_get_rq_size(cfg, rqSize);
    }

    @Override
    public int rpma_conn_cfg_set_srq(long cfg, long srq) {
        return this.delegate.rpma_conn_cfg_set_srq(cfg, srq);
    }

    @Override
    public int rpma_conn_cfg_get_srq(long cfg, long srqPtr) {
        return this.delegate.rpma_conn_cfg_get_srq(cfg, srqPtr);
    }

    @Override
    public int rpma_conn_get_event_fd(long conn, long fd) {
        return this.delegate.rpma_conn_get_event_fd(conn, fd);
    }

    @Override
    public int rpma_conn_next_event(long conn, long event) {
        return this.delegate.rpma_conn_next_event(conn, event);
    }

    @Override
    public String rpma_utils_conn_event_2str(int connEvent) {
        return this.delegate.rpma_utils_conn_event_2str(connEvent);
    }

    @Override
    public int rpma_conn_get_private_data(long conn, long pdata) {
        return this.delegate.rpma_conn_get_private_data(conn, pdata);
    }

    @Override
    public int rpma_conn_apply_remote_peer_cfg(long conn, long pcfg) {
        return this.delegate.rpma_conn_apply_remote_peer_cfg(conn, pcfg);
    }

    @Override
    public int rpma_conn_get_qp_num(long conn, long qpNum) {
        return this.delegate.rpma_conn_get_qp_num(conn, qpNum);
    }

    @Override
    public int rpma_conn_get_cq(long conn, long cqPtr) {
        return this.delegate.rpma_conn_get_cq(conn, cqPtr);
    }

    @Override
    public int rpma_conn_get_rcq(long conn, long rcqPtr) {
        return this.delegate.rpma_conn_get_rcq(conn, rcqPtr);
    }

    @Override
    public int rpma_conn_disconnect(long conn) {
        return this.delegate.rpma_conn_disconnect(conn);
    }

    @Override
    public int rpma_conn_delete(long connPtr) {
        return this.delegate.rpma_conn_delete(connPtr);
    }

    @Override
    public int rpma_conn_req_new(long peer, String addr, String port, long cfg, long reqPtr) {
        return this.delegate.rpma_conn_req_new(peer, addr, port, cfg, reqPtr);
    }

    @Override
    public int rpma_conn_req_delete(long reqPtr) {
        return this.delegate.rpma_conn_req_delete(reqPtr);
    }

    @Override
    public int rpma_conn_req_connect(long reqPtr, long pdata, long connPtr) {
        return this.delegate.rpma_conn_req_connect(reqPtr, pdata, connPtr);
    }

    @Override
    public int rpma_conn_get_compl_fd(long conn, long fd) {
        return this.delegate.rpma_conn_get_compl_fd(conn, fd);
    }

    @Override
    public int rpma_conn_wait(long conn, int flags, long cq, long isRcq) {
        return this.delegate.rpma_conn_wait(conn, flags, cq, isRcq);
    }

    @Override
    public int rpma_conn_req_recv(long req, long dst, long offset, long len, long opContext) {
        return this.delegate.rpma_conn_req_recv(req, dst, offset, len, opContext);
    }

    @Override
    public int rpma_ep_listen(long peer, String addr, String port, long epPtr) {
        return this.delegate.rpma_ep_listen(peer, addr, port, epPtr);
    }

    @Override
    public int rpma_ep_shutdown(long epPtr) {
        return this.delegate.rpma_ep_shutdown(epPtr);
    }

    @Override
    public int rpma_ep_get_fd(long ep, long fd) {
        return this.delegate.rpma_ep_get_fd(ep, fd);
    }

    @Override
    public int rpma_ep_next_conn_req(long ep, long cfg, long reqPtr) {
        return this.delegate.rpma_ep_next_conn_req(ep, cfg, reqPtr);
    }

    @Override
    public int rpma_conn_req_get_private_data(long req, long pdata) {
        return this.delegate.rpma_conn_req_get_private_data(req, pdata);
    }

    @Override
    public int rpma_srq_cfg_new(long cfgPtr) {
        return this.delegate.rpma_srq_cfg_new(cfgPtr);
    }

    @Override
    public int rpma_srq_cfg_delete(long cfgPtr) {
        return this.delegate.rpma_srq_cfg_delete(cfgPtr);
    }

    @Override
    public int rpma_srq_cfg_set_rq_size(long cfg, int rqSize) {
        return this.delegate.rpma_srq_cfg_set_rq_size(cfg, rqSize);
    }

    @Override
    public int rpma_srq_cfg_get_rq_size(long cfg, long rqSize) {
        return this.delegate.rpma_srq_cfg_get_rq_size(cfg, rqSize);
    }

    @Override
    public int rpma_srq_cfg_set_rcq_size(long cfg, int rcqSize) {
        return this.delegate.rpma_srq_cfg_set_rcq_size(cfg, rcqSize);
    }

    @Override
    public int rpma_srq_cfg_get_rcq_size(long cfg, long rcqSize) {
        return this.delegate.rpma_srq_cfg_get_rcq_size(cfg, rcqSize);
    }

    @Override
    public int rpma_srq_new(long peer, long cfg, long srqPtr) {
        return this.delegate.rpma_srq_new(peer, cfg, srqPtr);
    }

    @Override
    public int rpma_srq_delete(long srqPtr) {
        return this.delegate.rpma_srq_delete(srqPtr);
    }

    @Override
    public int rpma_srq_recv(long srq, long dst, long offset, long len, long opContext) {
        return this.delegate.rpma_srq_recv(srq, dst, offset, len, opContext);
    }

    @Override
    public int rpma_srq_get_rcq(long srq, long rcqPtr) {
        return this.delegate.rpma_srq_get_rcq(srq, rcqPtr);
    }

    @Override
    public int rpma_read(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, long opContext) {
        return this.delegate.rpma_read(conn, dst, dstOffset, src, srcOffset, len, flags, opContext);
    }

    @Override
    public int rpma_write(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, long opContext) {
        return this.delegate.rpma_write(conn, dst, dstOffset, src, srcOffset, len, flags, opContext);
    }

    @Override
    public int rpma_write_with_imm(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, int imm, long opContext) {
        return this.delegate.rpma_write_with_imm(conn, dst, dstOffset, src, srcOffset, len, flags, imm, opContext);
    }

    @Override
    public int rpma_atomic_write(long conn, long dst, long dstOffset, long srcPtr, int flags, long opContext) {
        return this.delegate.rpma_atomic_write(conn, dst, dstOffset, srcPtr, flags, opContext);
    }

    @Override
    public int rpma_flush(long conn, long dst, long dstOffset, long len, int type, int flags, long opContext) {
        return this.delegate.rpma_flush(conn, dst, dstOffset, len, type, flags, opContext);
    }

    @Override
    public int rpma_send(long conn, long src, long offset, long len, int flags, long opContext) {
        return this.delegate.rpma_send(conn, src, offset, len, flags, opContext);
    }

    @Override
    public int rpma_send_with_imm(long conn, long src, long offset, long len, int flags, int imm, long opContext) {
        return this.delegate.rpma_send_with_imm(conn, src, offset, len, flags, imm, opContext);
    }

    @Override
    public int rpma_recv(long conn, long dst, long offset, long len, long opContext) {
        return this.delegate.rpma_recv(conn, dst, offset, len, opContext);
    }

    @Override
    public int rpma_cq_get_fd(long cq, long fd) {
        return this.delegate.rpma_cq_get_fd(cq, fd);
    }

    @Override
    public int rpma_cq_wait(long cq) {
        return this.delegate.rpma_cq_wait(cq);
    }

    @Override
    public int rpma_cq_get_wc(long cq, int numEntries, long wc, long numEntriesGot) {
        return this.delegate.rpma_cq_get_wc(cq, numEntries, wc, numEntriesGot);
    }

    @Override
    public String rpma_err_2str(int ret) {
        return this.delegate.rpma_err_2str(ret);
    }

    @Override
    public int rpma_log_set_threshold(int threshold, int level) {
        return this.delegate.rpma_log_set_threshold(threshold, level);
    }

    @Override
    public int rpma_log_get_threshold(int threshold, long level) {
        return this.delegate.rpma_log_get_threshold(threshold, level);
    }

    @Override
    public int rpma_log_set_function(long logFunction) {
        return this.delegate.rpma_log_set_function(logFunction);
    }
}

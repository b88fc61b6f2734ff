package dev.rpma.binding.internal;

/**
 * The raw layer: every public function of librpma 1.2/1.3, with its C name and C prototype.
 *
 * <p>Internal API. Pointers of every kind ({@code struct rpma_x *}, {@code T **}, {@code int *},
 * {@code void *}) are plain {@code long} addresses so that no JNA type leaks out and the data path
 * allocates nothing; C {@code bool} is one byte ({@code byte}); {@code size_t} is {@code long}.
 * Out-parameters point at memory the caller owns. The typed API in {@code dev.rpma.binding} is the only
 * caller; tests replace this interface with a scripted fake.
 *
 * <p>This is the one list of librpma's functions: the build generates the JNA direct mapping
 * ({@code DirectLibRpma}) and the test-jar's forwarding layer from it, so each declaration stays on
 * one line, after a one-line Javadoc that gives its C prototype, and its Java name is the C symbol.
 */
public interface LibRpma {

    /** {@code errno} as it was right after the last call of this thread into librpma. */
    int lastErrno();

    /** {@code int rpma_utils_get_ibv_context(const char *addr, enum rpma_util_ibv_context_type type, struct ibv_context **ibv_ctx_ptr);} */
    int rpma_utils_get_ibv_context(String addr, int type, long ibvCtxPtr);

    /** {@code int rpma_utils_ibv_context_is_odp_capable(struct ibv_context *ibv_ctx, int *is_odp_capable);} */
    int rpma_utils_ibv_context_is_odp_capable(long ibvCtx, long isOdpCapable);

    /** {@code int rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr);} */
    int rpma_peer_cfg_new(long pcfgPtr);

    /** {@code int rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr);} */
    int rpma_peer_cfg_delete(long pcfgPtr);

    /** {@code int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg, bool supported);} */
    int rpma_peer_cfg_set_direct_write_to_pmem(long pcfg, byte supported);

    /** {@code int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg, bool *supported);} */
    int rpma_peer_cfg_get_direct_write_to_pmem(long pcfg, long supported);

    /** {@code int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc);} */
    int rpma_peer_cfg_get_descriptor(long pcfg, long desc);

    /** {@code int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg, size_t *desc_size);} */
    int rpma_peer_cfg_get_descriptor_size(long pcfg, long descSize);

    /** {@code int rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size, struct rpma_peer_cfg **pcfg_ptr);} */
    int rpma_peer_cfg_from_descriptor(long desc, long descSize, long pcfgPtr);

    /** {@code int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr);} */
    int rpma_peer_new(long ibvCtx, long peerPtr);

    /** {@code int rpma_peer_delete(struct rpma_peer **peer_ptr);} */
    int rpma_peer_delete(long peerPtr);

    /** {@code int rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage, struct rpma_mr_local **mr_ptr);} */
    int rpma_mr_reg(long peer, long ptr, long size, int usage, long mrPtr);

    /** {@code int rpma_mr_dereg(struct rpma_mr_local **mr_ptr);} */
    int rpma_mr_dereg(long mrPtr);

    /** {@code int rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc);} */
    int rpma_mr_get_descriptor(long mr, long desc);

    /** {@code int rpma_mr_remote_from_descriptor(const void *desc, size_t desc_size, struct rpma_mr_remote **mr_ptr);} */
    int rpma_mr_remote_from_descriptor(long desc, long descSize, long mrPtr);

    /** {@code int rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size);} */
    int rpma_mr_get_descriptor_size(long mr, long descSize);

    /** {@code int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr);} */
    int rpma_mr_get_ptr(long mr, long ptr);

    /** {@code int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size);} */
    int rpma_mr_get_size(long mr, long size);

    /** {@code int rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size);} */
    int rpma_mr_remote_get_size(long mr, long size);

    /** {@code int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr, int *flush_type);} */
    int rpma_mr_remote_get_flush_type(long mr, long flushType);

    /** {@code int rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr);} */
    int rpma_mr_remote_delete(long mrPtr);

    /** {@code int rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len, int advice, uint32_t flags);} */
    int rpma_mr_advise(long mr, long offset, long len, int advice, int flags);

    /** {@code int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr);} */
    int rpma_conn_cfg_new(long cfgPtr);

    /** {@code int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr);} */
    int rpma_conn_cfg_delete(long cfgPtr);

    /** {@code int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms);} */
    int rpma_conn_cfg_set_timeout(long cfg, int timeoutMs);

    /** {@code int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms);} */
    int rpma_conn_cfg_get_timeout(long cfg, long timeoutMs);

    /** {@code int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size);} */
    int rpma_conn_cfg_set_cq_size(long cfg, int cqSize);

    /** {@code int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared);} */
    int rpma_conn_cfg_get_compl_channel(long cfg, long shared);

    /** {@code int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared);} */
    int rpma_conn_cfg_set_compl_channel(long cfg, byte shared);

    /** {@code int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size);} */
    int rpma_conn_cfg_get_cq_size(long cfg, long cqSize);

    /** {@code int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size);} */
    int rpma_conn_cfg_set_rcq_size(long cfg, int rcqSize);

    /** {@code int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size);} */
    int rpma_conn_cfg_get_rcq_size(long cfg, long rcqSize);

    /** {@code int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size);} */
    int rpma_conn_cfg_set_sq_size(long cfg, int sqSize);

    /** {@code int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg, uint32_t *sq_size);} */
    int rpma_conn_cfg_get_sq_size(long cfg, long sqSize);

    /** {@code int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size);} */
    int rpma_conn_cfg_set_rq_size(long cfg, int rqSize);

    /** {@code int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg, uint32_t *rq_size);} */
    int rpma_conn_cfg_get_rq_size(long cfg, long rqSize);

    /** {@code int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq);} */
    int rpma_conn_cfg_set_srq(long cfg, long srq);

    /** {@code int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg, struct rpma_srq **srq_ptr);} */
    int rpma_conn_cfg_get_srq(long cfg, long srqPtr);

    /** {@code int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd);} */
    int rpma_conn_get_event_fd(long conn, long fd);

    /** {@code int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event);} */
    int rpma_conn_next_event(long conn, long event);

    /** {@code const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event);} */
    String rpma_utils_conn_event_2str(int connEvent);

    /** {@code int rpma_conn_get_private_data(const struct rpma_conn *conn, struct rpma_conn_private_data *pdata);} */
    int rpma_conn_get_private_data(long conn, long pdata);

    /** {@code int rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn, const struct rpma_peer_cfg *pcfg);} */
    int rpma_conn_apply_remote_peer_cfg(long conn, long pcfg);

    /** {@code int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num);} */
    int rpma_conn_get_qp_num(long conn, long qpNum);

    /** {@code int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr);} */
    int rpma_conn_get_cq(long conn, long cqPtr);

    /** {@code int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr);} */
    int rpma_conn_get_rcq(long conn, long rcqPtr);

    /** {@code int rpma_conn_disconnect(struct rpma_conn *conn);} */
    int rpma_conn_disconnect(long conn);

    /** {@code int rpma_conn_delete(struct rpma_conn **conn_ptr);} */
    int rpma_conn_delete(long connPtr);

    /** {@code int rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port, const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr);} */
    int rpma_conn_req_new(long peer, String addr, String port, long cfg, long reqPtr);

    /** {@code int rpma_conn_req_delete(struct rpma_conn_req **req_ptr);} */
    int rpma_conn_req_delete(long reqPtr);

    /** {@code int rpma_conn_req_connect(struct rpma_conn_req **req_ptr, const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr);} */
    int rpma_conn_req_connect(long reqPtr, long pdata, long connPtr);

    /** {@code int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd);} */
    int rpma_conn_get_compl_fd(long conn, long fd);

    /** {@code int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq, bool *is_rcq);} */
    int rpma_conn_wait(long conn, int flags, long cq, long isRcq);

    /** {@code int rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst, size_t offset, size_t len, const void *op_context);} */
    int rpma_conn_req_recv(long req, long dst, long offset, long len, long opContext);

    /** {@code int rpma_ep_listen(struct rpma_peer *peer, const char *addr, const char *port, struct rpma_ep **ep_ptr);} */
    int rpma_ep_listen(long peer, String addr, String port, long epPtr);

    /** {@code int rpma_ep_shutdown(struct rpma_ep **ep_ptr);} */
    int rpma_ep_shutdown(long epPtr);

    /** {@code int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd);} */
    int rpma_ep_get_fd(long ep, long fd);

    /** {@code int rpma_ep_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr);} */
    int rpma_ep_next_conn_req(long ep, long cfg, long reqPtr);

    /** {@code int rpma_conn_req_get_private_data(const struct rpma_conn_req *req, struct rpma_conn_private_data *pdata);} */
    int rpma_conn_req_get_private_data(long req, long pdata);

    /** {@code int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr);} */
    int rpma_srq_cfg_new(long cfgPtr);

    /** {@code int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr);} */
    int rpma_srq_cfg_delete(long cfgPtr);

    /** {@code int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size);} */
    int rpma_srq_cfg_set_rq_size(long cfg, int rqSize);

    /** {@code int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size);} */
    int rpma_srq_cfg_get_rq_size(long cfg, long rqSize);

    /** {@code int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size);} */
    int rpma_srq_cfg_set_rcq_size(long cfg, int rcqSize);

    /** {@code int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size);} */
    int rpma_srq_cfg_get_rcq_size(long cfg, long rcqSize);

    /** {@code int rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg, struct rpma_srq **srq_ptr);} */
    int rpma_srq_new(long peer, long cfg, long srqPtr);

    /** {@code int rpma_srq_delete(struct rpma_srq **srq_ptr);} */
    int rpma_srq_delete(long srqPtr);

    /** {@code int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset, size_t len, const void *op_context);} */
    int rpma_srq_recv(long srq, long dst, long offset, long len, long opContext);

    /** {@code int rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr);} */
    int rpma_srq_get_rcq(long srq, long rcqPtr);

    /** {@code int rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t dst_offset, const struct rpma_mr_remote *src, size_t src_offset, size_t len, int flags, const void *op_context);} */
    int rpma_read(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, long opContext);

    /** {@code int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags, const void *op_context);} */
    int rpma_write(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, long opContext);

    /** {@code int rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags, uint32_t imm, const void *op_context);} */
    int rpma_write_with_imm(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags, int imm, long opContext);

    /** {@code int rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, const char src[8], int flags, const void *op_context);} */
    int rpma_atomic_write(long conn, long dst, long dstOffset, long srcPtr, int flags, long opContext);

    /** {@code int rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, size_t len, enum rpma_flush_type type, int flags, const void *op_context);} */
    int rpma_flush(long conn, long dst, long dstOffset, long len, int type, int flags, long opContext);

    /** {@code int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len, int flags, const void *op_context);} */
    int rpma_send(long conn, long src, long offset, long len, int flags, long opContext);

    /** {@code int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len, int flags, uint32_t imm, const void *op_context);} */
    int rpma_send_with_imm(long conn, long src, long offset, long len, int flags, int imm, long opContext);

    /** {@code int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len, const void *op_context);} */
    int rpma_recv(long conn, long dst, long offset, long len, long opContext);

    /** {@code int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd);} */
    int rpma_cq_get_fd(long cq, long fd);

    /** {@code int rpma_cq_wait(struct rpma_cq *cq);} */
    int rpma_cq_wait(long cq);

    /** {@code int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got);} */
    int rpma_cq_get_wc(long cq, int numEntries, long wc, long numEntriesGot);

    /** {@code const char *rpma_err_2str(int ret);} */
    String rpma_err_2str(int ret);

    /** {@code int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level);} */
    int rpma_log_set_threshold(int threshold, int level);

    /** {@code int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level *level);} */
    int rpma_log_get_threshold(int threshold, long level);

    /** {@code int rpma_log_set_function(rpma_log_function *log_function);} */
    int rpma_log_set_function(long logFunction);
}

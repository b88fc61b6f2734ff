/*
 * Layout probe for LayoutNativeTest: prints "name value" lines with the sizes, offsets and
 * constants of librpma.h, infiniband/verbs.h and libc that the Java binding hardcodes.
 * Compiled and run by the test at test time: gcc -o target/layout_probe src/test/c/layout_probe.c
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <librpma.h>

#define SIZE(t) printf("sizeof(" #t ") %zu\n", sizeof(t))
#define OFFSET(t, f) printf("offsetof(" #t ", " #f ") %zu\n", offsetof(t, f))
#define VALUE(c) printf(#c " %ld\n", (long)(c))

int
main(void)
{
	SIZE(struct ibv_wc);
	OFFSET(struct ibv_wc, wr_id);
	OFFSET(struct ibv_wc, status);
	OFFSET(struct ibv_wc, opcode);
	OFFSET(struct ibv_wc, vendor_err);
	OFFSET(struct ibv_wc, byte_len);
	OFFSET(struct ibv_wc, imm_data);
	OFFSET(struct ibv_wc, qp_num);
	OFFSET(struct ibv_wc, src_qp);
	OFFSET(struct ibv_wc, wc_flags);
	VALUE(IBV_WC_WITH_IMM);
	VALUE(IBV_WC_SUCCESS);
	VALUE(IBV_WC_SEND);
	VALUE(IBV_WC_RDMA_WRITE);
	VALUE(IBV_WC_RDMA_READ);
	VALUE(IBV_WC_COMP_SWAP);
	VALUE(IBV_WC_FETCH_ADD);
	VALUE(IBV_WC_BIND_MW);
	VALUE(IBV_WC_LOCAL_INV);
	VALUE(IBV_WC_RECV);
	VALUE(IBV_WC_RECV_RDMA_WITH_IMM);

	SIZE(struct rpma_conn_private_data);
	OFFSET(struct rpma_conn_private_data, ptr);
	OFFSET(struct rpma_conn_private_data, len);

	VALUE(RPMA_E_UNKNOWN);
	VALUE(RPMA_E_NOSUPP);
	VALUE(RPMA_E_PROVIDER);
	VALUE(RPMA_E_NOMEM);
	VALUE(RPMA_E_INVAL);
	VALUE(RPMA_E_NO_COMPLETION);
	VALUE(RPMA_E_NO_EVENT);
	VALUE(RPMA_E_AGAIN);
	VALUE(RPMA_E_SHARED_CHANNEL);
	VALUE(RPMA_E_NOT_SHARED_CHNL);

	VALUE(RPMA_CONN_UNDEFINED);
	VALUE(RPMA_CONN_ESTABLISHED);
	VALUE(RPMA_CONN_CLOSED);
	VALUE(RPMA_CONN_LOST);
	VALUE(RPMA_CONN_REJECTED);
	VALUE(RPMA_CONN_UNREACHABLE);

	VALUE(RPMA_UTIL_IBV_CONTEXT_LOCAL);
	VALUE(RPMA_UTIL_IBV_CONTEXT_REMOTE);

	VALUE(RPMA_MR_USAGE_READ_SRC);
	VALUE(RPMA_MR_USAGE_READ_DST);
	VALUE(RPMA_MR_USAGE_WRITE_SRC);
	VALUE(RPMA_MR_USAGE_WRITE_DST);
	VALUE(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	VALUE(RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	VALUE(RPMA_MR_USAGE_SEND);
	VALUE(RPMA_MR_USAGE_RECV);
	VALUE(RPMA_FLUSH_TYPE_PERSISTENT);
	VALUE(RPMA_FLUSH_TYPE_VISIBILITY);
	VALUE(RPMA_F_COMPLETION_ON_ERROR);
	VALUE(RPMA_F_COMPLETION_ALWAYS);

	VALUE(RPMA_LOG_DISABLED);
	VALUE(RPMA_LOG_LEVEL_FATAL);
	VALUE(RPMA_LOG_LEVEL_ERROR);
	VALUE(RPMA_LOG_LEVEL_WARNING);
	VALUE(RPMA_LOG_LEVEL_NOTICE);
	VALUE(RPMA_LOG_LEVEL_INFO);
	VALUE(RPMA_LOG_LEVEL_DEBUG);
	VALUE(RPMA_LOG_THRESHOLD);
	VALUE(RPMA_LOG_THRESHOLD_AUX);
	VALUE(RPMA_LOG_USE_DEFAULT_FUNCTION);

	VALUE(F_GETFL);
	VALUE(F_SETFL);
	VALUE(O_NONBLOCK);
	VALUE(POLLIN);
	SIZE(struct pollfd);
	VALUE(EFD_CLOEXEC);
	VALUE(EFD_NONBLOCK);
	VALUE(RLIMIT_MEMLOCK);
	VALUE(RLIM_INFINITY);
	SIZE(struct rlimit);
	OFFSET(struct rlimit, rlim_cur);
	OFFSET(struct rlimit, rlim_max);
	VALUE(_SC_PAGESIZE);

	VALUE(EPERM);
	VALUE(ENOENT);
	VALUE(EINTR);
	VALUE(EIO);
	VALUE(EBADF);
	VALUE(EAGAIN);
	VALUE(ENOMEM);
	VALUE(EACCES);
	VALUE(EFAULT);
	VALUE(EBUSY);
	VALUE(EEXIST);
	VALUE(ENODEV);
	VALUE(EINVAL);
	VALUE(ENOSPC);
	VALUE(ENODATA);
	VALUE(EPROTO);
	VALUE(EOPNOTSUPP);
	VALUE(EADDRINUSE);
	VALUE(EADDRNOTAVAIL);
	VALUE(ENETUNREACH);
	VALUE(ECONNRESET);
	VALUE(ETIMEDOUT);
	VALUE(ECONNREFUSED);
	VALUE(EHOSTUNREACH);
	return 0;
}

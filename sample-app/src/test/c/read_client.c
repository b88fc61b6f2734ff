/*
 * read_client.c - an end-to-end test client that behaves as librpma's example
 * 02-read-to-volatile client, on the wire and in the order of its calls, with every wait bounded.
 *
 *   read_client ADDR PORT [--timeout SEC] [--sessions N]
 *
 * Registers a 1 KiB local buffer (RPMA_MR_USAGE_READ_DST), connects to ADDR:PORT without
 * private data and reads the server's accept private data as the examples' common_data:
 *   struct common_data { uint16_t data_offset; uint8_t mr_desc_size; uint8_t pcfg_desc_size;
 *                        char descriptors[24]; }      (28 bytes, little-endian)
 * It turns descriptors[0 .. mr_desc_size) into a remote MR (rpma_mr_remote_from_descriptor),
 * checks that the remote region fits 1 KiB, reads all of it with rpma_read
 * (RPMA_F_COMPLETION_ALWAYS), waits for the completion (rpma_cq_wait + rpma_cq_get_wc; status
 * success, opcode IBV_WC_RDMA_READ) and prints
 *   Read a message: <the region as a C string>
 * Then it deletes the remote MR, disconnects, waits for CLOSED and deletes everything.
 * No retry on REJECTED (the example has none).
 *
 * --sessions N (default 1): N such sessions one after the other on the one peer and buffer, as a
 * long-lived client would; the first that fails ends the run with its exit code.
 *
 * --timeout SEC (default 60) bounds the whole run; the completion wait also watches the
 * connection's CM events, so a server that disconnects instead of letting the read finish
 * fails the run at once.
 *
 * Exit codes: 0 the string was read; 1 a librpma call failed, bad private data, a failed
 * completion or an unexpected event; 2 usage; 3 timed out. Every failure prints one
 * "read_client: ..." line on stderr.
 */
#define _GNU_SOURCE
#define PROG_NAME "read_client"
#include "test_client.h"
#include <infiniband/verbs.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KILOBYTE 1024
#define DESCRIPTORS_MAX_SIZE 24
#define COMMON_DATA_HEADER 4          /* data_offset (u16), mr_desc_size (u8), pcfg_desc_size (u8) */

/*
 * One session: connect, read the server's region (described by its private data) into dst_mr,
 * print it, disconnect, wait for CLOSED and delete. Returns the session's exit code.
 */
static int read_session(struct rpma_peer *peer, const char *addr, const char *port, struct rpma_mr_local *dst_mr,
		char *dst, long timeout_s, uint64_t deadline)
{
	struct rpma_conn *conn = NULL;
	struct rpma_mr_remote *src_mr = NULL;
	struct rpma_cq *cq = NULL;
	int ev_fd = -1, cq_fd = -1, ret, rc = EXIT_FAIL;
	bool established = false;

	memset(dst, 0, KILOBYTE);   /* what is printed was read in this session */
	if (connect_to(peer, addr, port, NULL, NULL, 0, NULL, &conn))
		return EXIT_FAIL;
	ret = wait_established(conn, &ev_fd, deadline, (uint64_t)timeout_s, false);
	if (ret == WAIT_TIMEOUT)
		rc = EXIT_TIMEOUT;
	if (ret)
		goto out_disconnect;
	established = true;

	/* the server's memory region, as example 02's common_data */
	struct rpma_conn_private_data pdata = { NULL, 0 };
	if ((ret = rpma_conn_get_private_data(conn, &pdata))) {
		fail("rpma_conn_get_private_data", ret);
		goto out_disconnect;
	}
	if (pdata.ptr == NULL || pdata.len < COMMON_DATA_HEADER) {
		fprintf(stderr, "read_client: the server has not provided a remote memory region "
			"(private data of %u bytes)\n", (unsigned)pdata.len);
		goto out_disconnect;
	}
	const uint8_t *p = pdata.ptr;
	uint16_t data_offset = (uint16_t)(p[0] | p[1] << 8);
	uint8_t mr_desc_size = p[2], pcfg_desc_size = p[3];
	if ((size_t)mr_desc_size + pcfg_desc_size > DESCRIPTORS_MAX_SIZE ||
			COMMON_DATA_HEADER + (size_t)mr_desc_size > pdata.len) {
		fprintf(stderr, "read_client: bad common_data: mr_desc_size %u pcfg_desc_size %u in %u bytes\n",
			mr_desc_size, pcfg_desc_size, (unsigned)pdata.len);
		goto out_disconnect;
	}
	(void) data_offset;   /* the example reads the whole region from offset 0 */
	if ((ret = rpma_mr_remote_from_descriptor(p + COMMON_DATA_HEADER, mr_desc_size, &src_mr))) {
		fail("rpma_mr_remote_from_descriptor", ret);
		goto out_disconnect;
	}
	size_t src_size = 0;
	if ((ret = rpma_mr_remote_get_size(src_mr, &src_size))) {
		fail("rpma_mr_remote_get_size", ret);
		goto out_remote;
	}
	if (src_size > KILOBYTE) {
		fprintf(stderr, "read_client: the remote region is too big for the %d-byte buffer (%zu)\n",
			KILOBYTE, src_size);
		goto out_remote;
	}

	if ((ret = rpma_read(conn, dst_mr, 0, src_mr, 0, src_size, RPMA_F_COMPLETION_ALWAYS, NULL))) {
		fail("rpma_read", ret);
		goto out_remote;
	}
	if (get_cq_fd(conn, &cq, &cq_fd))
		goto out_remote;
	struct ibv_wc wc;
	ret = wait_completion(conn, cq, cq_fd, ev_fd, deadline, &wc);
	if (ret == WAIT_TIMEOUT) {
		fprintf(stderr, "read_client: the read did not complete within %ld s\n", timeout_s);
		rc = EXIT_TIMEOUT;
		goto out_remote;
	}
	if (ret)
		goto out_remote;
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "read_client: rpma_read() failed: %s\n", ibv_wc_status_str(wc.status));
		goto out_remote;
	}
	if (wc.opcode != IBV_WC_RDMA_READ) {
		fprintf(stderr, "read_client: unexpected wc.opcode value (%d != %d)\n", wc.opcode, IBV_WC_RDMA_READ);
		goto out_remote;
	}
	printf("Read a message: %.*s\n", (int)strnlen(dst, src_size), dst);
	fflush(stdout);
	rc = EXIT_OK;

out_remote:
	rc = cleanup_rc(rc, "rpma_mr_remote_delete", rpma_mr_remote_delete(&src_mr));
out_disconnect:
	/* the client ends it: disconnect, wait (bounded) for CLOSED, delete; a connection that
	 * never got established is only deleted */
	return end_connection(&conn, established, false, ev_fd, deadline, rc);
}

int main(int argc, char **argv)
{
	const char *addr, *port;
	long timeout_s, sessions;
	uint64_t deadline = parse_addr_port_timeout(argc, argv, &addr, &port, &timeout_s, &sessions);

	init_output();

	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *dst_mr = NULL;
	char *dst = NULL;
	int ret, rc = EXIT_FAIL;

	if (new_peer(addr, &peer))
		return EXIT_FAIL;
	/* page-aligned and zeroed, as the example's malloc_aligned() */
	if (posix_memalign((void **)&dst, (size_t)sysconf(_SC_PAGESIZE), KILOBYTE)) {
		fprintf(stderr, "read_client: out of memory\n");
		goto out_peer;
	}
	if ((ret = rpma_mr_reg(peer, dst, KILOBYTE, RPMA_MR_USAGE_READ_DST, &dst_mr))) {
		fail("rpma_mr_reg", ret);
		goto out_free;
	}
	rc = EXIT_OK;
	for (long session = 0; session < sessions && rc == EXIT_OK; session++)
		rc = read_session(peer, addr, port, dst_mr, dst, timeout_s, deadline);
	rc = cleanup_rc(rc, "rpma_mr_dereg", rpma_mr_dereg(&dst_mr));
out_free:
	free(dst);
out_peer:
	return cleanup_rc(rc, "rpma_peer_delete", rpma_peer_delete(&peer));
}

/*
 * bad_client.c - a test tool that sends one message a ping-pong server does not expect and
 * reports how the server ends the connection.
 *
 *   bad_client ADDR PORT oversized SIZE [--wait SEC] [--timeout SEC]
 *   bad_client ADDR PORT empty          [--wait SEC] [--timeout SEC]
 *   bad_client ADDR PORT short SIZE     [--wait SEC] [--timeout SEC]
 *
 * Posts one 8-byte receive on the request, connects without private data, waits for
 * ESTABLISHED (--timeout SEC, default 60), then sends one message (RPMA_F_COMPLETION_ALWAYS):
 *   oversized SIZE  SIZE bytes (registered as one SIZE-byte region), more than the 8 a
 *                   ping-pong receive holds: the server's receive fails (IBV_WC_LOC_LEN_ERR)
 *   empty           a zero-length send
 *   short SIZE      SIZE bytes, fewer than 8 (e.g. 3)
 * The payload is the little-endian u64 1, truncated to SIZE bytes or padded with zeros.
 * Then it waits up to --wait SEC (default 20) for the server to end the connection, printing
 *   COMPLETION send status=<ibv_wc_status_str> [vendor_err=N]
 *   COMPLETION recv status=<...> byte_len=N [value=V]
 *   EVENT <CLOSED|LOST|...> after_ms=T
 *   SERVER CLOSED after_ms=T        (T = ms since the message was posted)
 * as they come (completions still queued when CLOSED/LOST arrives are printed before the
 * last line). After CLOSED or LOST it disconnects, deletes everything and exits 0.
 *
 * Exit codes: 0 the server ended the connection; 1 a librpma call failed or the connection
 * could not be established; 2 usage; 3 no ESTABLISHED within --timeout; 5 "the server kept the
 * connection open" for --wait SEC after the message (it then disconnects itself).
 */
#define _GNU_SOURCE
#define PROG_NAME "bad_client"
#include "test_client.h"
#include <infiniband/verbs.h>

#include <endian.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MSG_SIZE 8
#define MAX_SIZE (1u << 30)
#define SEND_CTX ((void *)1)
#define RECV_CTX ((void *)2)
#define WC_BATCH 8

enum { EXIT_KEPT_OPEN = 5 };   /* after the common EXIT_OK .. EXIT_TIMEOUT */

/* parse_long(.., 0), but an empty value is a bad value too */
static long parse_value(const char *opt, const char *s)
{
	if (!*s)
		bad_value(opt, s);
	return parse_long(opt, s, 0);
}

/* print every completion queued now; returns < 0 on a librpma error */
static int drain_completions(struct rpma_cq *cq, const uint64_t *recv_buf)
{
	struct ibv_wc wc[WC_BATCH];
	for (;;) {
		int got = 0;
		int ret = rpma_cq_get_wc(cq, WC_BATCH, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION)
			return 0;
		if (ret) {
			fail("rpma_cq_get_wc", ret);
			return ret;
		}
		for (int i = 0; i < got; i++) {
			/* the opcode of a failed completion is undefined: the wr_id tells which it was */
			if (wc[i].wr_id == (uintptr_t)RECV_CTX) {
				printf("COMPLETION recv status=%s byte_len=%" PRIu32, ibv_wc_status_str(wc[i].status),
					wc[i].byte_len);
				if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len == MSG_SIZE)
					printf(" value=%" PRIu64, le64toh(*recv_buf));
			} else {
				printf("COMPLETION send status=%s", ibv_wc_status_str(wc[i].status));
			}
			if (wc[i].status != IBV_WC_SUCCESS)
				printf(" vendor_err=%" PRIu32, wc[i].vendor_err);
			printf("\n");
		}
		fflush(stdout);
		if (got < WC_BATCH)
			return 0;
	}
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s ADDR PORT oversized SIZE|empty|short SIZE [--wait SEC] [--timeout SEC]\n", argv0);
	exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
	const char *pos[4];
	int npos = 0;
	long wait_s = 20, timeout_s = 60;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait") && i + 1 < argc) {
			wait_s = parse_value(argv[i], argv[i + 1]);
			i++;
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout_s = parse_value(argv[i], argv[i + 1]);
			i++;
		} else if (argv[i][0] != '-' && npos < 4) {
			pos[npos++] = argv[i];
		} else {
			usage(argv[0]);
		}
	}
	if (npos < 3 || timeout_s < 1)
		usage(argv[0]);
	const char *addr = pos[0], *port = pos[1], *mode = pos[2];
	size_t size;
	if (!strcmp(mode, "empty") && npos == 3) {
		size = 0;
	} else if ((!strcmp(mode, "oversized") || !strcmp(mode, "short")) && npos == 4) {
		long v = parse_value("SIZE", pos[3]);
		if (v < 1 || (unsigned long)v > MAX_SIZE) {
			fprintf(stderr, "bad_client: SIZE must be 1..%u\n", MAX_SIZE);
			return EXIT_USAGE;
		}
		size = (size_t)v;
	} else {
		usage(argv[0]);
		return EXIT_USAGE;
	}
	uint64_t deadline = now_ms() + (uint64_t)timeout_s * 1000u;

	init_output();

	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_cq *cq = NULL;
	uint64_t *recv_buf = NULL;
	uint8_t *send_buf = NULL;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ev_fd = -1, cq_fd = -1, ret, rc = EXIT_FAIL;
	bool established = false, closed = false;

	long page = sysconf(_SC_PAGESIZE);
	if (posix_memalign((void **)&recv_buf, (size_t)page, MSG_SIZE) ||
			(size && posix_memalign((void **)&send_buf, (size_t)page, size))) {
		fprintf(stderr, "bad_client: out of memory\n");
		goto out_free;
	}
	*recv_buf = 0;
	if (size) {
		uint64_t one = htole64(1);
		memset(send_buf, 0, size);
		memcpy(send_buf, &one, size < sizeof(one) ? size : sizeof(one));
	}
	if (new_peer(addr, &peer))
		goto out_free;
	if ((ret = rpma_mr_reg(peer, recv_buf, MSG_SIZE, RPMA_MR_USAGE_RECV, &recv_mr)) ||
			(size && (ret = rpma_mr_reg(peer, send_buf, size, RPMA_MR_USAGE_SEND, &send_mr)))) {
		fail("rpma_mr_reg", ret);
		goto out_dereg;
	}

	if (connect_to(peer, addr, port, NULL, recv_mr, MSG_SIZE, RECV_CTX, &conn))
		goto out_dereg;
	ret = wait_established(conn, &ev_fd, deadline, (uint64_t)timeout_s, false);
	if (ret == WAIT_TIMEOUT)
		rc = EXIT_TIMEOUT;
	if (ret)
		goto out_conn;
	established = true;
	if (get_cq_fd(conn, &cq, &cq_fd))
		goto out_conn;

	/* the message; with SIZE 0 there is no buffer: rpma_send takes a NULL region then */
	if ((ret = rpma_send(conn, send_mr, 0, size, RPMA_F_COMPLETION_ALWAYS, SEND_CTX))) {
		fail("rpma_send", ret);
		goto out_conn;
	}
	uint64_t t0 = now_ms(), wait_until = t0 + (uint64_t)wait_s * 1000u;
	printf("SENT %s size=%zu\n", mode, size);
	fflush(stdout);

	while (!closed) {
		bool cq_ready, ev_ready;
		ret = wait_cq_or_event(cq_fd, ev_fd, wait_until, &cq_ready, &ev_ready);
		if (ret == WAIT_TIMEOUT) {
			fprintf(stderr, "bad_client: the server kept the connection open (%ld s after the message)\n", wait_s);
			rc = EXIT_KEPT_OPEN;
			goto out_conn;
		}
		if (ret)
			goto out_conn;
		if (cq_ready) {
			ret = rpma_cq_wait(cq);   /* consumes the channel event, re-arms the CQ */
			if (ret && ret != RPMA_E_NO_COMPLETION) {
				fail("rpma_cq_wait", ret);
				goto out_conn;
			}
			if (drain_completions(cq, recv_buf))
				goto out_conn;
		}
		if (ev_ready) {
			ret = take_event(conn, &ev);
			if (ret == WAIT_NO_EVENT)
				continue;
			if (ret)
				goto out_conn;
			uint64_t after = now_ms() - t0;
			printf("EVENT %s after_ms=%" PRIu64 "\n", rpma_utils_conn_event_2str(ev), after);
			if (ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST) {
				closed = true;
				(void) drain_completions(cq, recv_buf);   /* what came with the end */
				printf("SERVER CLOSED after_ms=%" PRIu64 "\n", after);
				rc = EXIT_OK;
			}
			fflush(stdout);
		}
	}

out_conn:
	/* disconnect (answers the server's, or ends it ourselves), wait (bounded) for CLOSED, delete.
	 * Deadline 0: only the short grace; rc is EXIT_OK here only when the CLOSED was seen */
	rc = end_connection(&conn, established, closed, ev_fd, 0, rc);
out_dereg:
	rc = cleanup_rc(rc, "rpma_mr_dereg(send)", rpma_mr_dereg(&send_mr));
	rc = cleanup_rc(rc, "rpma_mr_dereg(recv)", rpma_mr_dereg(&recv_mr));
	rc = cleanup_rc(rc, "rpma_peer_delete", rpma_peer_delete(&peer));
out_free:
	free(send_buf);
	free(recv_buf);
	return rc;
}

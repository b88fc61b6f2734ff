/*
 * pingpong_server.c - an end-to-end test server that behaves as librpma's example
 * 08-messages-ping-pong server, on the wire and in the order of its calls, with every wait
 * bounded and the connection's CM events watched: the peer of a client written for that
 * example (the Java client in raw mode among them) must complete against it.
 *
 *   pingpong_server ADDR PORT [--timeout SEC] [--quiet]
 *
 * Registers an 8-byte RECV and an 8-byte SEND buffer, listens on ADDR:PORT ("Listening on
 * ADDR:PORT"), takes one connection request, posts a receive on it BEFORE accepting (so that the
 * client's first message has a buffer), accepts without private data and waits for ESTABLISHED.
 * Then, as the example's loop: wait for the receive's completion (and, after the first round,
 * for the previous send's); a received value of I_M_DONE (UINT64_MAX) ends the loop; any other
 * value V is printed ("Value received: V"), the next receive is posted and V + 1 is sent (one
 * little-endian u64, RPMA_F_COMPLETION_ALWAYS; "Value sent: V+1"), unless --quiet. The receive's
 * wr_id must be the buffer and its byte_len 8. After I_M_DONE the server disconnects, waits for
 * CLOSED and deletes everything.
 *
 * Last line on stdout, on every path after the arguments were accepted:
 *   RESULT rounds=N last=V         (N values answered, V the last value sent, or 0)
 *
 * --timeout SEC (default 60) bounds the whole run.
 *
 * Exit codes: 0 I_M_DONE came; 1 a librpma call failed, a failed or unexpected completion or an
 * unexpected event; 2 usage; 3 timed out; 4 the client closed the connection before I_M_DONE
 * ("the client closed the connection after N rounds"). Every failure prints one
 * "pingpong_server: ..." line on stderr.
 */
#define _GNU_SOURCE
#define PROG_NAME "pingpong_server"
#include "test_server.h"
#include <infiniband/verbs.h>

#include <endian.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MSG_SIZE sizeof(uint64_t)
#define I_M_DONE UINT64_MAX
#define MAX_N_WC 2                 /* one send and one receive completion per round */

enum { EXIT_CLIENT_CLOSED = 4 };   /* after the common EXIT_OK .. EXIT_TIMEOUT */

/* the example's checks of a completion: a failure, and the receive's wr_id and length */
static int validate_wc(const struct ibv_wc *wc, const uint64_t *recv, bool *send_cmpl, bool *recv_cmpl)
{
	if (wc->status != IBV_WC_SUCCESS) {
		/* the opcode of a failed completion is undefined: the wr_id tells which it was */
		fprintf(stderr, "pingpong_server: rpma_%s() failed: %s\n",
			wc->wr_id == (uintptr_t)recv ? "recv" : "send", ibv_wc_status_str(wc->status));
		return -1;
	}
	if (wc->opcode == IBV_WC_SEND) {
		*send_cmpl = true;
	} else if (wc->opcode == IBV_WC_RECV) {
		if (wc->wr_id != (uintptr_t)recv || wc->byte_len != MSG_SIZE) {
			fprintf(stderr, "pingpong_server: received completion is not as expected "
				"(wr_id 0x%" PRIx64 ", byte_len %" PRIu32 ", expected %zu)\n",
				(uint64_t)wc->wr_id, wc->byte_len, MSG_SIZE);
			return -1;
		}
		*recv_cmpl = true;
	} else {
		fprintf(stderr, "pingpong_server: unexpected completion opcode %d\n", (int)wc->opcode);
		return -1;
	}
	return 0;
}

/*
 * The example's wait for a round's completions (the receive, and the send when send_cmpl is
 * false), bounded by poll() on the completion channel and the CM event fd: WAIT_OK,
 * WAIT_CLOSED (the client's CLOSED or LOST), WAIT_TIMEOUT or an error (reported).
 */
static int wait_round(struct rpma_conn *conn, struct rpma_cq *cq, int cq_fd, int ev_fd, uint64_t deadline,
		const uint64_t *recv, bool send_cmpl)
{
	bool recv_cmpl = false;
	while (!send_cmpl || !recv_cmpl) {
		bool cq_ready, ev_ready;
		int ret = wait_cq_or_event(cq_fd, ev_fd, deadline, &cq_ready, &ev_ready);
		if (ret)
			return ret;
		/* completions first: a message that came just before a disconnect still counts */
		if (cq_ready) {
			ret = rpma_cq_wait(cq);
			if (ret && ret != RPMA_E_NO_COMPLETION) {
				fail("rpma_cq_wait", ret);
				return ret;
			}
			struct ibv_wc wc[MAX_N_WC];
			int got = 0;
			ret = rpma_cq_get_wc(cq, MAX_N_WC, wc, &got);
			if (ret && ret != RPMA_E_NO_COMPLETION) {
				fail("rpma_cq_get_wc", ret);
				return ret;
			}
			for (int i = 0; i < got; i++)
				if (validate_wc(&wc[i], recv, &send_cmpl, &recv_cmpl))
					return -1;
			continue;
		}
		if (ev_ready) {
			enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
			ret = take_event(conn, &ev);
			if (ret == WAIT_NO_EVENT)
				continue;
			if (ret)
				return ret;
			if (ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST)
				return WAIT_CLOSED;
			fprintf(stderr, "pingpong_server: unexpected event %s\n", rpma_utils_conn_event_2str(ev));
			return -1;
		}
	}
	return WAIT_OK;
}

int main(int argc, char **argv)
{
	const char *pos[2];
	int npos = 0;
	long timeout_s = 60;
	bool quiet = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout_s = parse_long(argv[i], argv[i + 1], 1);
			i++;
		} else if (!strcmp(argv[i], "--quiet")) {
			quiet = true;
		} else if (argv[i][0] != '-' && npos < 2) {
			pos[npos++] = argv[i];
		} else {
			npos = -100;
		}
	}
	if (npos != 2) {
		fprintf(stderr, "usage: %s ADDR PORT [--timeout SEC] [--quiet]\n", argv[0]);
		return EXIT_USAGE;
	}
	const char *addr = pos[0], *port = pos[1];
	uint64_t deadline = now_ms() + (uint64_t)timeout_s * 1000u;

	init_output();

	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_cq *cq = NULL;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	uint64_t *recv = NULL, *send = NULL;
	uint64_t rounds = 0, last = 0;
	int ep_fd = -1, ev_fd = -1, cq_fd = -1, ret, rc = EXIT_FAIL;
	bool established = false, closed = false;

	long page = sysconf(_SC_PAGESIZE);
	if (posix_memalign((void **)&recv, (size_t)page, MSG_SIZE) ||
			posix_memalign((void **)&send, (size_t)page, MSG_SIZE)) {
		fprintf(stderr, "pingpong_server: out of memory\n");
		goto out_free;
	}
	*recv = *send = 0;
	if (server_listen(addr, port, &peer, &ep, &ep_fd))
		goto out_shutdown;
	if ((ret = rpma_mr_reg(peer, recv, MSG_SIZE, RPMA_MR_USAGE_RECV, &recv_mr)) ||
			(ret = rpma_mr_reg(peer, send, MSG_SIZE, RPMA_MR_USAGE_SEND, &send_mr))) {
		fail("rpma_mr_reg", ret);
		goto out_dereg;
	}

	ret = wait_conn_req(ep, ep_fd, deadline, &req);
	if (ret == WAIT_TIMEOUT) {
		fprintf(stderr, "pingpong_server: no connection request within %ld s\n", timeout_s);
		rc = EXIT_TIMEOUT;
	}
	if (ret)
		goto out_dereg;
	/* the receive for the client's first message, before the accept */
	if ((ret = rpma_conn_req_recv(req, recv_mr, 0, MSG_SIZE, recv))) {
		fail("rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		goto out_dereg;
	}
	ret = accept_conn(&req, NULL, &conn, &ev_fd, deadline, false, &ev);
	if (ret == WAIT_TIMEOUT)
		rc = EXIT_TIMEOUT;
	if (ret)
		goto out_end;
	established = true;
	if (get_cq_fd(conn, &cq, &cq_fd))
		goto out_end;

	/* no send completion is due in the first round */
	bool send_cmpl = true;
	for (;;) {
		ret = wait_round(conn, cq, cq_fd, ev_fd, deadline, recv, send_cmpl);
		if (ret == WAIT_CLOSED) {
			fprintf(stderr, "pingpong_server: the client closed the connection after %" PRIu64 " rounds\n",
				rounds);
			closed = true;
			rc = EXIT_CLIENT_CLOSED;
			goto out_end;
		}
		if (ret == WAIT_TIMEOUT) {
			fprintf(stderr, "pingpong_server: no I_M_DONE within the %ld s timeout (after %" PRIu64
				" rounds)\n", timeout_s, rounds);
			rc = EXIT_TIMEOUT;
			goto out_end;
		}
		if (ret)
			goto out_end;
		uint64_t value = le64toh(*recv);
		if (value == I_M_DONE)
			break;
		if (!quiet)
			printf("Value received: %" PRIu64 "\n", value);
		/* the next receive before the answer, so that the client's next message has a buffer */
		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, recv))) {
			fail("rpma_recv", ret);
			goto out_end;
		}
		last = value + 1;
		*send = htole64(last);
		if (!quiet)
			printf("Value sent: %" PRIu64 "\n", last);
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL))) {
			fail("rpma_send", ret);
			goto out_end;
		}
		rounds++;
		send_cmpl = false;
	}
	rc = EXIT_OK;

out_end:
	/* the example's server ends the connection: disconnect, wait for CLOSED (unless the client's
	 * came already), delete */
	if (conn)
		rc = end_connection(&conn, established, closed, ev_fd, deadline, rc);
out_dereg:
	if (send_mr)
		rc = cleanup_rc(rc, "rpma_mr_dereg(send)", rpma_mr_dereg(&send_mr));
	if (recv_mr)
		rc = cleanup_rc(rc, "rpma_mr_dereg(recv)", rpma_mr_dereg(&recv_mr));
out_shutdown:
	rc = server_shutdown(&ep, &peer, rc);
out_free:
	free(send);
	free(recv);
	printf("RESULT rounds=%" PRIu64 " last=%" PRIu64 "\n", rounds, last);
	return rc;
}

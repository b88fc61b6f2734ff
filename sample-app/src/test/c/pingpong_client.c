/*
 * pingpong_client.c - an end-to-end test client that behaves as librpma's example
 * 08-messages-ping-pong client, on the wire and in the order of its calls, with every wait
 * bounded and the connection's CM events watched.
 *
 *   pingpong_client ADDR PORT SEED ROUNDS [SLEEP_US] [--timeout SEC] [--quiet] [--start-file PATH]
 *                   [--stop-file PATH] [--sessions N]
 *
 * Registers an 8-byte RECV and an 8-byte SEND buffer, connects without private data (no
 * retry, as the example), then, as the example's `while (--rounds)`, does ROUNDS - 1 round
 * trips: post a receive, send the counter (one little-endian u64, RPMA_F_COMPLETION_ALWAYS),
 * wait for both completions (the receive's wr_id must be the buffer and its byte_len 8), take
 * the received value as the new counter, print "Value sent: N" and "Value received: N"
 * (unless --quiet), sleep SLEEP_US microseconds if given. Then it sends I_M_DONE (UINT64_MAX,
 * RPMA_F_COMPLETION_ON_ERROR), disconnects, waits for CLOSED and deletes. Against a server
 * that answers v with v+1, the last value is SEED + ROUNDS - 1.
 *
 * --stop-file PATH: after each round, end the session (I_M_DONE) once PATH exists, before ROUNDS - 1
 * round trips if need be, so that a test can keep a session running until it has done its part.
 *
 * --sessions N (default 1): N such sessions one after the other on the one peer and buffers, each
 * from SEED, as a long-lived client would; the first that fails ends the run with its exit code.
 *
 * Last line on stdout, on every path after the arguments were accepted:
 *   RESULT sessions=S rounds=N last=V   (S sessions ended, N round trips completed in all, V the
 *                                        last value received in the last session, or SEED)
 *
 * --start-file PATH: once established, wait (within the timeout) until PATH exists before the
 * first round, so that a test can hold many sessions open at once and then start them together.
 *
 * --timeout SEC (default 60) bounds the whole run. Each wait polls the completion channel and
 * the CM event fd (both non-blocking): a server that disconnects does not make a posted
 * receive complete, so a client waiting only on its CQ (as the example) would hang.
 *
 * Exit codes: 0 all rounds done; 1 a librpma call failed, a failed or unexpected completion;
 * 2 usage; 3 timed out; 4 the server closed the connection mid-session ("the server closed the
 * connection after N rounds"). Every failure prints one "pingpong_client: ..." line on stderr.
 */
#define _GNU_SOURCE
#define PROG_NAME "pingpong_client"
#include "test_client.h"
#include <infiniband/verbs.h>

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MSG_SIZE sizeof(uint64_t)
#define I_M_DONE UINT64_MAX
#define MAX_N_WC 2                 /* one send and one receive completion per round */

enum { EXIT_SERVER_CLOSED = 4 };   /* after the common EXIT_OK .. EXIT_TIMEOUT */

static uint64_t parse_u64(const char *what, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || !*s || *s == '-')
		bad_value(what, s);
	return v;
}

/* the example's validate_wc() */
static int validate_wc(const struct ibv_wc *wc, const uint64_t *recv, bool *send_cmpl, bool *recv_cmpl)
{
	if (wc->status != IBV_WC_SUCCESS) {
		/* the opcode of a failed completion is undefined: the wr_id tells which it was */
		fprintf(stderr, "pingpong_client: rpma_%s() failed: %s\n",
			wc->wr_id == (uintptr_t)recv ? "recv" : "send", ibv_wc_status_str(wc->status));
		return -1;
	}
	if (wc->opcode == IBV_WC_SEND) {
		*send_cmpl = true;
	} else if (wc->opcode == IBV_WC_RECV) {
		if (wc->wr_id != (uintptr_t)recv || wc->byte_len != MSG_SIZE) {
			fprintf(stderr, "pingpong_client: received completion is not as expected "
				"(wr_id 0x%" PRIx64 ", byte_len %" PRIu32 ", expected %zu)\n",
				(uint64_t)wc->wr_id, wc->byte_len, MSG_SIZE);
			return -1;
		}
		*recv_cmpl = true;
	}
	return 0;
}

/*
 * The example's wait_and_process_completions() (rpma_cq_wait, then rpma_cq_get_wc of up to
 * two), bounded by poll() on the completion channel and the CM event fd.
 */
static int wait_round(struct rpma_conn *conn, struct rpma_cq *cq, int cq_fd, int ev_fd, uint64_t deadline,
		const uint64_t *recv)
{
	bool send_cmpl = false, recv_cmpl = false;
	while (!send_cmpl || !recv_cmpl) {
		bool cq_ready, ev_ready;
		int ret = wait_cq_or_event(cq_fd, ev_fd, deadline, &cq_ready, &ev_ready);
		if (ret)
			return ret;
		/* completions first: a reply that came just before a disconnect still counts */
		if (cq_ready) {
			ret = rpma_cq_wait(cq);
			if (ret && ret != RPMA_E_NO_COMPLETION) {
				fail("rpma_cq_wait", ret);
				return ret;
			}
			struct ibv_wc wc[MAX_N_WC];
			int got = 0;
			ret = rpma_cq_get_wc(cq, MAX_N_WC, wc, &got);
			if (ret && ret != RPMA_E_NO_COMPLETION) {   /* none is not an error */
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
			fprintf(stderr, "pingpong_client: unexpected event %s\n", rpma_utils_conn_event_2str(ev));
			return -1;
		}
	}
	return WAIT_OK;
}

/*
 * Waits until path exists, looking every 20 ms, while watching the connection's events: WAIT_OK,
 * WAIT_CLOSED (the server ended the session meanwhile), WAIT_TIMEOUT or an error (reported).
 */
static int wait_start_file(struct rpma_conn *conn, int ev_fd, uint64_t deadline, const char *path)
{
	while (access(path, F_OK) != 0) {
		if (now_ms() >= deadline)
			return WAIT_TIMEOUT;
		struct pollfd pfd = { ev_fd, POLLIN, 0 };
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		int ret = take_event(conn, &ev);
		if (ret == WAIT_NO_EVENT)
			continue;
		if (ret)
			return ret;
		if (ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST)
			return WAIT_CLOSED;
	}
	return WAIT_OK;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s ADDR PORT SEED ROUNDS [SLEEP_US] [--timeout SEC] [--quiet] [--start-file PATH]"
		" [--stop-file PATH] [--sessions N]\n", argv0);
	exit(EXIT_USAGE);
}

/* what a session is given, and what it counts */
struct pingpong {
	const char *addr, *port, *start_file, *stop_file;
	uint64_t seed, rounds, sleep_us, timeout_s, deadline;
	bool quiet;
	struct rpma_mr_local *recv_mr, *send_mr;
	uint64_t *recv, *send;
	uint64_t done;   /* round trips, over all sessions */
	uint64_t last;   /* the last value received in the latest session, or SEED */
};

/*
 * One session: connect, wait for the start file if any, ROUNDS - 1 round trips from SEED, I_M_DONE,
 * disconnect, wait for CLOSED, delete. Returns the session's exit code.
 */
static int pingpong_session(struct rpma_peer *peer, struct pingpong *pp)
{
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	int ev_fd = -1, cq_fd = -1, ret, rc = EXIT_FAIL;
	bool established = false, closed = false;
	uint64_t cntr = pp->seed, rounds = pp->rounds;
	pp->last = cntr;

	if (connect_to(peer, pp->addr, pp->port, NULL, NULL, 0, NULL, &conn))
		return EXIT_FAIL;
	ret = wait_established(conn, &ev_fd, pp->deadline, pp->timeout_s, false);
	if (ret == WAIT_TIMEOUT)
		rc = EXIT_TIMEOUT;
	if (ret)
		goto out_disconnect;
	established = true;
	if (get_cq_fd(conn, &cq, &cq_fd))
		goto out_disconnect;
	if (pp->start_file) {
		ret = wait_start_file(conn, ev_fd, pp->deadline, pp->start_file);
		if (ret == WAIT_CLOSED) {
			fprintf(stderr, "pingpong_client: the server closed the connection before the start file came\n");
			closed = true;
			rc = EXIT_SERVER_CLOSED;
			goto out_disconnect;
		}
		if (ret == WAIT_TIMEOUT) {
			fprintf(stderr, "pingpong_client: %s did not appear within the %" PRIu64 " s timeout\n",
				pp->start_file, pp->timeout_s);
			rc = EXIT_TIMEOUT;
		}
		if (ret)
			goto out_disconnect;
	}

	uint64_t done = 0;
	while (--rounds) {
		/* a receive for the server's answer, then the counter */
		if ((ret = rpma_recv(conn, pp->recv_mr, 0, MSG_SIZE, pp->recv))) {
			fail("rpma_recv", ret);
			goto out_disconnect;
		}
		if (!pp->quiet)
			printf("Value sent: %" PRIu64 "\n", cntr);
		*pp->send = htole64(cntr);
		if ((ret = rpma_send(conn, pp->send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL))) {
			fail("rpma_send", ret);
			goto out_disconnect;
		}
		ret = wait_round(conn, cq, cq_fd, ev_fd, pp->deadline, pp->recv);
		if (ret == WAIT_CLOSED) {
			fprintf(stderr, "pingpong_client: the server closed the connection after %" PRIu64 " rounds\n",
				done);
			closed = true;
			rc = EXIT_SERVER_CLOSED;
			goto out_disconnect;
		}
		if (ret == WAIT_TIMEOUT) {
			fprintf(stderr, "pingpong_client: round %" PRIu64 " did not complete within the %" PRIu64
				" s timeout\n", done + 1, pp->timeout_s);
			rc = EXIT_TIMEOUT;
			goto out_disconnect;
		}
		if (ret)
			goto out_disconnect;
		cntr = le64toh(*pp->recv);
		pp->last = cntr;
		done++;
		pp->done++;
		if (!pp->quiet)
			printf("Value received: %" PRIu64 "\n", cntr);
		if (pp->stop_file && access(pp->stop_file, F_OK) == 0)
			break;
		if (pp->sleep_us > 0) {
			uint64_t left_ms = pp->deadline > now_ms() ? pp->deadline - now_ms() : 0;
			uint64_t us = pp->sleep_us < left_ms * 1000u ? pp->sleep_us : left_ms * 1000u;
			struct timespec d = { (time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L };
			while (nanosleep(&d, &d) && errno == EINTR)
				;
		}
	}

	/* "I am done": the server disconnects when it sees it; no completion unless it fails */
	*pp->send = htole64(I_M_DONE);
	if ((ret = rpma_send(conn, pp->send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL))) {
		fail("rpma_send(I_M_DONE)", ret);
		goto out_disconnect;
	}
	rc = EXIT_OK;

out_disconnect:
	/* disconnect (also answers a server's disconnect), wait (bounded) for CLOSED, delete;
	 * a connection that never got established is only deleted */
	return end_connection(&conn, established, closed, ev_fd, pp->deadline, rc);
}

int main(int argc, char **argv)
{
	const char *pos[5];
	int npos = 0;
	struct pingpong pp = { .timeout_s = 60 };
	uint64_t sessions = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			pp.timeout_s = parse_u64(argv[i], argv[i + 1]);
			i++;
		} else if (!strcmp(argv[i], "--quiet")) {
			pp.quiet = true;
		} else if (!strcmp(argv[i], "--start-file") && i + 1 < argc) {
			pp.start_file = argv[++i];
		} else if (!strcmp(argv[i], "--stop-file") && i + 1 < argc) {
			pp.stop_file = argv[++i];
		} else if (!strcmp(argv[i], "--sessions") && i + 1 < argc) {
			sessions = parse_u64(argv[i], argv[i + 1]);
			i++;
		} else if (argv[i][0] != '-' && npos < 5) {
			pos[npos++] = argv[i];
		} else {
			usage(argv[0]);
		}
	}
	if (npos < 4 || pp.timeout_s < 1 || sessions < 1)
		usage(argv[0]);
	pp.addr = pos[0];
	pp.port = pos[1];
	pp.seed = parse_u64("SEED", pos[2]);
	pp.rounds = parse_u64("ROUNDS", pos[3]);
	pp.sleep_us = npos == 5 ? parse_u64("SLEEP_US", pos[4]) : 0;
	if (pp.rounds < 1) {   /* the example's while (--rounds) would run for ever on 0 */
		fprintf(stderr, "pingpong_client: ROUNDS must be at least 1\n");
		return EXIT_USAGE;
	}
	pp.deadline = now_ms() + pp.timeout_s * 1000u;
	pp.last = pp.seed;

	init_output();

	struct rpma_peer *peer = NULL;
	int ret, rc = EXIT_FAIL;
	uint64_t ended = 0;

	long page = sysconf(_SC_PAGESIZE);
	if (posix_memalign((void **)&pp.recv, (size_t)page, MSG_SIZE) ||
			posix_memalign((void **)&pp.send, (size_t)page, MSG_SIZE)) {
		fprintf(stderr, "pingpong_client: out of memory\n");
		goto out_free;
	}
	*pp.recv = *pp.send = 0;
	if (new_peer(pp.addr, &peer))
		goto out_free;
	if ((ret = rpma_mr_reg(peer, pp.recv, MSG_SIZE, RPMA_MR_USAGE_RECV, &pp.recv_mr)) ||
			(ret = rpma_mr_reg(peer, pp.send, MSG_SIZE, RPMA_MR_USAGE_SEND, &pp.send_mr))) {
		fail("rpma_mr_reg", ret);
		goto out_dereg;
	}
	rc = EXIT_OK;
	while (ended < sessions && rc == EXIT_OK) {
		rc = pingpong_session(peer, &pp);
		ended++;
	}

out_dereg:
	rc = cleanup_rc(rc, "rpma_mr_dereg(send)", rpma_mr_dereg(&pp.send_mr));
	rc = cleanup_rc(rc, "rpma_mr_dereg(recv)", rpma_mr_dereg(&pp.recv_mr));
	rc = cleanup_rc(rc, "rpma_peer_delete", rpma_peer_delete(&peer));
out_free:
	free(pp.send);
	free(pp.recv);
	printf("RESULT sessions=%" PRIu64 " rounds=%" PRIu64 " last=%" PRIu64 "\n", ended, pp.done, pp.last);
	return rc;
}

/*
 * test_client.h - what the end-to-end tests' C clients (hello_client, read_client,
 * pingpong_client, conn_holder, bad_client) have in common: exit codes, argument parsing,
 * error messages, non-blocking CM event fds and bounded waits for connection events and
 * completions, and the set-up and teardown steps they share. The C servers use it too, through
 * test_server.h.
 *
 * Each program defines _GNU_SOURCE and PROG_NAME (its name, a string literal: every message
 * starts with it) before it includes this header, e.g.
 *   #define _GNU_SOURCE
 *   #define PROG_NAME "hello_client"
 *   #include "test_client.h"
 * Everything here is static inline: a program that does not use a function gets no warning.
 */
#ifndef TEST_CLIENT_H
#define TEST_CLIENT_H

#ifndef PROG_NAME
#error "define PROG_NAME (the program's name, a string literal) before including test_client.h"
#endif

#include <librpma.h>
#include "rdma_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <ctype.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEARDOWN_GRACE_MS 2000   /* how long to wait for CLOSED after our own disconnect */

/* exit codes of every client; a program adds its own from 4 on */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_TIMEOUT = 3 };
/* results of the waits; < 0 is an error */
enum { WAIT_OK = 0, WAIT_TIMEOUT = 1, WAIT_CLOSED = 2, WAIT_REJECTED = 3, WAIT_NO_EVENT = 4 };

/* "<program>: <what> failed: <ret> (<librpma's text for ret>)" on stderr */
static inline void fail(const char *what, int ret)
{
	fprintf(stderr, PROG_NAME ": %s failed: %d (%s)\n", what, ret, rpma_err_2str(ret));
}

/* a bad value of an option or argument: "<program>: bad value for <what>: <s>", exit 2 */
static inline _Noreturn void bad_value(const char *what, const char *s)
{
	fprintf(stderr, PROG_NAME ": bad value for %s: %s\n", what, s);
	exit(EXIT_USAGE);
}

/* a decimal long >= min (an empty string is 0); anything else is a bad value */
static inline long parse_long(const char *opt, const char *s, long min)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min)
		bad_value(opt, s);
	return v;
}

/* the bytes of a hex string (two digits a byte, no separators) into out (at most max of them): their
 * number; anything else is a bad value of what */
static inline size_t parse_hex(const char *what, const char *hex, unsigned char *out, size_t max)
{
	size_t len = strlen(hex);
	if (len % 2 || len / 2 > max)
		bad_value(what, hex);
	for (size_t i = 0; i < len / 2; i++) {
		unsigned int byte;
		if (!isxdigit((unsigned char)hex[2 * i]) || !isxdigit((unsigned char)hex[2 * i + 1]) ||
				sscanf(hex + 2 * i, "%2x", &byte) != 1)
			bad_value(what, hex);
		out[i] = (unsigned char)byte;
	}
	return len / 2;
}

/* the arguments "NAMES... [--timeout SEC] [--sessions N]" (default 60 s, 1 session) of the
 * one-connection programs: exactly n positional ones into pos (their names, for the usage, in names),
 * the timeout and the deadline it gives, and the sessions to run one after the other (a program that
 * has no such option passes NULL); anything else prints the usage and exits 2 */
static inline uint64_t parse_positional_timeout(int argc, char **argv, int n, const char **pos, const char *names,
		long *timeout, long *sessions)
{
	int npos = 0;
	long timeout_s = 60;
	if (sessions)
		*sessions = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout_s = parse_long(argv[i], argv[i + 1], 1);
			i++;
		} else if (sessions && !strcmp(argv[i], "--sessions") && i + 1 < argc) {
			*sessions = parse_long(argv[i], argv[i + 1], 1);
			i++;
		} else if (argv[i][0] != '-' && npos < n) {
			pos[npos++] = argv[i];
		} else {
			npos = -100;
		}
	}
	if (npos != n) {
		fprintf(stderr, "usage: %s %s [--timeout SEC]%s\n", argv[0], names, sessions ? " [--sessions N]" : "");
		exit(EXIT_USAGE);
	}
	*timeout = timeout_s;
	return now_ms() + (uint64_t)timeout_s * 1000u;
}

/* the arguments "ADDR PORT [--timeout SEC] [--sessions N]": parse_positional_timeout's for the address
 * and the port */
static inline uint64_t parse_addr_port_timeout(int argc, char **argv, const char **addr, const char **port,
		long *timeout, long *sessions)
{
	const char *pos[2];
	uint64_t deadline = parse_positional_timeout(argc, argv, 2, pos, "ADDR PORT", timeout, sessions);
	*addr = pos[0];
	*port = pos[1];
	return deadline;
}

/* librpma logs to syslog by default: errors go to stderr too; stdout is line-buffered, so that
 * a test reading the pipe sees each line as it comes */
static inline void init_output(void)
{
	(void) rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		perror(PROG_NAME ": fcntl(O_NONBLOCK)");
		return -1;
	}
	return 0;
}

/*
 * true when a failed rpma_conn_next_event only means "nothing queued" on a non-blocking fd:
 * an event librpma does not map (acked, dropped), or a spurious POLLIN (RPMA_E_PROVIDER with
 * errno EAGAIN)
 */
static inline bool no_event(int ret)
{
	return ret == RPMA_E_UNKNOWN || ret == RPMA_E_NO_EVENT || (ret == RPMA_E_PROVIDER && errno == EAGAIN);
}

/* the event that made the connection's event fd readable: WAIT_OK with *ev, WAIT_NO_EVENT when
 * there was none after all, or an error (reported) */
static inline int take_event(struct rpma_conn *conn, enum rpma_conn_event *ev)
{
	int ret = rpma_conn_next_event(conn, ev);
	if (ret && no_event(ret))
		return WAIT_NO_EVENT;
	if (ret)
		fail("rpma_conn_next_event", ret);
	return ret;
}

/*
 * Waits at most until deadline for the completion channel (cq_fd) or the connection's event fd
 * (ev_fd) to become readable: WAIT_OK with *cq_ready and *ev_ready telling which, WAIT_TIMEOUT,
 * or -1 (poll failed, reported). Watching both bounds a wait for a completion that a
 * disconnecting server never lets come.
 */
static inline int wait_cq_or_event(int cq_fd, int ev_fd, uint64_t deadline, bool *cq_ready, bool *ev_ready)
{
	for (;;) {
		uint64_t t = now_ms();
		if (t >= deadline)
			return WAIT_TIMEOUT;
		struct pollfd pfd[2] = { { cq_fd, POLLIN, 0 }, { ev_fd, POLLIN, 0 } };
		int np = poll(pfd, 2, (int)(deadline - t));
		if (np < 0 && errno != EINTR) {
			perror(PROG_NAME ": poll");
			return -1;
		}
		if (np > 0) {
			*cq_ready = pfd[0].revents != 0;
			*ev_ready = pfd[1].revents != 0;
			return WAIT_OK;
		}
	}
}

/* the next connection event, waiting at most until deadline (ev_fd non-blocking) */
static inline int wait_event(struct rpma_conn *conn, int ev_fd, uint64_t deadline, enum rpma_conn_event *ev)
{
	for (;;) {
		uint64_t t = now_ms();
		if (t >= deadline)
			return WAIT_TIMEOUT;
		struct pollfd pfd = { ev_fd, POLLIN, 0 };
		int np = poll(&pfd, 1, (int)(deadline - t));
		if (np < 0 && errno != EINTR) {
			perror(PROG_NAME ": poll");
			return -1;
		}
		if (np <= 0)
			continue;
		int ret = take_event(conn, ev);
		if (ret != WAIT_NO_EVENT)
			return ret;
	}
}

/* wait at most until deadline for CLOSED or LOST, skipping other events: WAIT_OK once it came */
static inline int wait_closed(struct rpma_conn *conn, int ev_fd, uint64_t deadline)
{
	enum rpma_conn_event ev;
	int ret;
	do {
		ev = RPMA_CONN_UNDEFINED;
		ret = wait_event(conn, ev_fd, deadline, &ev);
	} while (ret == WAIT_OK && ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST);
	return ret;
}

/* the peer on the device that reaches addr; a failure is reported */
static inline int new_peer(const char *addr, struct rpma_peer **peer)
{
	struct ibv_context *ibv = NULL;
	int ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv);
	if (ret) {
		fail("rpma_utils_get_ibv_context", ret);
		return ret;
	}
	if ((ret = rpma_peer_new(ibv, peer)))
		fail("rpma_peer_new", ret);
	return ret;
}

/*
 * A connect request to addr:port sent with pdata (NULL: none); when recv_mr is not NULL, one
 * receive of recv_len bytes at offset 0 (wr_id recv_ctx) is posted on the request first. *conn
 * is not established yet (wait_established); a failure is reported.
 */
static inline int connect_to(struct rpma_peer *peer, const char *addr, const char *port,
		const struct rpma_conn_private_data *pdata, struct rpma_mr_local *recv_mr, size_t recv_len,
		void *recv_ctx, struct rpma_conn **conn)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (ret) {
		fail("rpma_conn_req_new", ret);
		return ret;
	}
	if (recv_mr && (ret = rpma_conn_req_recv(req, recv_mr, 0, recv_len, recv_ctx))) {
		fail("rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		return ret;
	}
	if ((ret = rpma_conn_req_connect(&req, pdata, conn)))   /* consumes req */
		fail("rpma_conn_req_connect", ret);
	return ret;
}

/*
 * After rpma_conn_req_connect: makes the connection's event fd (*ev_fd; -1 when that fails)
 * non-blocking, so that every wait can be bounded by poll(), and waits until deadline for its
 * first event. WAIT_OK: ESTABLISHED; WAIT_REJECTED: REJECTED, when rejected_ok; WAIT_TIMEOUT:
 * no event ("no answer to the connect within <timeout_s> s" printed); < 0: an error or another
 * event ("unexpected event while connecting: <event>"), printed.
 */
static inline int wait_established(struct rpma_conn *conn, int *ev_fd, uint64_t deadline, uint64_t timeout_s,
		bool rejected_ok)
{
	int ret = rpma_conn_get_event_fd(conn, ev_fd);
	if (ret || set_nonblock(*ev_fd)) {
		if (ret)
			fail("rpma_conn_get_event_fd", ret);
		*ev_fd = -1;
		return ret ? ret : -1;
	}
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	ret = wait_event(conn, *ev_fd, deadline, &ev);
	if (ret == WAIT_TIMEOUT)
		fprintf(stderr, PROG_NAME ": no answer to the connect within %" PRIu64 " s\n", timeout_s);
	if (ret)
		return ret;
	if (ev == RPMA_CONN_ESTABLISHED)
		return WAIT_OK;
	if (ev == RPMA_CONN_REJECTED && rejected_ok)
		return WAIT_REJECTED;
	fprintf(stderr, PROG_NAME ": unexpected event while connecting: %s\n", rpma_utils_conn_event_2str(ev));
	return -1;
}

/* the connection's CQ and its completion channel fd, made non-blocking; a failure is reported */
static inline int get_cq_fd(struct rpma_conn *conn, struct rpma_cq **cq, int *cq_fd)
{
	int ret;
	if ((ret = rpma_conn_get_cq(conn, cq)) || (ret = rpma_cq_get_fd(*cq, cq_fd)) || set_nonblock(*cq_fd)) {
		if (ret)
			fail("rpma_conn_get_cq/rpma_cq_get_fd", ret);
		return ret ? ret : -1;
	}
	return 0;
}

/*
 * One completion, as librpma's examples wait for it (rpma_cq_wait, then rpma_cq_get_wc), but
 * with poll() first so that the wait is bounded and a CLOSED/LOST of the connection ends it.
 * cq_fd and ev_fd are non-blocking (get_cq_fd, wait_established).
 */
static inline int wait_completion(struct rpma_conn *conn, struct rpma_cq *cq, int cq_fd, int ev_fd,
		uint64_t deadline, struct ibv_wc *wc)
{
	for (;;) {
		bool cq_ready, ev_ready;
		int ret = wait_cq_or_event(cq_fd, ev_fd, deadline, &cq_ready, &ev_ready);
		if (ret)
			return ret;
		if (cq_ready) {
			ret = rpma_cq_wait(cq);   /* consumes the channel event, re-arms the CQ */
			if (ret == RPMA_E_NO_COMPLETION)
				continue;            /* nothing on the non-blocking channel after all */
			if (ret) {
				fail("rpma_cq_wait", ret);
				return ret;
			}
			int got = 0;
			ret = rpma_cq_get_wc(cq, 1, wc, &got);
			if (ret == RPMA_E_NO_COMPLETION)
				continue;
			if (ret) {
				fail("rpma_cq_get_wc", ret);
				return ret;
			}
			if (got == 1)
				return WAIT_OK;
		}
		if (ev_ready) {
			enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
			ret = take_event(conn, &ev);
			if (ret == WAIT_NO_EVENT)
				continue;
			if (ret)
				return ret;
			fprintf(stderr, PROG_NAME ": connection event %s while waiting for a completion\n",
				rpma_utils_conn_event_2str(ev));
			return -1;
		}
	}
}

/* the run's exit code after a clean-up call: a failure (ret) is reported and fails a run that
 * had succeeded so far */
static inline int cleanup_rc(int rc, const char *what, int ret)
{
	if (ret) {
		fail(what, ret);
		rc = rc == EXIT_OK ? EXIT_FAIL : rc;
	}
	return rc;
}

/*
 * The client ends the connection: disconnect (also answers a server's disconnect), wait
 * (bounded) for CLOSED, delete. A connection that never got established is only deleted; one
 * whose CLOSED/LOST was seen already (closed), or without an event fd, is not waited for. The
 * wait lasts the rest of the run's time (until deadline) when the run has succeeded so far,
 * else a short grace (TEARDOWN_GRACE_MS, also the least it lasts); a missing CLOSED then fails
 * the run ("no CLOSED after the disconnect"). Returns the run's exit code: rc, or
 * EXIT_FAIL/EXIT_TIMEOUT when it was EXIT_OK and a step here failed.
 */
static inline int end_connection(struct rpma_conn **conn, bool established, bool closed, int ev_fd,
		uint64_t deadline, int rc)
{
	int ret;
	if (!established) {
		/* nothing to disconnect */
	} else if ((ret = rpma_conn_disconnect(*conn))) {
		rc = cleanup_rc(rc, "rpma_conn_disconnect", ret);
	} else if (ev_fd >= 0 && !closed) {
		uint64_t until = now_ms() + TEARDOWN_GRACE_MS;
		if (rc == EXIT_OK && deadline > until)
			until = deadline;
		ret = wait_closed(*conn, ev_fd, until);
		if (ret && rc == EXIT_OK) {
			fprintf(stderr, PROG_NAME ": no CLOSED after the disconnect\n");
			rc = ret == WAIT_TIMEOUT ? EXIT_TIMEOUT : EXIT_FAIL;
		}
	}
	return cleanup_rc(rc, "rpma_conn_delete", rpma_conn_delete(conn));
}

#endif /* TEST_CLIENT_H */

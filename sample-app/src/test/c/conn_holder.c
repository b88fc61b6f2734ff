/*
 * conn_holder.c - a test tool that opens many connections to a librpma server and holds
 * them idle: to load a server with silent connections while other clients work, and to show
 * that a server's idle timeout disconnects them.
 *
 *   conn_holder ADDR PORT --count N [--post-recv] [--hold SEC] [--pdata STRING] [--timeout SEC]
 *
 * Opens N connections to ADDR:PORT from one thread (at most MAX_CONNECTING requests in flight
 * at a time, so that a server with a short accept backlog is not flooded), all CM event fds
 * non-blocking and watched by one poll() loop. --post-recv posts one 8-byte receive on each
 * request before connecting (all cut from one registered region), so that the server may send
 * to it; --pdata sends STRING with its '\0' as the connect's private data (RoCE carries at
 * most 56 bytes). Once every connection is established (or failed) it prints
 *   ESTABLISHED n                  (n connections reached ESTABLISHED)
 *   FAILED i <event or reason>     (one line per connection that did not; then no holding)
 * and then holds them silently (sends nothing) for --hold SEC (default 30) or until
 * SIGTERM/SIGINT. Whenever the server closes one (at any time) it prints
 *   CLOSED i after_ms=T            (T = ms since connection i was established; LOST for LOST)
 * and answers with a disconnect and deletes it. At the end it disconnects the remaining ones,
 * waits (at most TEARDOWN_MS) for their CLOSED, deletes everything and prints
 *   RESULT established=E closed_by_server=K closed_by_client=L errors=X
 * Connections are numbered 0 .. N-1 in the order they were opened.
 *
 * --timeout SEC (default 60) bounds the establishment phase.
 * Exit codes: 0 all N established and nothing failed; 1 a connection failed, a librpma call
 * failed, a LOST, a missing CLOSED at the end, or a signal before all were established;
 * 2 usage; 3 the establishment did not finish within --timeout.
 */
#define _GNU_SOURCE
#define PROG_NAME "conn_holder"
#include "test_client.h"
#include "rdma_proc.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNECTING 32     /* connect requests in flight at once */
#define TEARDOWN_MS 5000      /* how long to wait for the CLOSED of our own disconnects */
#define MSG_SIZE 8

enum state { S_NEW, S_CONNECTING, S_ESTABLISHED, S_DISCONNECTING, S_DONE };

struct holder {
	struct rpma_conn *conn;
	int ev_fd;
	enum state state;
	uint64_t t_established;
};

static struct rpma_peer *peer;
static struct holder *h;
static long count;
static struct {
	long established, closed_by_server, closed_by_client, failed, errors;
} st;

/* fail() about connection i */
static void fail_conn(long i, const char *what, int ret)
{
	fprintf(stderr, "conn_holder: connection %ld: %s failed: %d (%s)\n", i, what, ret, rpma_err_2str(ret));
}

/* delete connection i (its disconnect, if any, was done by the caller) */
static void drop(long i)
{
	int ret = rpma_conn_delete(&h[i].conn);   /* NULLs the pointer even on error */
	if (ret) {
		fail_conn(i, "rpma_conn_delete", ret);
		st.errors++;
	}
	h[i].ev_fd = -1;
	h[i].state = S_DONE;
}

/* open connection i: a request (with a receive when asked), connect, non-blocking event fd */
static int open_one(long i, struct rpma_mr_local *recv_mr, const struct rpma_conn_private_data *pd,
		const char *addr, const char *port)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (ret) {
		fail_conn(i, "rpma_conn_req_new", ret);
		return ret;
	}
	if (recv_mr && (ret = rpma_conn_req_recv(req, recv_mr, (size_t)i * MSG_SIZE, MSG_SIZE,
			(void *)(uintptr_t)i))) {
		fail_conn(i, "rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		return ret;
	}
	if ((ret = rpma_conn_req_connect(&req, pd, &h[i].conn))) {   /* consumes req */
		fail_conn(i, "rpma_conn_req_connect", ret);
		return ret;
	}
	if ((ret = rpma_conn_get_event_fd(h[i].conn, &h[i].ev_fd))) {
		fail_conn(i, "rpma_conn_get_event_fd", ret);
		drop(i);
		return ret;
	}
	if (set_nonblock(h[i].ev_fd)) {
		drop(i);
		return -1;
	}
	h[i].state = S_CONNECTING;
	return 0;
}

/* one CM event of connection i */
static void on_event(long i)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(h[i].conn, &ev);
	if (no_event(ret))
		return;   /* an event librpma does not map, or nothing after a spurious POLLIN */
	if (ret) {
		fail_conn(i, "rpma_conn_next_event", ret);
		st.errors++;
		if (h[i].state == S_CONNECTING)
			st.failed++;
		drop(i);
		return;
	}
	uint64_t t = now_ms();
	switch (h[i].state) {
	case S_CONNECTING:
		if (ev == RPMA_CONN_ESTABLISHED) {
			h[i].state = S_ESTABLISHED;
			h[i].t_established = t;
			st.established++;
			return;
		}
		printf("FAILED %ld %s\n", i, rpma_utils_conn_event_2str(ev));
		fflush(stdout);
		st.failed++;
		drop(i);   /* never established: nothing to disconnect */
		return;
	case S_ESTABLISHED:
		if (ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST) {
			fprintf(stderr, "conn_holder: connection %ld: unexpected event %s\n", i,
				rpma_utils_conn_event_2str(ev));
			st.errors++;
			return;
		}
		printf("%s %ld after_ms=%" PRIu64 "\n", ev == RPMA_CONN_CLOSED ? "CLOSED" : "LOST", i,
			t - h[i].t_established);
		fflush(stdout);
		st.closed_by_server++;
		if (ev == RPMA_CONN_LOST)
			st.errors++;
		/* answer the server's disconnect, as the example's client does, then delete */
		(void) rpma_conn_disconnect(h[i].conn);
		drop(i);
		return;
	case S_DISCONNECTING:
		if (ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST) {
			st.closed_by_client++;
			drop(i);
		}
		return;
	default:
		return;
	}
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s ADDR PORT --count N [--post-recv] [--hold SEC] [--pdata STRING] [--timeout SEC]\n",
		argv0);
	exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
	const char *pos[2], *pdata_str = NULL;
	int npos = 0;
	long hold_s = 30, timeout_s = 60;
	bool post_recv = false;
	count = -1;
	for (int i = 1; i < argc; i++) {
		bool has_value = i + 1 < argc;
		if (!strcmp(argv[i], "--count") && has_value)
			count = parse_long(argv[i], argv[i + 1], 0);
		else if (!strcmp(argv[i], "--hold") && has_value)
			hold_s = parse_long(argv[i], argv[i + 1], 0);
		else if (!strcmp(argv[i], "--timeout") && has_value)
			timeout_s = parse_long(argv[i], argv[i + 1], 0);
		else if (!strcmp(argv[i], "--pdata") && has_value)
			pdata_str = argv[i + 1];
		else if (!strcmp(argv[i], "--post-recv")) {
			post_recv = true;
			continue;
		} else if (argv[i][0] != '-' && npos < 2) {
			pos[npos++] = argv[i];
			continue;
		} else
			usage(argv[0]);
		i++;   /* the option's value */
	}
	if (npos != 2 || count < 1 || timeout_s < 1)
		usage(argv[0]);
	if (pdata_str && strlen(pdata_str) + 1 > 255) {   /* rpma_conn_private_data.len is a uint8_t */
		fprintf(stderr, "conn_holder: --pdata: at most 254 characters\n");
		return EXIT_USAGE;
	}
	const char *addr = pos[0], *port = pos[1];

	raise_fd_limit();
	init_output();

	int sig_fd = stop_signal_fd();
	if (sig_fd < 0) {
		perror("conn_holder: signalfd");
		return EXIT_FAIL;
	}

	h = calloc((size_t)count, sizeof(*h));
	struct pollfd *pfd = calloc((size_t)count + 1, sizeof(*pfd));
	long *who = calloc((size_t)count + 1, sizeof(*who));
	uint64_t *recv_buf = NULL;
	struct rpma_mr_local *recv_mr = NULL;
	int ret, rc = EXIT_OK;
	if (!h || !pfd || !who) {
		fprintf(stderr, "conn_holder: out of memory\n");
		return EXIT_FAIL;
	}
	for (long i = 0; i < count; i++)
		h[i].ev_fd = -1;

	if (new_peer(addr, &peer))
		return EXIT_FAIL;
	if (post_recv) {
		/* one region for all receive slots: one registration, not one per connection */
		if (posix_memalign((void **)&recv_buf, (size_t)sysconf(_SC_PAGESIZE), (size_t)count * MSG_SIZE)) {
			fprintf(stderr, "conn_holder: out of memory\n");
			rc = EXIT_FAIL;
			goto out_peer;
		}
		memset(recv_buf, 0, (size_t)count * MSG_SIZE);
		if ((ret = rpma_mr_reg(peer, recv_buf, (size_t)count * MSG_SIZE, RPMA_MR_USAGE_RECV, &recv_mr))) {
			fail("rpma_mr_reg", ret);
			rc = EXIT_FAIL;
			goto out_free;
		}
	}
	struct rpma_conn_private_data pd = { (void *)pdata_str, pdata_str ? (uint8_t)(strlen(pdata_str) + 1) : 0 };

	/*
	 * Phases: establishing (open and wait, bounded by --timeout), holding (until --hold or a
	 * signal), closing (disconnect the rest, wait at most TEARDOWN_MS for their CLOSED).
	 */
	enum { P_ESTABLISHING, P_HOLDING, P_CLOSING } phase = P_ESTABLISHING;
	uint64_t deadline = now_ms() + (uint64_t)timeout_s * 1000u;   /* of the current phase */
	long opened = 0;
	bool interrupted = false;
	for (;;) {
		bool start_closing = false;
		if (phase == P_ESTABLISHING) {
			long connecting = 0;
			for (long i = 0; i < opened; i++)
				connecting += h[i].state == S_CONNECTING;
			while (opened < count && connecting < MAX_CONNECTING && !interrupted) {
				if (open_one(opened, recv_mr, pdata_str ? &pd : NULL, addr, port)) {
					printf("FAILED %ld open\n", opened);
					st.failed++;
					h[opened].state = S_DONE;
				} else {
					connecting++;
				}
				opened++;
			}
			bool all_done = opened == count && connecting == 0;
			bool timed_out = !all_done && now_ms() >= deadline;
			if (all_done || interrupted || timed_out) {
				for (long i = 0; i < count; i++) {
					if (h[i].state == S_CONNECTING || h[i].state == S_NEW) {
						printf("FAILED %ld %s\n", i, timed_out ? "timeout" : "interrupted");
						st.failed++;
						if (h[i].state == S_CONNECTING)
							drop(i);   /* never established: nothing to disconnect */
						h[i].state = S_DONE;
					}
				}
				printf("ESTABLISHED %ld\n", st.established);
				fflush(stdout);
				if (timed_out) {
					fprintf(stderr, "conn_holder: not all connections established within %ld s\n",
						timeout_s);
					rc = EXIT_TIMEOUT;
				} else if (st.failed) {
					rc = EXIT_FAIL;
				}
				if (rc == EXIT_OK && !interrupted) {
					phase = P_HOLDING;
					deadline = now_ms() + (uint64_t)hold_s * 1000u;
				} else {
					if (rc == EXIT_OK)
						rc = EXIT_FAIL;   /* a signal before all were established */
					start_closing = true;
				}
			}
		}
		if (phase == P_HOLDING && (interrupted || now_ms() >= deadline))
			start_closing = true;
		if (start_closing) {
			/* our turn to end the rest: disconnect, then wait (bounded) for their CLOSED */
			for (long i = 0; i < count; i++) {
				if (h[i].state != S_ESTABLISHED)
					continue;
				if ((ret = rpma_conn_disconnect(h[i].conn))) {
					fail_conn(i, "rpma_conn_disconnect", ret);
					st.errors++;
					drop(i);
				} else {
					h[i].state = S_DISCONNECTING;
				}
			}
			phase = P_CLOSING;
			deadline = now_ms() + TEARDOWN_MS;
		}
		if (phase == P_CLOSING) {
			long left = 0;
			for (long i = 0; i < count; i++)
				left += h[i].state == S_DISCONNECTING;
			if (left == 0)
				break;
			if (now_ms() >= deadline) {
				for (long i = 0; i < count; i++) {
					if (h[i].state == S_DISCONNECTING) {
						fprintf(stderr, "conn_holder: connection %ld: no CLOSED within %d ms of the disconnect\n",
							i, TEARDOWN_MS);
						st.errors++;
						drop(i);
					}
				}
				break;
			}
		}

		nfds_t n = 0;
		pfd[n] = (struct pollfd){ sig_fd, POLLIN, 0 };
		who[n++] = -1;
		for (long i = 0; i < count; i++) {
			if (h[i].state == S_CONNECTING || h[i].state == S_ESTABLISHED || h[i].state == S_DISCONNECTING) {
				pfd[n] = (struct pollfd){ h[i].ev_fd, POLLIN, 0 };
				who[n++] = i;
			}
		}
		uint64_t t = now_ms();
		int timeout = deadline > t ? (int)(deadline - t) : 0;
		if (phase == P_ESTABLISHING && opened < count)
			timeout = timeout > 10 ? 10 : timeout;   /* come back to open more */
		int np = poll(pfd, n, timeout);
		if (np < 0 && errno != EINTR) {
			perror("conn_holder: poll");
			st.errors++;
			interrupted = true;
			continue;
		}
		for (nfds_t k = 0; np > 0 && k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (who[k] < 0) {
				struct signalfd_siginfo si;
				while (read(sig_fd, &si, sizeof(si)) == sizeof(si))
					interrupted = true;
			} else if (h[who[k]].state != S_DONE) {
				on_event(who[k]);
			}
		}
	}

	for (long i = 0; i < count; i++)
		if (h[i].conn)
			drop(i);
	if ((ret = rpma_mr_dereg(&recv_mr))) {
		fail("rpma_mr_dereg", ret);
		st.errors++;
	}
out_free:
	free(recv_buf);
out_peer:
	if ((ret = rpma_peer_delete(&peer))) {
		fail("rpma_peer_delete", ret);
		st.errors++;
	}
	close(sig_fd);
	printf("RESULT established=%ld closed_by_server=%ld closed_by_client=%ld errors=%ld\n",
		st.established, st.closed_by_server, st.closed_by_client, st.errors);
	fflush(stdout);
	free(h);
	free(pfd);
	free(who);
	if (rc == EXIT_OK && (st.errors || st.failed))
		rc = EXIT_FAIL;
	return rc;
}

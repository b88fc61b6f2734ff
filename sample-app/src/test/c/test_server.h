/*
 * test_server.h - what the end-to-end tests' C servers (hello_server, read_server,
 * pingpong_server) have in common on top of test_client.h (exit codes, argument parsing, error
 * messages, bounded waits for connection events and completions): listening, a bounded wait for
 * one connection request on the non-blocking endpoint fd, the accept, the server's teardown, and
 * printing a client's bytes without passing control characters through.
 *
 * Like librpma's example servers, each program serves ONE connection and exits: 0 when the
 * example's exchange completed. Before its first wait it prints
 *   Listening on ADDR:PORT
 * on stdout, which a test waits for before it connects.
 *
 * Each program defines _GNU_SOURCE and PROG_NAME before it includes this header (as with
 * test_client.h). Everything here is static inline.
 */
#ifndef TEST_SERVER_H
#define TEST_SERVER_H

#include "test_client.h"

#include <ctype.h>
#include <string.h>

/* the peer on the device of the local address addr, listening on addr:port, with the endpoint's
 * fd made non-blocking (*ep_fd); prints "Listening on ADDR:PORT"; a failure is reported */
static inline int server_listen(const char *addr, const char *port, struct rpma_peer **peer, struct rpma_ep **ep,
		int *ep_fd)
{
	struct ibv_context *ibv = NULL;
	int ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv);
	if (ret) {
		fail("rpma_utils_get_ibv_context", ret);
		return ret;
	}
	if ((ret = rpma_peer_new(ibv, peer))) {
		fail("rpma_peer_new", ret);
		return ret;
	}
	if ((ret = rpma_ep_listen(*peer, addr, port, ep))) {
		fail("rpma_ep_listen", ret);
		return ret;
	}
	if ((ret = rpma_ep_get_fd(*ep, ep_fd))) {
		fail("rpma_ep_get_fd", ret);
		return ret;
	}
	/* non-blocking even though it is polled: librdmacm can swallow an event after POLLIN */
	if (set_nonblock(*ep_fd))
		return -1;
	printf("Listening on %s:%s\n", addr, port);
	return 0;
}

/*
 * The next connection request, waiting at most until deadline: WAIT_OK with *req, WAIT_TIMEOUT,
 * or an error (reported). "Nothing queued" (RPMA_E_PROVIDER with EAGAIN, RPMA_E_NO_EVENT) and an
 * event other than a request (RPMA_E_INVAL, acked and dropped by librpma) are waited past.
 */
static inline int wait_conn_req(struct rpma_ep *ep, int ep_fd, uint64_t deadline, struct rpma_conn_req **req)
{
	for (;;) {
		uint64_t t = now_ms();
		if (t >= deadline)
			return WAIT_TIMEOUT;
		struct pollfd pfd = { ep_fd, POLLIN, 0 };
		int np = poll(&pfd, 1, (int)(deadline - t));
		if (np < 0 && errno != EINTR) {
			perror(PROG_NAME ": poll");
			return -1;
		}
		if (np <= 0)
			continue;
		int ret = rpma_ep_next_conn_req(ep, NULL, req);
		if (ret == 0)
			return WAIT_OK;
		if (no_event(ret) || ret == RPMA_E_INVAL)
			continue;
		fail("rpma_ep_next_conn_req", ret);
		return ret;
	}
}

/*
 * Accepts *req with pdata (NULL: none; the request is consumed whatever the result), makes the
 * connection's event fd non-blocking (*ev_fd, -1 when that fails) and waits until deadline for
 * its first event (*ev): WAIT_OK with ESTABLISHED or, when closed_ok, CLOSED (under rxe a
 * short-lived connection can reach CLOSED without ESTABLISHED on the passive side);
 * WAIT_TIMEOUT ("the connection was not established within ..." printed); < 0 an error or
 * another event (printed).
 */
static inline int accept_conn(struct rpma_conn_req **req, const struct rpma_conn_private_data *pdata,
		struct rpma_conn **conn, int *ev_fd, uint64_t deadline, bool closed_ok, enum rpma_conn_event *ev)
{
	*ev_fd = -1;
	int ret = rpma_conn_req_connect(req, pdata, conn);
	if (ret) {
		fail("rpma_conn_req_connect", ret);
		return ret;
	}
	if ((ret = rpma_conn_get_event_fd(*conn, ev_fd)) || set_nonblock(*ev_fd)) {
		if (ret)
			fail("rpma_conn_get_event_fd", ret);
		*ev_fd = -1;
		return ret ? ret : -1;
	}
	*ev = RPMA_CONN_UNDEFINED;
	ret = wait_event(*conn, *ev_fd, deadline, ev);
	if (ret == WAIT_TIMEOUT)
		fprintf(stderr, PROG_NAME ": the connection was not established before the timeout\n");
	if (ret)
		return ret;
	if (*ev == RPMA_CONN_ESTABLISHED || (closed_ok && *ev == RPMA_CONN_CLOSED))
		return WAIT_OK;
	fprintf(stderr, PROG_NAME ": unexpected event while accepting: %s\n", rpma_utils_conn_event_2str(*ev));
	return -1;
}

/* the endpoint and the peer, in librpma's order (after every connection was deleted): rc, or
 * EXIT_FAIL when it was EXIT_OK and one of them failed */
static inline int server_shutdown(struct rpma_ep **ep, struct rpma_peer **peer, int rc)
{
	if (*ep)
		rc = cleanup_rc(rc, "rpma_ep_shutdown", rpma_ep_shutdown(ep));
	if (*peer)
		rc = cleanup_rc(rc, "rpma_peer_delete", rpma_peer_delete(peer));
	return rc;
}

/*
 * "<prefix><bytes>\n" on stdout for bytes a client sent: up to the first NUL (the transport pads
 * private data with zeros) or len, printable ASCII as it is and anything else as \xNN
 */
static inline void print_peer_text(const char *prefix, const void *ptr, size_t len)
{
	const unsigned char *p = ptr;
	fputs(prefix, stdout);
	for (size_t i = 0; i < len && p[i]; i++) {
		if (isprint(p[i]) && p[i] != '\\')
			putchar(p[i]);
		else
			printf("\\x%02x", p[i]);
	}
	putchar('\n');
}

#endif /* TEST_SERVER_H */

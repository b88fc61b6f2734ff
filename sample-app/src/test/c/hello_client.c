/*
 * hello_client.c - an end-to-end test client that behaves as librpma's example
 * 01-connection client, on the wire and in the order of its calls, with every wait bounded.
 *
 *   hello_client ADDR PORT [--timeout SEC] [--retry-delay-ms N] [--attempts N] [--private-data-hex HEX]
 *                [--sessions N]
 *
 * Connects to ADDR:PORT with private data "Hello server!\0" (14 bytes), or the bytes HEX gives
 * (at most 56: an admission token in front of the greeting, say). A REJECTED connect (also what a
 * port without a listener gives) is retried: 10 attempts in all (--attempts), N ms apart
 * (default 5000, the example's 5 s). After ESTABLISHED it prints
 *   Received a message: <the server's private data as a C string>
 * (or "No message received" when there is none), then waits for the server to close the
 * connection: the example's server disconnects first. After that CLOSED it disconnects,
 * deletes the connection and exits.
 *
 * --sessions N (default 1): N such sessions one after the other on the one peer, as a long-lived
 * client would; the first that fails ends the run with its exit code.
 *
 * --timeout SEC (default 60) bounds the whole run: a server that never answers, or one that
 * waits for the client to disconnect first (which leaves the example's client waiting for
 * ever), makes it give up, disconnect, delete everything and exit 3.
 *
 * Exit codes: 0 the exchange completed; 1 a librpma call failed, an unexpected event came or
 * every attempt was rejected; 2 usage; 3 timed out ("the server never closed the connection"
 * when that is what it waited for). Every failure prints one "hello_client: ..." line on stderr.
 */
#define _GNU_SOURCE
#define PROG_NAME "hello_client"
#include "test_client.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_ATTEMPTS 10          /* the example's MAX_RETRY: 10 connects in all */

static const char HELLO_SERVER[] = "Hello server!";   /* sent with its '\0': 14 bytes */

/*
 * One session on peer: connect (retried while REJECTED), print the server's greeting, wait for its
 * CLOSED, disconnect and delete. Returns the session's exit code.
 */
static int hello_session(struct rpma_peer *peer, const char *addr, const char *port,
		struct rpma_conn_private_data *pdata, long attempts, long retry_delay_ms, long timeout_s,
		uint64_t deadline)
{
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ev_fd = -1, ret, rc = EXIT_FAIL;
	bool established = false;

	for (int attempt = 0; attempt < attempts; attempt++) {
		if (connect_to(peer, addr, port, pdata, NULL, 0, NULL, &conn))
			return EXIT_FAIL;
		ret = wait_established(conn, &ev_fd, deadline, (uint64_t)timeout_s, true);
		if (ret == WAIT_OK) {
			established = true;
			break;
		}
		if (ret == WAIT_TIMEOUT)
			rc = EXIT_TIMEOUT;
		if (ret != WAIT_REJECTED)
			goto out_disconnect;
		/* REJECTED: the server is not there (yet), or turned us away; as the example does */
		(void) rpma_conn_disconnect(conn);
		if ((ret = rpma_conn_delete(&conn)))
			fail("rpma_conn_delete", ret);
		if (attempt == attempts - 1) {
			fprintf(stderr, "hello_client: still rejected after %ld attempts\n", attempts);
			return EXIT_FAIL;
		}
		fprintf(stderr, "Retrying...\n");
		uint64_t t = now_ms();
		if (t + (uint64_t)retry_delay_ms >= deadline) {
			fprintf(stderr, "hello_client: rejected, and the next attempt would pass the %ld s timeout\n",
				timeout_s);
			return EXIT_TIMEOUT;
		}
		struct timespec d = { retry_delay_ms / 1000, (retry_delay_ms % 1000) * 1000000L };
		while (nanosleep(&d, &d) && errno == EINTR)
			;
	}

	/* ESTABLISHED: the private data is copied by librpma and bounded by its length */
	struct rpma_conn_private_data in = { NULL, 0 };
	if ((ret = rpma_conn_get_private_data(conn, &in))) {
		fail("rpma_conn_get_private_data", ret);
		goto out_disconnect;
	}
	if (in.ptr) {
		char msg[256];
		size_t n = strnlen(in.ptr, in.len);   /* the transport may pad it with zeros */
		memcpy(msg, in.ptr, n);
		msg[n] = '\0';
		printf("Received a message: %s\n", msg);
	} else {
		printf("No message received\n");
	}
	fflush(stdout);

	/* the example's server disconnects first: wait for its CLOSED */
	ret = wait_event(conn, ev_fd, deadline, &ev);
	if (ret == WAIT_TIMEOUT) {
		fprintf(stderr, "hello_client: the server never closed the connection (waited %ld s)\n", timeout_s);
		rc = EXIT_TIMEOUT;
		goto out_disconnect;
	}
	if (ret)
		goto out_disconnect;
	if (ev != RPMA_CONN_CLOSED) {
		fprintf(stderr, "hello_client: unexpected event instead of CLOSED: %s\n",
			rpma_utils_conn_event_2str(ev));
		goto out_disconnect;
	}
	/* answer the server's disconnect, then delete (the example's order) */
	if ((ret = rpma_conn_disconnect(conn))) {
		fail("rpma_conn_disconnect", ret);
		goto out_delete;
	}
	rc = EXIT_OK;
	goto out_delete;

out_disconnect:
	/* our side ends it: disconnect and give the CLOSED a short, bounded wait (a connection
	 * that never got established is only deleted) */
	if (established && rpma_conn_disconnect(conn) == 0)
		(void) wait_closed(conn, ev_fd, now_ms() + TEARDOWN_GRACE_MS);
out_delete:
	return cleanup_rc(rc, "rpma_conn_delete", rpma_conn_delete(&conn));
}

int main(int argc, char **argv)
{
	const char *pos[2];
	int npos = 0;
	long timeout_s = 60, retry_delay_ms = 5000, attempts = MAX_ATTEMPTS, sessions = 1;
	unsigned char custom[56];
	size_t custom_len = 0;
	bool has_custom = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout_s = parse_long(argv[i], argv[i + 1], 0);
			i++;
		} else if (!strcmp(argv[i], "--retry-delay-ms") && i + 1 < argc) {
			retry_delay_ms = parse_long(argv[i], argv[i + 1], 0);
			i++;
		} else if (!strcmp(argv[i], "--attempts") && i + 1 < argc) {
			attempts = parse_long(argv[i], argv[i + 1], 1);
			if (attempts > MAX_ATTEMPTS)
				bad_value(argv[i], argv[i + 1]);
			i++;
		} else if (!strcmp(argv[i], "--sessions") && i + 1 < argc) {
			sessions = parse_long(argv[i], argv[i + 1], 1);
			i++;
		} else if (!strcmp(argv[i], "--private-data-hex") && i + 1 < argc) {
			custom_len = parse_hex(argv[i], argv[i + 1], custom, sizeof(custom));
			has_custom = true;
			i++;
		} else if (argv[i][0] != '-' && npos < 2)
			pos[npos++] = argv[i];
		else
			npos = -100;
	}
	if (npos != 2 || timeout_s < 1) {
		fprintf(stderr, "usage: %s ADDR PORT [--timeout SEC] [--retry-delay-ms N] [--attempts N]"
			" [--private-data-hex HEX] [--sessions N]\n", argv[0]);
		return EXIT_USAGE;
	}
	const char *addr = pos[0], *port = pos[1];
	uint64_t deadline = now_ms() + (uint64_t)timeout_s * 1000u;

	init_output();

	struct rpma_peer *peer = NULL;
	int rc = EXIT_OK;
	if (new_peer(addr, &peer))
		return EXIT_FAIL;

	struct rpma_conn_private_data pdata = { (void *)HELLO_SERVER, sizeof(HELLO_SERVER) };
	if (has_custom) {
		pdata.ptr = custom;
		pdata.len = (uint8_t)custom_len;
	}
	for (long session = 0; session < sessions && rc == EXIT_OK; session++)
		rc = hello_session(peer, addr, port, &pdata, attempts, retry_delay_ms, timeout_s, deadline);
	return cleanup_rc(rc, "rpma_peer_delete", rpma_peer_delete(&peer));
}

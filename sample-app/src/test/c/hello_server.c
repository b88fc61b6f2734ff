/*
 * hello_server.c - an end-to-end test server that behaves as librpma's example
 * 01-connection server, on the wire and in the order of its calls, with every wait bounded:
 * the peer of a client written for that example (the Java client among them) must complete
 * against it.
 *
 *   hello_server ADDR PORT [--timeout SEC]
 *
 * Listens on ADDR:PORT ("Listening on ADDR:PORT"), takes one connection request and accepts it
 * with the private data "Hello client!\0" (14 bytes). After ESTABLISHED it prints
 *   Received a message: <the client's private data up to its first NUL>
 * (or "No message received" when there is none); then, as the example's server, it disconnects
 * first, waits for CLOSED, deletes the connection, shuts the endpoint down and exits.
 *
 * --timeout SEC (default 60) bounds the whole run: no request, no ESTABLISHED or no CLOSED in
 * time makes it clean up and exit 3.
 *
 * Exit codes: 0 the exchange completed; 1 a librpma call failed or an unexpected event came;
 * 2 usage; 3 timed out. Every failure prints one "hello_server: ..." line on stderr.
 */
#define _GNU_SOURCE
#define PROG_NAME "hello_server"
#include "test_server.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char HELLO_CLIENT[] = "Hello client!";   /* sent with its '\0': 14 bytes */

int main(int argc, char **argv)
{
	const char *addr, *port;
	long timeout_s;
	uint64_t deadline = parse_addr_port_timeout(argc, argv, &addr, &port, &timeout_s, NULL);

	init_output();

	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ep_fd = -1, ev_fd = -1, ret, rc = EXIT_FAIL;
	bool established = false;

	if (server_listen(addr, port, &peer, &ep, &ep_fd))
		goto out_shutdown;
	ret = wait_conn_req(ep, ep_fd, deadline, &req);
	if (ret == WAIT_TIMEOUT) {
		fprintf(stderr, "hello_server: no connection request within %ld s\n", timeout_s);
		rc = EXIT_TIMEOUT;
	}
	if (ret)
		goto out_shutdown;

	struct rpma_conn_private_data pdata = { (void *)HELLO_CLIENT, sizeof(HELLO_CLIENT) };
	ret = accept_conn(&req, &pdata, &conn, &ev_fd, deadline, false, &ev);
	if (ret == WAIT_TIMEOUT)
		rc = EXIT_TIMEOUT;
	if (ret)
		goto out_end;
	established = true;

	struct rpma_conn_private_data in = { NULL, 0 };
	if ((ret = rpma_conn_get_private_data(conn, &in))) {
		fail("rpma_conn_get_private_data", ret);
		goto out_end;
	}
	if (in.ptr && in.len > 0)
		print_peer_text("Received a message: ", in.ptr, in.len);
	else
		printf("No message received\n");
	rc = EXIT_OK;

out_end:
	/* the example's server ends the connection: disconnect, wait for CLOSED, delete */
	if (conn)
		rc = end_connection(&conn, established, false, ev_fd, deadline, rc);
out_shutdown:
	return server_shutdown(&ep, &peer, rc);
}

/*
 * read_server.c - an end-to-end test server that behaves as librpma's example
 * 02-read-to-volatile server, on the wire and in the order of its calls, with every wait
 * bounded: the peer of a client written for that example (the Java client among them) must
 * complete against it.
 *
 *   read_server ADDR PORT [--timeout SEC]
 *
 * Registers "Hello client!\0" (14 bytes, page-aligned) with RPMA_MR_USAGE_READ_SRC, listens on
 * ADDR:PORT ("Listening on ADDR:PORT"), takes one connection request and accepts it with the
 * examples' common_data as private data:
 *   struct common_data { uint16_t data_offset; uint8_t mr_desc_size; uint8_t pcfg_desc_size;
 *                        char descriptors[24]; }      (28 bytes, little-endian)
 * with data_offset 0, pcfg_desc_size 0 and the region's descriptor first in descriptors. The
 * client reads the string with rpma_read, which this server never sees. As the example's server,
 * it then waits for the client to disconnect: after CLOSED it prints "Client disconnected",
 * disconnects, deletes the connection, deregisters the region, shuts the endpoint down and exits.
 *
 * --timeout SEC (default 60) bounds the whole run: no request, no ESTABLISHED or no CLOSED in
 * time makes it clean up and exit 3.
 *
 * Exit codes: 0 the client came and went; 1 a librpma call failed or an unexpected event came;
 * 2 usage; 3 timed out. Every failure prints one "read_server: ..." line on stderr.
 */
#define _GNU_SOURCE
#define PROG_NAME "read_server"
#include "test_server.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DESCRIPTORS_MAX_SIZE 24

static const char HELLO_CLIENT[] = "Hello client!";   /* the region: the string and its '\0' */

/* the examples' struct common_data: no padding, x86-64 is little-endian as the wire wants */
struct common_data {
	uint16_t data_offset;
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	char descriptors[DESCRIPTORS_MAX_SIZE];
};
_Static_assert(sizeof(struct common_data) == 28, "struct common_data is 28 bytes on the wire");

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
	struct rpma_mr_local *mr = NULL;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ep_fd = -1, ev_fd = -1, ret, rc = EXIT_FAIL;
	void *region = NULL;

	if (server_listen(addr, port, &peer, &ep, &ep_fd))
		goto out_shutdown;
	if (posix_memalign(&region, (size_t)sysconf(_SC_PAGESIZE), sizeof(HELLO_CLIENT))) {
		fprintf(stderr, "read_server: out of memory\n");
		region = NULL;
		goto out_shutdown;
	}
	memcpy(region, HELLO_CLIENT, sizeof(HELLO_CLIENT));
	if ((ret = rpma_mr_reg(peer, region, sizeof(HELLO_CLIENT), RPMA_MR_USAGE_READ_SRC, &mr))) {
		fail("rpma_mr_reg", ret);
		goto out_free;
	}
	struct common_data data;
	memset(&data, 0, sizeof(data));
	size_t desc_size = 0;
	if ((ret = rpma_mr_get_descriptor_size(mr, &desc_size))) {
		fail("rpma_mr_get_descriptor_size", ret);
		goto out_dereg;
	}
	if (desc_size > DESCRIPTORS_MAX_SIZE) {
		fprintf(stderr, "read_server: the region's descriptor (%zu bytes) does not fit common_data\n", desc_size);
		goto out_dereg;
	}
	data.mr_desc_size = (uint8_t)desc_size;
	if ((ret = rpma_mr_get_descriptor(mr, data.descriptors))) {
		fail("rpma_mr_get_descriptor", ret);
		goto out_dereg;
	}

	ret = wait_conn_req(ep, ep_fd, deadline, &req);
	if (ret == WAIT_TIMEOUT) {
		fprintf(stderr, "read_server: no connection request within %ld s\n", timeout_s);
		rc = EXIT_TIMEOUT;
	}
	if (ret)
		goto out_dereg;

	struct rpma_conn_private_data pdata = { &data, sizeof(data) };
	/* a client that read at once may be gone before this side saw ESTABLISHED */
	ret = accept_conn(&req, &pdata, &conn, &ev_fd, deadline, true, &ev);
	if (ret == WAIT_TIMEOUT)
		rc = EXIT_TIMEOUT;
	if (ret)
		goto out_delete;
	if (ev == RPMA_CONN_ESTABLISHED) {
		/* the client reads, then disconnects: wait for that */
		ret = wait_closed(conn, ev_fd, deadline);
		if (ret == WAIT_TIMEOUT) {
			fprintf(stderr, "read_server: the client did not disconnect within %ld s\n", timeout_s);
			rc = EXIT_TIMEOUT;
		}
		if (ret)
			goto out_disconnect;
	}
	printf("Client disconnected\n");
	rc = EXIT_OK;

out_disconnect:
	/* after the client's CLOSED, as the example: disconnect, delete */
	rc = cleanup_rc(rc, "rpma_conn_disconnect", rpma_conn_disconnect(conn));
out_delete:
	if (conn)
		rc = cleanup_rc(rc, "rpma_conn_delete", rpma_conn_delete(&conn));
out_dereg:
	rc = cleanup_rc(rc, "rpma_mr_dereg", rpma_mr_dereg(&mr));
out_free:
	free(region);
out_shutdown:
	return server_shutdown(&ep, &peer, rc);
}

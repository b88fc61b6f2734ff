/*
 * read_to_persistent_client.c - an end-to-end test client that behaves as librpma's example
 * 03-read-to-persistent client, on the wire and in the order of its calls, with every wait bounded.
 *
 *   read_to_persistent_client ADDR PORT TEXT [--timeout SEC]
 *
 * Puts TEXT (at most 1023 bytes) into the string of the example's
 *   struct hello_t { enum lang_t lang; char str[1024]; }     (1028 bytes, lang en)
 * in page-aligned memory, prints "Next value: TEXT", registers that memory with
 * RPMA_MR_USAGE_READ_SRC and connects to ADDR:PORT with the examples' common_data as private data:
 *   struct common_data { uint16_t data_offset; uint8_t mr_desc_size; uint8_t pcfg_desc_size;
 *                        char descriptors[24]; }      (28 bytes, little-endian)
 * data_offset being offsetof(struct hello_t, str), pcfg_desc_size 0, the descriptors the region's.
 * Between ESTABLISHED and CLOSED the server reads the 1024-byte string with rpma_read, which this
 * side never sees. The client waits for the server's disconnect (CLOSED), then disconnects, deletes
 * the connection and prints "Closed by the server". (The example's client then translates its
 * greeting for its next run: local memory only, left out.)
 *
 * --timeout SEC (default 60) bounds the whole run: a server that never disconnects makes the client
 * give up, disconnect, delete everything and exit 3.
 *
 * Exit codes: 0 the server closed the connection after ESTABLISHED; 1 a librpma call failed or
 * another event came (REJECTED, LOST); 2 usage; 3 timed out. Every failure prints one
 * "read_to_persistent_client: ..." line on stderr.
 */
#define _GNU_SOURCE
#define PROG_NAME "read_to_persistent_client"
#include "test_client.h"

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HELLO_STR_SIZE 1024
#define DESCRIPTORS_MAX_SIZE 24

enum lang_t { en, es };

/* common-hello.h of the examples */
struct hello_t {
	enum lang_t lang;
	char str[HELLO_STR_SIZE];
};

/* common-conn.h of the examples */
struct common_data {
	uint16_t data_offset;
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	char descriptors[DESCRIPTORS_MAX_SIZE];
};

int main(int argc, char **argv)
{
	const char *pos[3];
	long timeout_s;
	uint64_t deadline = parse_positional_timeout(argc, argv, 3, pos, "ADDR PORT TEXT", &timeout_s, NULL);
	const char *addr = pos[0], *port = pos[1], *text = pos[2];
	if (strlen(text) >= HELLO_STR_SIZE)
		bad_value("TEXT (at most 1023 bytes)", text);

	init_output();

	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_conn *conn = NULL;
	struct hello_t *hello = NULL;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ev_fd = -1, ret, rc = EXIT_FAIL;
	bool established = false, closed = false;

	/* page-aligned and zeroed, as the example's malloc_aligned() */
	if (posix_memalign((void **)&hello, (size_t)sysconf(_SC_PAGESIZE), sizeof(*hello))) {
		fprintf(stderr, PROG_NAME ": out of memory\n");
		return EXIT_FAIL;
	}
	memset(hello, 0, sizeof(*hello));
	hello->lang = en;
	strcpy(hello->str, text);
	printf("Next value: %s\n", hello->str);

	if (new_peer(addr, &peer))
		goto out_free;
	if ((ret = rpma_mr_reg(peer, hello, sizeof(*hello), RPMA_MR_USAGE_READ_SRC, &mr))) {
		fail("rpma_mr_reg", ret);
		goto out_peer;
	}

	/* where the server reads: the string in the registered hello_t */
	struct common_data data;
	memset(&data, 0, sizeof(data));
	size_t mr_desc_size = 0;
	if ((ret = rpma_mr_get_descriptor_size(mr, &mr_desc_size))) {
		fail("rpma_mr_get_descriptor_size", ret);
		goto out_dereg;
	}
	data.data_offset = (uint16_t)offsetof(struct hello_t, str);
	data.mr_desc_size = (uint8_t)mr_desc_size;
	if ((ret = rpma_mr_get_descriptor(mr, &data.descriptors[0]))) {
		fail("rpma_mr_get_descriptor", ret);
		goto out_dereg;
	}

	struct rpma_conn_private_data pdata = { &data, sizeof(data) };
	if (connect_to(peer, addr, port, &pdata, NULL, 0, NULL, &conn))
		goto out_dereg;
	ret = wait_established(conn, &ev_fd, deadline, (uint64_t)timeout_s, false);
	if (ret == WAIT_TIMEOUT)
		rc = EXIT_TIMEOUT;
	if (ret)
		goto out_end;
	established = true;

	/* the server reads, then disconnects: wait for its CLOSED, then answer it and delete (the
	 * example's order) */
	ret = wait_event(conn, ev_fd, deadline, &ev);
	if (ret == WAIT_TIMEOUT) {
		fprintf(stderr, PROG_NAME ": the server never closed the connection (waited %ld s)\n", timeout_s);
		rc = EXIT_TIMEOUT;
	} else if (!ret && ev != RPMA_CONN_CLOSED) {
		fprintf(stderr, PROG_NAME ": unexpected event instead of CLOSED: %s\n", rpma_utils_conn_event_2str(ev));
	} else if (!ret) {
		closed = true;
		rc = EXIT_OK;
	}

out_end:
	rc = end_connection(&conn, established, closed, ev_fd, deadline, rc);
out_dereg:
	rc = cleanup_rc(rc, "rpma_mr_dereg", rpma_mr_dereg(&mr));
out_peer:
	rc = cleanup_rc(rc, "rpma_peer_delete", rpma_peer_delete(&peer));
out_free:
	free(hello);
	if (rc == EXIT_OK)
		printf("Closed by the server\n");
	return rc;
}

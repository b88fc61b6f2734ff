/*
 * persist_client.c - an end-to-end test client for a server's persistent region, written after
 * librpma's examples 04-write-to-persistent and 05-flush-to-persistent (their clients' protocol
 * and order of calls), with every wait bounded.
 *
 *   persist_client ADDR PORT MODE [--timeout SEC]
 *
 * MODE:
 *   write            as example 04's client: write the 1 KiB greeting (struct hello_t's str:
 *                    "Hello world!", NUL-padded) at the region's data_offset with rpma_write
 *                    (RPMA_F_COMPLETION_ON_ERROR), then rpma_read 8 bytes from offset 0 into a
 *                    local buffer as the flushing primitive (read-after-write), wait for the
 *                    read's completion; prints "Wrote the greeting (read-after-write)"
 *   flush            as example 05's client: apply the peer configuration sent after the MR
 *                    descriptor (rpma_peer_cfg_from_descriptor, rpma_conn_apply_remote_peer_cfg),
 *                    write the greeting, rpma_flush it with RPMA_FLUSH_TYPE_PERSISTENT when the
 *                    server declares direct write to PMem, else RPMA_FLUSH_TYPE_VISIBILITY
 *                    (RPMA_F_COMPLETION_ALWAYS, wr_id 0xF01D, checked); prints
 *                    "Wrote the greeting, flush type PERSISTENT|VISIBILITY"
 *   gpspm            librpma's example 09's shape (the general-purpose server persistency method)
 *                    over the sample's raw messages: a receive is posted before connecting; write
 *                    the greeting, then send a flush request, 24 bytes little-endian
 *                    { u64 offset; u64 length; u64 op_context = 0xF01D } and wait for the 8-byte
 *                    reply carrying op_context, which the server sends once the range is durable;
 *                    prints "Wrote the greeting, made durable by the server"
 *   greeting [OFFSET]
 *                    read the 1 KiB at data_offset (plus OFFSET, default 0) back; prints
 *                    "Greeting: <string>"
 *   random SEED N    as flush, N times: a write of 1 to 8192 bytes at a random offset of the
 *                    region, each flushed and its completion waited for before the next; the
 *                    offsets, sizes and bytes come from SEED; prints "Wrote N ranges, flush type T"
 *   verify SEED N    replays SEED's N writes into a local image only, then reads each range back
 *                    (rpma_read, one at a time) and compares it with the image (later writes win
 *                    where ranges overlap); prints "Verified N ranges" or, for each that differs,
 *                    "range I at OFFSET (LEN bytes) differs" and exits 4
 *
 * The server's accept carries librpma's examples' struct common_data (28 bytes, little-endian):
 *   { uint16_t data_offset; uint8_t mr_desc_size; uint8_t pcfg_desc_size; char descriptors[24]; }
 * The client connects without private data, and ends the connection itself (disconnect, bounded
 * wait for CLOSED, delete), as the examples' clients do.
 *
 * Exit codes: 0 done; 1 a librpma call failed, bad private data, a region too small, a failed
 * completion; 2 usage; 3 timed out; 4 verify found a difference. Every failure prints one
 * "persist_client: ..." line on stderr.
 */
#define _GNU_SOURCE
#define PROG_NAME "persist_client"
#include "test_client.h"
#include <infiniband/verbs.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HELLO_STR_SIZE 1024
#define RAW_SIZE 8
#define MAX_WRITE 8192
#define DESCRIPTORS_MAX_SIZE 24
#define COMMON_DATA_HEADER 4
#define FLUSH_ID ((void *)0xF01D)
#define EXIT_DIFFERS 4

enum mode { WRITE, FLUSH, GPSPM, GREETING, RANDOM, VERIFY };

#define MSG_SIZE 32              /* the receive at offset 0, the send after it */
#define FLUSH_REQUEST_SIZE 24

/* xorshift64*: the same SEED gives the same writes in random and verify */
static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

struct range { size_t offset, len; };

static uint64_t first_state(uint64_t seed)
{
	return seed * 2654435761u + 1;
}

/* the next write of the sequence: its range, its bytes put into image (size bytes) */
static struct range next_write(uint64_t *state, uint8_t *image, size_t size)
{
	struct range r;
	r.len = 1 + next_random(state) % MAX_WRITE;
	r.offset = next_random(state) % (size - r.len + 1);
	for (size_t b = 0; b < r.len; b++)
		image[r.offset + b] = (uint8_t)next_random(state);
	return r;
}

struct session {
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	int cq_fd, ev_fd;
	uint64_t deadline;
	long timeout_s;
};

/* one completion of the session's CQ, checked for success, its opcode unless < 0 (a flush is a
 * read or a native flush, depending on the device), its wr_id unless NULL */
static int completion(struct session *s, int opcode, void *wr_id, const char *what)
{
	struct ibv_wc wc;
	int ret = wait_completion(s->conn, s->cq, s->cq_fd, s->ev_fd, s->deadline, &wc);
	if (ret == WAIT_TIMEOUT) {
		fprintf(stderr, PROG_NAME ": the %s did not complete within %ld s\n", what, s->timeout_s);
		return EXIT_TIMEOUT;
	}
	if (ret)
		return EXIT_FAIL;
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, PROG_NAME ": %s failed: %s\n", what, ibv_wc_status_str(wc.status));
		return EXIT_FAIL;
	}
	if ((opcode >= 0 && (int)wc.opcode != opcode) || (wr_id != NULL && wc.wr_id != (uintptr_t)wr_id)) {
		fprintf(stderr, PROG_NAME ": unexpected completion of the %s (opcode %d, wr_id 0x%" PRIx64 ")\n",
			what, wc.opcode, (uint64_t)wc.wr_id);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int write_flush(struct session *s, struct rpma_mr_remote *dst, size_t dst_off, struct rpma_mr_local *src,
		size_t src_off, size_t len, enum rpma_flush_type type)
{
	int ret;
	if ((ret = rpma_write(s->conn, dst, dst_off, src, src_off, len, RPMA_F_COMPLETION_ON_ERROR, NULL))) {
		fail("rpma_write", ret);
		return EXIT_FAIL;
	}
	if ((ret = rpma_flush(s->conn, dst, dst_off, len, type, RPMA_F_COMPLETION_ALWAYS, FLUSH_ID))) {
		fail("rpma_flush", ret);
		return EXIT_FAIL;
	}
	return completion(s, -1, FLUSH_ID, "flush");
}

static int read_back(struct session *s, struct rpma_mr_local *dst, size_t dst_off, struct rpma_mr_remote *src,
		size_t src_off, size_t len)
{
	int ret = rpma_read(s->conn, dst, dst_off, src, src_off, len, RPMA_F_COMPLETION_ALWAYS, NULL);
	if (ret) {
		fail("rpma_read", ret);
		return EXIT_FAIL;
	}
	return completion(s, IBV_WC_RDMA_READ, NULL, "read");
}

int main(int argc, char **argv)
{
	const char *pos[5];
	int npos = 0;
	long timeout_s = 120;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout_s = parse_long(argv[i], argv[i + 1], 1);
			i++;
		} else if (argv[i][0] != '-' && npos < 5) {
			pos[npos++] = argv[i];
		} else {
			npos = -100;
		}
	}
	enum mode mode = WRITE;
	uint64_t seed = 0;
	long n = 0;
	bool ok = npos >= 3;
	if (ok) {
		if (!strcmp(pos[2], "write") && npos == 3) mode = WRITE;
		else if (!strcmp(pos[2], "flush") && npos == 3) mode = FLUSH;
		else if (!strcmp(pos[2], "gpspm") && npos == 3) mode = GPSPM;
		else if (!strcmp(pos[2], "greeting") && (npos == 3 || npos == 4)) mode = GREETING;
		else if (!strcmp(pos[2], "random") && npos == 5) mode = RANDOM;
		else if (!strcmp(pos[2], "verify") && npos == 5) mode = VERIFY;
		else ok = false;
	}
	if (!ok) {
		fprintf(stderr, "usage: %s ADDR PORT write|flush|gpspm|greeting [OFFSET]|random SEED N|verify SEED N"
			" [--timeout SEC]\n", argv[0]);
		return EXIT_USAGE;
	}
	if (mode == RANDOM || mode == VERIFY) {
		seed = (uint64_t)parse_long("SEED", pos[3], 0);
		n = parse_long("N", pos[4], 1);
	}
	size_t greeting_at = (mode == GREETING && npos == 4) ? (size_t)parse_long("OFFSET", pos[3], 0) : 0;
	const char *addr = pos[0], *port = pos[1];
	struct session s = { NULL, NULL, -1, -1, now_ms() + (uint64_t)timeout_s * 1000u, timeout_s };

	init_output();

	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *local_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_mr_local *msg_mr = NULL;
	uint8_t *local = NULL, *image = NULL, *msg = NULL;
	struct range *ranges = NULL;
	int ret, rc = EXIT_FAIL;
	bool established = false;

	if (new_peer(addr, &peer))
		return EXIT_FAIL;
	if (mode == GPSPM) {
		/* the reply's receive is posted on the request, before the connect, as example 09's client does */
		if (posix_memalign((void **)&msg, (size_t)sysconf(_SC_PAGESIZE), 2 * MSG_SIZE)
				|| (ret = rpma_mr_reg(peer, msg, 2 * MSG_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &msg_mr))) {
			fprintf(stderr, PROG_NAME ": registering the message buffers failed\n");
			goto out_peer;
		}
	}
	if (connect_to(peer, addr, port, NULL, msg_mr, MSG_SIZE, NULL, &s.conn))
		goto out_peer;
	ret = wait_established(s.conn, &s.ev_fd, s.deadline, (uint64_t)timeout_s, false);
	if (ret == WAIT_TIMEOUT)
		rc = EXIT_TIMEOUT;
	if (ret)
		goto out_disconnect;
	established = true;

	struct rpma_conn_private_data pdata = { NULL, 0 };
	if ((ret = rpma_conn_get_private_data(s.conn, &pdata))) {
		fail("rpma_conn_get_private_data", ret);
		goto out_disconnect;
	}
	const uint8_t *p = pdata.ptr;
	if (p == NULL || pdata.len < COMMON_DATA_HEADER + DESCRIPTORS_MAX_SIZE || p[2] == 0
			|| (size_t)p[2] + p[3] > DESCRIPTORS_MAX_SIZE) {
		fprintf(stderr, PROG_NAME ": the server sent no usable common_data (%u bytes)\n", (unsigned)pdata.len);
		goto out_disconnect;
	}
	size_t data_offset = (size_t)(p[0] | p[1] << 8);
	uint8_t mr_desc_size = p[2], pcfg_desc_size = p[3];
	if ((ret = rpma_mr_remote_from_descriptor(p + COMMON_DATA_HEADER, mr_desc_size, &dst_mr))) {
		fail("rpma_mr_remote_from_descriptor", ret);
		goto out_disconnect;
	}
	enum rpma_flush_type flush_type = RPMA_FLUSH_TYPE_VISIBILITY;
	if (mode != WRITE && pcfg_desc_size > 0) {
		bool direct = false;
		if ((ret = rpma_peer_cfg_from_descriptor(p + COMMON_DATA_HEADER + mr_desc_size, pcfg_desc_size, &pcfg))
				|| (ret = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct))
				|| (ret = rpma_conn_apply_remote_peer_cfg(s.conn, pcfg))) {
			fail("applying the server's peer configuration", ret);
			goto out_remote;
		}
		if (direct)
			flush_type = RPMA_FLUSH_TYPE_PERSISTENT;
	}
	size_t remote_size = 0;
	if ((ret = rpma_mr_remote_get_size(dst_mr, &remote_size))) {
		fail("rpma_mr_remote_get_size", ret);
		goto out_remote;
	}
	if (remote_size < data_offset + HELLO_STR_SIZE + MAX_WRITE) {
		fprintf(stderr, PROG_NAME ": the remote region is too small (%zu bytes from offset %zu)\n",
			remote_size - data_offset, data_offset);
		goto out_remote;
	}
	size_t size = remote_size - data_offset;
	/* one local buffer for what is written and read back, page-aligned as malloc_aligned() */
	if (posix_memalign((void **)&local, (size_t)sysconf(_SC_PAGESIZE), size)) {
		fprintf(stderr, PROG_NAME ": out of memory\n");
		goto out_remote;
	}
	memset(local, 0, size);
	if ((ret = rpma_mr_reg(peer, local, size, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &local_mr))) {
		fail("rpma_mr_reg", ret);
		goto out_remote;
	}
	if (get_cq_fd(s.conn, &s.cq, &s.cq_fd))
		goto out_dereg;
	const char *type_name = flush_type == RPMA_FLUSH_TYPE_PERSISTENT ? "PERSISTENT" : "VISIBILITY";

	switch (mode) {
	case WRITE:
		strcpy((char *)local, "Hello world!");
		if ((ret = rpma_write(s.conn, dst_mr, data_offset, local_mr, 0, HELLO_STR_SIZE,
				RPMA_F_COMPLETION_ON_ERROR, NULL))) {
			fail("rpma_write", ret);
			break;
		}
		/* read-after-write, as example 04: the read completes after the write reached the server */
		rc = read_back(&s, local_mr, HELLO_STR_SIZE, dst_mr, 0, RAW_SIZE);
		if (rc == EXIT_OK)
			printf("Wrote the greeting (read-after-write)\n");
		break;
	case FLUSH:
		strcpy((char *)local, "Hello world!");
		rc = write_flush(&s, dst_mr, data_offset, local_mr, 0, HELLO_STR_SIZE, flush_type);
		if (rc == EXIT_OK)
			printf("Wrote the greeting, flush type %s\n", type_name);
		break;
	case GPSPM: {
		strcpy((char *)local, "Hello world!");
		uint64_t request[3] = { 0, HELLO_STR_SIZE, (uintptr_t)FLUSH_ID };   /* x86-64: little-endian */
		memcpy(msg + MSG_SIZE, request, FLUSH_REQUEST_SIZE);
		if ((ret = rpma_write(s.conn, dst_mr, data_offset, local_mr, 0, HELLO_STR_SIZE,
				RPMA_F_COMPLETION_ON_ERROR, NULL))
				|| (ret = rpma_send(s.conn, msg_mr, MSG_SIZE, FLUSH_REQUEST_SIZE, RPMA_F_COMPLETION_ON_ERROR,
				NULL))) {
			fail("rpma_write/rpma_send", ret);
			break;
		}
		rc = completion(&s, IBV_WC_RECV, NULL, "flush reply");
		uint64_t reply;
		memcpy(&reply, msg, sizeof(reply));
		if (rc == EXIT_OK && reply != (uintptr_t)FLUSH_ID) {
			fprintf(stderr, PROG_NAME ": the reply carries op_context 0x%" PRIx64 ", not 0xF01D\n", reply);
			rc = EXIT_FAIL;
		}
		if (rc == EXIT_OK)
			printf("Wrote the greeting, made durable by the server\n");
		break;
	}
	case GREETING:
		if (greeting_at > size - HELLO_STR_SIZE) {
			fprintf(stderr, PROG_NAME ": offset %zu is outside the %zu-byte region\n", greeting_at, size);
			break;
		}
		rc = read_back(&s, local_mr, 0, dst_mr, data_offset + greeting_at, HELLO_STR_SIZE);
		if (rc == EXIT_OK)
			printf("Greeting: %.*s\n", (int)strnlen((char *)local, HELLO_STR_SIZE), (char *)local);
		break;
	case RANDOM:
	case VERIFY:
		image = calloc(size, 1);
		ranges = calloc((size_t)n, sizeof(*ranges));
		if (image == NULL || ranges == NULL) {
			fprintf(stderr, PROG_NAME ": out of memory\n");
			break;
		}
		if (mode == RANDOM) {
			/* the writes one by one, each from the local image as it stands then */
			uint64_t state = first_state(seed);
			rc = EXIT_OK;
			for (long i = 0; i < n && rc == EXIT_OK; i++) {
				struct range r = next_write(&state, local, size);
				rc = write_flush(&s, dst_mr, data_offset + r.offset, local_mr, r.offset, r.len, flush_type);
			}
			if (rc == EXIT_OK)
				printf("Wrote %ld ranges, flush type %s\n", n, type_name);
			break;
		}
		uint64_t state = first_state(seed);
		for (long i = 0; i < n; i++)
			ranges[i] = next_write(&state, image, size);
		rc = EXIT_OK;
		long differ = 0;
		for (long i = 0; i < n && rc == EXIT_OK; i++) {
			rc = read_back(&s, local_mr, ranges[i].offset, dst_mr, data_offset + ranges[i].offset, ranges[i].len);
			if (rc == EXIT_OK && memcmp(local + ranges[i].offset, image + ranges[i].offset, ranges[i].len)) {
				printf("range %ld at %zu (%zu bytes) differs\n", i, ranges[i].offset, ranges[i].len);
				differ++;
			}
		}
		if (rc == EXIT_OK && differ)
			rc = EXIT_DIFFERS;
		else if (rc == EXIT_OK)
			printf("Verified %ld ranges\n", n);
		break;
	}
	fflush(stdout);

out_dereg:
	rc = cleanup_rc(rc, "rpma_mr_dereg", rpma_mr_dereg(&local_mr));
out_remote:
	if (pcfg)
		rc = cleanup_rc(rc, "rpma_peer_cfg_delete", rpma_peer_cfg_delete(&pcfg));
	rc = cleanup_rc(rc, "rpma_mr_remote_delete", rpma_mr_remote_delete(&dst_mr));
out_disconnect:
	rc = end_connection(&s.conn, established, false, s.ev_fd, s.deadline, rc);
out_peer:
	if (msg_mr)
		rc = cleanup_rc(rc, "rpma_mr_dereg", rpma_mr_dereg(&msg_mr));
	free(msg);
	free(local);
	free(image);
	free(ranges);
	return cleanup_rc(rc, "rpma_peer_delete", rpma_peer_delete(&peer));
}

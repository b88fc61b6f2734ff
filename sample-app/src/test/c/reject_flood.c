/*
 * reject_flood.c - a test tool that asks a server to connect COUNT times, one request after the
 * other, with private data the server rejects, and checks that every one is REJECTED.
 *
 *   reject_flood ADDR PORT COUNT [--greeting TEXT | --private-data-file PATH] [--timeout SEC]
 *
 * Each request carries TEXT with its '\0' (default "Hello stranger!", which the sample app's hello
 * handler rejects), or, with --private-data-file, the bytes of one line of PATH: each line is the
 * private data of one request in hex (at most 56 bytes), used in turn, from the first again after
 * the last (admission tokens, or bytes a log must not show as they are). A request's connection is deleted as soon as its REJECTED has come, so the
 * client keeps no CM id of its own between requests. At the end it prints
 *   REJECTED <count> in <ms> ms
 * --timeout SEC (default 600) bounds the whole run.
 *
 * Exit codes: 0 every request was rejected; 1 a librpma call failed or a request was not
 * rejected (ESTABLISHED or another event; printed); 2 usage; 3 timed out.
 */
#define _GNU_SOURCE
#define PROG_NAME "reject_flood"
#include "test_client.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *pos[3];
	int npos = 0;
	long timeout_s = 600;
	const char *greeting = "Hello stranger!";
	const char *file = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout_s = parse_long(argv[i], argv[i + 1], 1);
			i++;
		} else if (!strcmp(argv[i], "--greeting") && i + 1 < argc) {
			greeting = argv[++i];
		} else if (!strcmp(argv[i], "--private-data-file") && i + 1 < argc) {
			file = argv[++i];
		} else if (argv[i][0] != '-' && npos < 3) {
			pos[npos++] = argv[i];
		} else {
			npos = -100;
		}
	}
	if (npos != 3 || strlen(greeting) + 1 > 56) {
		fprintf(stderr, "usage: %s ADDR PORT COUNT [--greeting TEXT (at most 55 bytes) | --private-data-file PATH]"
			" [--timeout SEC]\n", argv[0]);
		return EXIT_USAGE;
	}
	const char *addr = pos[0], *port = pos[1];
	long count = parse_long("COUNT", pos[2], 1);
	uint64_t start = now_ms(), deadline = start + (uint64_t)timeout_s * 1000u;

	init_output();
	struct rpma_peer *peer = NULL;
	if (new_peer(addr, &peer))
		return EXIT_FAIL;

	struct rpma_conn_private_data pdata = { (void *)greeting, (uint8_t)(strlen(greeting) + 1) };
	int rc = EXIT_OK;
	long rejected = 0;
	FILE *lines = NULL;
	unsigned char data[56];
	if (file && !(lines = fopen(file, "r"))) {
		perror("reject_flood: --private-data-file");
		rc = EXIT_USAGE;
	}
	while (rc == EXIT_OK && rejected < count) {
		if (lines) {
			char line[2 * sizeof(data) + 2];
			if (!fgets(line, sizeof(line), lines)) {
				rewind(lines);
				if (!fgets(line, sizeof(line), lines)) {
					fprintf(stderr, "reject_flood: %s has no line\n", file);
					rc = EXIT_USAGE;
					break;
				}
			}
			line[strcspn(line, "\r\n")] = '\0';
			pdata.ptr = data;
			pdata.len = (uint8_t)parse_hex("--private-data-file", line, data, sizeof(data));
		}
		struct rpma_conn *conn = NULL;
		int ev_fd = -1;
		if (connect_to(peer, addr, port, &pdata, NULL, 0, NULL, &conn)) {
			rc = EXIT_FAIL;
			break;
		}
		int ret = wait_established(conn, &ev_fd, deadline, (uint64_t)timeout_s, true);
		if (ret == WAIT_REJECTED) {
			rejected++;
		} else {
			if (ret == WAIT_OK)
				fprintf(stderr, "reject_flood: request %ld was accepted\n", rejected + 1);
			rc = (ret == WAIT_TIMEOUT) ? EXIT_TIMEOUT : EXIT_FAIL;
		}
		rc = end_connection(&conn, ret == WAIT_OK, false, ev_fd, deadline, rc);
		if (rc != EXIT_OK)
			break;
	}
	if (lines)
		fclose(lines);
	printf("REJECTED %ld in %llu ms\n", rejected, (unsigned long long)(now_ms() - start));
	int ret = rpma_peer_delete(&peer);
	return cleanup_rc(rc, "rpma_peer_delete", ret);
}

/*
 * load_client.c - load generator for the rdma-vs-c comparison (the same client
 * drives the C baseline server and the Java sample app).
 *
 *   load_client hello    ADDR PORT [--cycles N] [--concurrency C] [--timeout SEC] [--latency-file F]
 *   load_client pingpong ADDR PORT [--rounds R] [--concurrency C] [--warmup W] [--inflight K]
 *                                  [--timeout SEC] [--latency-file F]
 *   load_client write    ADDR PORT --size S [--rounds R] [--concurrency C] [--warmup W] [--inflight K]
 *                                  [--timeout SEC] [--latency-file F]
 *
 * hello:    C threads, each doing N sequential cycles of connect (private data
 *           "Hello server!\0") -> ESTABLISHED -> check the server's private data
 *           "Hello client!\0" -> disconnect -> CLOSED -> delete. (A server that
 *           disconnects first, as librpma's example 01 server does, is fine: the
 *           client's disconnect then answers the server's.)
 * pingpong: C threads, each with one connection doing W unmeasured + R measured
 *           round trips (send one little-endian u64 v, receive v+1), then sending
 *           UINT64_MAX ("done"); each round trip is timed with CLOCK_MONOTONIC.
 *           --inflight K (default 1): each connection posts K receives on its request
 *           (K 8-byte slots of one registered region; K send slots of another) and keeps
 *           K messages in flight: K independent chains of values, each sending its next
 *           value when the reply to its previous one and that send's completion are both
 *           in; W + R counts messages per connection, each message's round trip (post of
 *           the send -> its reply) is measured. Needs a server that posts >= K receives
 *           per connection (baseline_server pingpong --window K). Queues are sized for K
 *           (SQ, RQ >= K; CQ >= 2K). K = 1 is the plain one-at-a-time loop (its round
 *           trip ends when both completions are in).
 *
 * write:    librpma's example 05 (flush to persistent) as a load: C threads, each with one
 *           connection (no private data) to a server whose accept carries the examples'
 *           struct common_data with its region's descriptor and, when pcfg_desc_size > 0, its
 *           peer configuration's (applied to the connection; the flush type is PERSISTENT when
 *           it declares direct write to PMem, else VISIBILITY). Each connection keeps K
 *           operations in flight (--inflight, default 1), each an rpma_write of S bytes
 *           (completion on error only) followed at once by an rpma_flush of the same range
 *           (completion always): the responder executes them in order, so the flush's
 *           completion says the write landed. Chain j of thread i writes at offset
 *           ((i K + j) S) modulo the region's room for S bytes, from its own S bytes of one
 *           registered source region. W + R operations per connection, the first W unmeasured;
 *           each is timed from the write's post to the flush's completion.
 *
 * --latency-file F appends every measured latency (ns, one per line) to F, so that
 * percentiles can be taken over several runs pooled (compare-in-vm.sh does).
 *
 * A REJECTED/UNREACHABLE connect is retried (up to MAX_RETRIES, with back-off).
 * Prints one machine-readable line at the end:
 *   RESULT hello addr=.. concurrency=.. cycles=.. seconds=.. rate=.. p50_ms=.. p99_ms=.. retries=.. errors=..
 *   RESULT pingpong addr=.. concurrency=.. rounds=.. seconds=.. rate=.. p50_us=.. p99_us=.. mean_us=.. min_us=.. max_us=.. retries=.. errors=.. inflight=.. sleeps_per_msg=..
 *   RESULT write addr=.. concurrency=.. size=.. rounds=.. seconds=.. rate=.. mib_s=.. p50_us=.. p99_us=.. retries=.. errors=.. inflight=.. flush=..
 * (pingpong: rounds = measured messages over all connections, rate = messages per second;
 *  write: rounds = measured write+flush operations, rate = operations per second, mib_s = rate x S / 2^20)
 * Exit code 0 only when every cycle/round succeeded and verified.
 *
 * Written against the public API in <librpma.h> (librpma 1.2/1.3). librpma's
 * THREAD_SAFETY.md lists rpma_conn_req_new and rpma_mr_reg/dereg as not thread-safe:
 * those calls are serialized with a mutex; everything per connection runs unlocked.
 */
#define _GNU_SOURCE
#include <librpma.h>
#include <infiniband/verbs.h>
#include "rdma_proc.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RETRIES 10
#define WC_BATCH 4
#define MSG_SIZE sizeof(uint64_t)
#define WR_RECV (1ull << 63)     /* wr_id of a receive: WR_RECV | slot; of a send: slot */
#define MAX_INFLIGHT 1024

static const char HELLO_SERVER[] = "Hello server!";   /* sent with its '\0': 14 bytes */
static const char HELLO_CLIENT[] = "Hello client!";   /* expected from the server */

static struct rpma_peer *peer;
static const char *addr, *port;
static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start_barrier;
static long cycles = 50, rounds = 2000, warmup = 0, inflight = 1, size = 0;
static const char *flush_name = "none";   /* write: the flush type the server's peer configuration chose */
static struct rpma_conn_cfg *conn_cfg;   /* --inflight > 1: queues sized for it; NULL: defaults */

struct worker {
	pthread_t tid;
	int idx;
	uint64_t *lat_ns;          /* one per cycle (hello) or measured round (pingpong) */
	long done;                 /* completed cycles / measured rounds */
	long retries, errors;
	uint64_t t_first, t_last;  /* measured phase, ns */
	long sleeps;               /* poll() calls: looks at the completion queue that found nothing */
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#define FAIL(w, what, ret) do { \
	fprintf(stderr, "load_client[%d]: %s failed: %d (%s)\n", (w)->idx, (what), (ret), rpma_err_2str(ret)); \
	(w)->errors++; } while (0)

/* next connection event, blocking */
static int next_event(struct worker *w, struct rpma_conn *conn, enum rpma_conn_event *ev)
{
	int ret;
	do {
		ret = rpma_conn_next_event(conn, ev);
	} while (ret == RPMA_E_UNKNOWN);   /* an unmapped CM event: skip it */
	if (ret)
		FAIL(w, "rpma_conn_next_event", ret);
	return ret;
}

/*
 * Connect with retries. recv_mr != NULL: post nrecv receives of one u64 on the request
 * first (slot i at offset 8 i, wr_id WR_RECV | i). Returns the established connection or
 * NULL (error counted).
 */
static struct rpma_conn *connect_retrying(struct worker *w, const struct rpma_conn_private_data *pd,
		struct rpma_mr_local *recv_mr, long nrecv)
{
	for (int attempt = 0; attempt <= MAX_RETRIES; attempt++) {
		struct rpma_conn_req *req = NULL;
		struct rpma_conn *conn = NULL;
		pthread_mutex_lock(&lib_lock);
		int ret = rpma_conn_req_new(peer, addr, port, conn_cfg, &req);
		pthread_mutex_unlock(&lib_lock);
		if (ret) {
			FAIL(w, "rpma_conn_req_new", ret);
			return NULL;
		}
		for (long i = 0; recv_mr && i < nrecv && !ret; i++)
			ret = rpma_conn_req_recv(req, recv_mr, (size_t)i * MSG_SIZE, MSG_SIZE,
				(void *)(uintptr_t)(WR_RECV | (uint64_t)i));
		if (ret) {
			FAIL(w, "rpma_conn_req_recv", ret);
			(void) rpma_conn_req_delete(&req);
			return NULL;
		}
		if ((ret = rpma_conn_req_connect(&req, pd, &conn))) {   /* consumes req */
			FAIL(w, "rpma_conn_req_connect", ret);
			return NULL;
		}
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		if (next_event(w, conn, &ev)) {
			(void) rpma_conn_delete(&conn);
			return NULL;
		}
		if (ev == RPMA_CONN_ESTABLISHED)
			return conn;
		(void) rpma_conn_delete(&conn);
		if (ev != RPMA_CONN_REJECTED && ev != RPMA_CONN_UNREACHABLE) {
			fprintf(stderr, "load_client[%d]: connect: unexpected event %s\n", w->idx,
				rpma_utils_conn_event_2str(ev));
			w->errors++;
			return NULL;
		}
		w->retries++;
		struct timespec d = { 0, (long)(1000000L << (attempt < 8 ? attempt : 8)) };   /* 1 ms .. 256 ms */
		nanosleep(&d, NULL);
	}
	fprintf(stderr, "load_client[%d]: connect: still rejected after %d retries\n", w->idx, MAX_RETRIES);
	w->errors++;
	return NULL;
}

/* disconnect (also answers a disconnect of the server), wait for CLOSED unless it was
 * seen already, delete */
static int close_conn(struct worker *w, struct rpma_conn **conn, bool closed_seen)
{
	int ret = rpma_conn_disconnect(*conn);
	if (ret)
		FAIL(w, "rpma_conn_disconnect", ret);
	enum rpma_conn_event ev = closed_seen ? RPMA_CONN_CLOSED : RPMA_CONN_UNDEFINED;
	while (!ret && ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST)
		ret = next_event(w, *conn, &ev);
	int ret2 = rpma_conn_delete(conn);
	if (ret2)
		FAIL(w, "rpma_conn_delete", ret2);
	return ret ? ret : ret2;
}

static void *hello_worker(void *arg)
{
	struct worker *w = arg;
	struct rpma_conn_private_data pd = { (void *)HELLO_SERVER, sizeof(HELLO_SERVER) };
	pthread_barrier_wait(&start_barrier);
	w->t_first = now_ns();
	for (long i = 0; i < cycles; i++) {
		uint64_t t0 = now_ns();
		struct rpma_conn *conn = connect_retrying(w, &pd, NULL, 0);
		if (!conn)
			break;
		struct rpma_conn_private_data in = { NULL, 0 };
		int ret = rpma_conn_get_private_data(conn, &in);
		bool ok = !ret && in.ptr && in.len >= sizeof(HELLO_CLIENT) &&
			memcmp(in.ptr, HELLO_CLIENT, sizeof(HELLO_CLIENT)) == 0;
		if (!ok) {
			fprintf(stderr, "load_client[%d]: cycle %ld: unexpected server private data (len %u)\n",
				w->idx, i, (unsigned)in.len);
			w->errors++;
		}
		if (close_conn(w, &conn, false) || !ok)
			break;
		w->lat_ns[w->done++] = now_ns() - t0;
	}
	w->t_last = now_ns();
	return NULL;
}

#define CONN_CLOSED 1

/* the completion channel (pfd[0]) and the CM event fd (pfd[1]) of a pingpong connection */
static void watch_fds(struct rpma_conn *conn, struct rpma_cq *cq, struct pollfd pfd[2])
{
	pfd[0] = (struct pollfd){ -1, POLLIN, 0 };
	pfd[1] = (struct pollfd){ -1, POLLIN, 0 };
	(void) rpma_cq_get_fd(cq, &pfd[0].fd);
	(void) rpma_conn_get_event_fd(conn, &pfd[1].fd);
}

/*
 * No completion queued: wait for the completion channel or a CM event (a server that
 * disconnects does not make a posted receive complete). Returns 0 (look for completions
 * again), CONN_CLOSED (CLOSED/LOST seen) or an error (< 0, counted).
 */
static int await_cq_or_event(struct worker *w, struct rpma_conn *conn, struct rpma_cq *cq, struct pollfd pfd[2])
{
	int ret;
	w->sleeps++;
	if (poll(pfd, 2, -1) < 0) {
		if (errno == EINTR)
			return 0;
		perror("poll");
		w->errors++;
		return -1;
	}
	if (pfd[1].revents) {
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		if ((ret = next_event(w, conn, &ev)))
			return ret;
		if (ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST)
			return CONN_CLOSED;
	}
	if (pfd[0].revents) {
		ret = rpma_cq_wait(cq);   /* consumes the channel event and re-arms the CQ */
		if (ret && ret != RPMA_E_NO_COMPLETION) {
			FAIL(w, "rpma_cq_wait", ret);
			return ret;
		}
	}
	return 0;
}

/*
 * The next batch of completions of a connection kept busy (pingpong --inflight, write): up to max
 * in wc, their number in *got (0: none yet, look again). With none queued, waits for the
 * completion channel or a CM event. Returns 0, or non-zero when the run must end (the error
 * counted; *closed set when the server closed the connection, `what` number `done` naming where).
 */
static int next_completions(struct worker *w, struct rpma_conn *conn, struct rpma_cq *cq, struct pollfd pfd[2],
		struct ibv_wc *wc, int max, int *got, const char *what, long done, bool *closed)
{
	*got = 0;
	int ret = rpma_cq_get_wc(cq, max, wc, got);
	if (ret == RPMA_E_NO_COMPLETION) {
		*got = 0;
		ret = await_cq_or_event(w, conn, cq, pfd);
		if (ret == CONN_CLOSED) {
			*closed = true;
			fprintf(stderr, "load_client[%d]: %s %ld: the server closed the connection\n", w->idx, what, done);
			w->errors++;
		}
		return ret;
	}
	if (ret)
		FAIL(w, "rpma_cq_get_wc", ret);
	return ret;
}

/*
 * Wait until the given numbers of SEND and RECV completions arrived. Watches the
 * connection's event channel too: a server that disconnects does not make a posted
 * receive complete. Returns 0, CONN_CLOSED (CLOSED/LOST seen) or an error (< 0).
 */
static int wait_completions(struct worker *w, struct rpma_conn *conn, struct rpma_cq *cq,
		int sends, int recvs)
{
	struct ibv_wc wc[WC_BATCH];
	struct pollfd pfd[2];
	watch_fds(conn, cq, pfd);
	while (sends > 0 || recvs > 0) {
		int got = 0;
		int ret = rpma_cq_get_wc(cq, WC_BATCH, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			if ((ret = await_cq_or_event(w, conn, cq, pfd)))
				return ret;
			continue;
		}
		if (ret) {
			FAIL(w, "rpma_cq_get_wc", ret);
			return ret;
		}
		for (int i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "load_client[%d]: completion %s\n", w->idx,
					ibv_wc_status_str(wc[i].status));
				w->errors++;
				return -1;
			}
			if (wc[i].opcode == IBV_WC_SEND)
				sends--;
			else if (wc[i].opcode == IBV_WC_RECV)
				recvs--;
		}
	}
	return 0;
}

/*
 * The end of a pingpong session: "I am done" (UINT64_MAX) from send slot 0; the server
 * disconnects when it sees it. Returns true when that CLOSED (or LOST) came while waiting
 * for the send's completion.
 */
static bool send_done(struct worker *w, struct rpma_conn *conn, struct rpma_cq *cq,
		struct rpma_mr_local *send_mr, uint64_t *send_buf)
{
	send_buf[0] = htole64(UINT64_MAX);
	int ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL);
	if (ret) {
		FAIL(w, "rpma_send(done)", ret);
		return false;
	}
	/* CLOSED is expected here: the server disconnects after "done" */
	return wait_completions(w, conn, cq, 1, 0) == CONN_CLOSED;
}

/* a pingpong worker's connection and its K receive and K send slots (8 bytes each) */
struct session {
	uint64_t *recv_buf, *send_buf;
	struct rpma_mr_local *recv_mr, *send_mr;   /* one region per pool, cut into the K slots */
	struct rpma_conn *conn;
	struct rpma_cq *cq;
};

/*
 * Allocates and registers K receive and K send slots and connects with the K receives
 * posted on the request. false: a step failed (counted); close_session releases what
 * there is.
 */
static bool open_session(struct worker *w, long k, struct session *s)
{
	const size_t bytes = (size_t)k * MSG_SIZE;
	if (posix_memalign((void **)&s->recv_buf, 64, bytes) || posix_memalign((void **)&s->send_buf, 64, bytes)) {
		w->errors++;
		return false;
	}
	memset(s->recv_buf, 0, bytes);
	memset(s->send_buf, 0, bytes);
	pthread_mutex_lock(&lib_lock);
	int ret = rpma_mr_reg(peer, s->recv_buf, bytes, RPMA_MR_USAGE_RECV, &s->recv_mr);
	if (!ret)
		ret = rpma_mr_reg(peer, s->send_buf, bytes, RPMA_MR_USAGE_SEND, &s->send_mr);
	pthread_mutex_unlock(&lib_lock);
	if (ret) {
		FAIL(w, "rpma_mr_reg", ret);
		return false;
	}
	s->conn = connect_retrying(w, NULL, s->recv_mr, k);
	if (!s->conn)
		return false;
	if ((ret = rpma_conn_get_cq(s->conn, &s->cq))) {
		FAIL(w, "rpma_conn_get_cq", ret);
		return false;
	}
	return true;
}

/* ends the connection, if there is one (closed: its CLOSED was seen), deregisters the
 * regions that were registered and frees the slots */
static void close_session(struct worker *w, struct session *s, bool closed)
{
	int ret;
	if (s->conn)
		(void) close_conn(w, &s->conn, closed);
	pthread_mutex_lock(&lib_lock);
	if (s->recv_mr && (ret = rpma_mr_dereg(&s->recv_mr)))
		FAIL(w, "rpma_mr_dereg", ret);
	if (s->send_mr && (ret = rpma_mr_dereg(&s->send_mr)))
		FAIL(w, "rpma_mr_dereg", ret);
	pthread_mutex_unlock(&lib_lock);
	free(s->recv_buf);
	free(s->send_buf);
}

static void *pingpong_worker(void *arg)
{
	struct worker *w = arg;
	struct session s = { 0 };
	bool closed = false;
	int ret;

	/* every worker passes the barrier exactly once, before anything can fail */
	pthread_barrier_wait(&start_barrier);
	if (!open_session(w, 1, &s))   /* the first receive posted on the request */
		goto out;

	uint64_t v = ((uint64_t)w->idx + 1) << 32;   /* distinct per connection */
	for (long r = 0; r < warmup + rounds; r++) {
		*s.send_buf = htole64(v);
		uint64_t t0 = now_ns();
		if (r == warmup)
			w->t_first = t0;
		if ((ret = rpma_send(s.conn, s.send_mr, 0, sizeof(uint64_t), RPMA_F_COMPLETION_ALWAYS, NULL))) {
			FAIL(w, "rpma_send", ret);
			goto out;
		}
		if ((ret = wait_completions(w, s.conn, s.cq, 1, 1))) {
			if (ret == CONN_CLOSED) {
				closed = true;
				fprintf(stderr, "load_client[%d]: round %ld: the server closed the connection\n",
					w->idx, r);
				w->errors++;
			}
			goto out;
		}
		uint64_t t1 = now_ns();
		uint64_t got = le64toh(*s.recv_buf);
		if (got != v + 1) {
			fprintf(stderr, "load_client[%d]: round %ld: sent %" PRIu64 ", got %" PRIu64 "\n",
				w->idx, r, v, got);
			w->errors++;
			goto out;
		}
		if (r >= warmup) {
			w->lat_ns[w->done++] = t1 - t0;
			w->t_last = t1;
		}
		v = got;
		if (r + 1 < warmup + rounds &&
				(ret = rpma_recv(s.conn, s.recv_mr, 0, sizeof(uint64_t), NULL))) {
			FAIL(w, "rpma_recv", ret);
			goto out;
		}
	}
	if (send_done(w, s.conn, s.cq, s.send_mr, s.send_buf))
		closed = true;

out:
	close_session(w, &s, closed);
	return NULL;
}

/* --inflight K > 1: one of the K chains of values a connection keeps in flight */
struct chain {
	uint64_t value;       /* the value in flight; its reply is value + 1 */
	uint64_t t_sent;      /* when its send was posted */
	long msg;             /* the message's number on this connection (< warmup: unmeasured) */
	bool send_done, reply_got, idle;
};

/* post chain j's next message from send slot j, if the connection has messages left */
static int chain_send(struct worker *w, struct rpma_conn *conn, struct rpma_mr_local *send_mr,
		uint64_t *send_buf, struct chain *ch, long j, long *sent)
{
	if (*sent >= warmup + rounds) {
		ch[j].idle = true;
		return 0;
	}
	ch[j].msg = (*sent)++;
	ch[j].send_done = ch[j].reply_got = false;
	send_buf[j] = htole64(ch[j].value);
	ch[j].t_sent = now_ns();
	if (ch[j].msg == warmup)
		w->t_first = ch[j].t_sent;
	int ret = rpma_send(conn, send_mr, (size_t)j * MSG_SIZE, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
		(void *)(uintptr_t)j);
	if (ret)
		FAIL(w, "rpma_send", ret);
	return ret;
}

static void *pingpong_inflight_worker(void *arg)
{
	struct worker *w = arg;
	struct session s = { 0 };
	struct chain *ch = NULL;
	bool closed = false;
	int ret;
	const long k = inflight, total = warmup + rounds;

	pthread_barrier_wait(&start_barrier);
	if (!(ch = calloc((size_t)k, sizeof(*ch)))) {
		w->errors++;
		goto out;
	}
	if (!open_session(w, k, &s))   /* K receives posted on the request */
		goto out;
	struct pollfd pfd[2];
	watch_fds(s.conn, s.cq, pfd);

	/* distinct values per connection and chain: a reply names the chain it answers */
	long sent = 0, received = 0;
	for (long j = 0; j < k; j++) {
		ch[j].value = (((uint64_t)w->idx + 1) << 32) + ((uint64_t)j << 20);
		if (chain_send(w, s.conn, s.send_mr, s.send_buf, ch, j, &sent))
			goto out;
	}
	struct ibv_wc wc[64];
	bool sends_pending = true;
	while (received < total || sends_pending) {
		int got;
		if (next_completions(w, s.conn, s.cq, pfd, wc, 64, &got, "message", received, &closed))
			goto out;
		for (int i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "load_client[%d]: %s completion %s\n", w->idx,
					(wc[i].wr_id & WR_RECV) ? "receive" : "send", ibv_wc_status_str(wc[i].status));
				w->errors++;
				goto out;
			}
			long j;
			if (wc[i].opcode == IBV_WC_SEND) {
				j = (long)wc[i].wr_id;
				ch[j].send_done = true;
			} else if (wc[i].opcode == IBV_WC_RECV) {
				long slot = (long)(wc[i].wr_id & ~WR_RECV);
				uint64_t t1 = now_ns();
				uint64_t v = le64toh(s.recv_buf[slot]);
				if (wc[i].byte_len != MSG_SIZE) {
					fprintf(stderr, "load_client[%d]: received %u bytes\n", w->idx, wc[i].byte_len);
					w->errors++;
					goto out;
				}
				/* the slot is read: it takes the next reply */
				if (received + k < total && (ret = rpma_recv(s.conn, s.recv_mr, (size_t)slot * MSG_SIZE, MSG_SIZE,
						(void *)(uintptr_t)(WR_RECV | (uint64_t)slot)))) {
					FAIL(w, "rpma_recv", ret);
					goto out;
				}
				for (j = 0; j < k; j++)
					if (!ch[j].idle && !ch[j].reply_got && ch[j].value + 1 == v)
						break;
				if (j == k) {
					fprintf(stderr, "load_client[%d]: got %" PRIu64 ", answering no message in flight\n",
						w->idx, v);
					w->errors++;
					goto out;
				}
				if (ch[j].msg >= warmup) {
					w->lat_ns[w->done++] = t1 - ch[j].t_sent;
					w->t_last = t1;
				}
				ch[j].value = v;
				ch[j].reply_got = true;
				received++;
			} else {
				continue;
			}
			if (ch[j].send_done && ch[j].reply_got && chain_send(w, s.conn, s.send_mr, s.send_buf, ch, j, &sent))
				goto out;
		}
		sends_pending = false;
		for (long j = 0; j < k; j++)
			sends_pending |= !ch[j].idle;
	}
	if (send_done(w, s.conn, s.cq, s.send_mr, s.send_buf))
		closed = true;

out:
	close_session(w, &s, closed);
	free(ch);
	return NULL;
}

#define COMMON_DATA_HEADER 4   /* struct common_data: u16 data_offset, u8 mr_desc_size, u8 pcfg_desc_size */
#define COMMON_DATA_DESCRIPTORS 24

/* one write+flush chain of a write worker */
struct write_chain {
	size_t offset;       /* in the server's region, from its start */
	uint64_t t_posted;   /* when its write was posted */
	long op;             /* the operation's number on this connection (< warmup: unmeasured) */
	bool idle;
};

/* post chain j's next write and flush, if the connection has operations left */
static int write_post(struct worker *w, struct rpma_conn *conn, struct rpma_mr_remote *dst,
		struct rpma_mr_local *src, enum rpma_flush_type flush, struct write_chain *ch, long j, long *posted)
{
	if (*posted >= warmup + rounds) {
		ch[j].idle = true;
		return 0;
	}
	ch[j].op = (*posted)++;
	ch[j].t_posted = now_ns();
	if (ch[j].op == warmup)
		w->t_first = ch[j].t_posted;
	int ret = rpma_write(conn, dst, ch[j].offset, src, (size_t)j * (size_t)size, (size_t)size,
		RPMA_F_COMPLETION_ON_ERROR, NULL);
	if (ret) {
		FAIL(w, "rpma_write", ret);
		return ret;
	}
	ret = rpma_flush(conn, dst, ch[j].offset, (size_t)size, flush, RPMA_F_COMPLETION_ALWAYS,
		(void *)(uintptr_t)j);
	if (ret)
		FAIL(w, "rpma_flush", ret);
	return ret;
}

static void *write_worker(void *arg)
{
	struct worker *w = arg;
	const long k = inflight, total = warmup + rounds;
	struct write_chain *ch = calloc((size_t)k, sizeof(*ch));
	char *src_buf = NULL;
	struct rpma_mr_local *src = NULL;
	struct rpma_mr_remote *dst = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	bool closed = false;
	int ret;

	pthread_barrier_wait(&start_barrier);
	if (!ch || posix_memalign((void **)&src_buf, 4096, (size_t)k * (size_t)size)) {
		w->errors++;
		goto out;
	}
	for (size_t i = 0; i < (size_t)k * (size_t)size; i++)
		src_buf[i] = (char)(w->idx + i);
	pthread_mutex_lock(&lib_lock);
	ret = rpma_mr_reg(peer, src_buf, (size_t)k * (size_t)size, RPMA_MR_USAGE_WRITE_SRC, &src);
	pthread_mutex_unlock(&lib_lock);
	if (ret) {
		FAIL(w, "rpma_mr_reg", ret);
		goto out;
	}
	if (!(conn = connect_retrying(w, NULL, NULL, 0)))
		goto out;
	struct rpma_conn_private_data pd = { NULL, 0 };
	if ((ret = rpma_conn_get_private_data(conn, &pd)) || !pd.ptr || pd.len < COMMON_DATA_HEADER) {
		fprintf(stderr, "load_client[%d]: the server's accept carries no common_data\n", w->idx);
		w->errors++;
		goto out;
	}
	const uint8_t *p = pd.ptr;
	uint8_t mr_desc_size = p[2], pcfg_desc_size = p[3];
	if ((size_t)mr_desc_size + pcfg_desc_size > COMMON_DATA_DESCRIPTORS
			|| pd.len < COMMON_DATA_HEADER + (size_t)mr_desc_size + pcfg_desc_size) {
		fprintf(stderr, "load_client[%d]: bad common_data (mr_desc_size %u, pcfg_desc_size %u)\n",
			w->idx, mr_desc_size, pcfg_desc_size);
		w->errors++;
		goto out;
	}
	size_t data_offset = (size_t)(p[0] | (p[1] << 8));
	if ((ret = rpma_mr_remote_from_descriptor(p + COMMON_DATA_HEADER, mr_desc_size, &dst))) {
		FAIL(w, "rpma_mr_remote_from_descriptor", ret);
		goto out;
	}
	enum rpma_flush_type flush = RPMA_FLUSH_TYPE_VISIBILITY;
	if (pcfg_desc_size > 0) {
		bool direct = false;
		if ((ret = rpma_peer_cfg_from_descriptor(p + COMMON_DATA_HEADER + mr_desc_size, pcfg_desc_size, &pcfg))
				|| (ret = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct))
				|| (ret = rpma_conn_apply_remote_peer_cfg(conn, pcfg))) {
			FAIL(w, "the server's peer configuration", ret);
			goto out;
		}
		if (direct)
			flush = RPMA_FLUSH_TYPE_PERSISTENT;
	}
	flush_name = flush == RPMA_FLUSH_TYPE_PERSISTENT ? "persistent" : "visibility";
	size_t region = 0;
	if ((ret = rpma_mr_remote_get_size(dst, &region))) {
		FAIL(w, "rpma_mr_remote_get_size", ret);
		goto out;
	}
	if (region < data_offset + (size_t)size) {
		fprintf(stderr, "load_client[%d]: the server's region (%zu bytes from %zu) is smaller than --size %ld\n",
			w->idx, region - data_offset, data_offset, size);
		w->errors++;
		goto out;
	}
	size_t room = (region - data_offset) / (size_t)size;   /* whole places for S bytes */
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		FAIL(w, "rpma_conn_get_cq", ret);
		goto out;
	}
	struct pollfd pfd[2];
	watch_fds(conn, cq, pfd);
	long posted = 0, completed = 0;
	for (long j = 0; j < k; j++) {
		ch[j].offset = data_offset + (((size_t)w->idx * (size_t)k + (size_t)j) % room) * (size_t)size;
		if (write_post(w, conn, dst, src, flush, ch, j, &posted))
			goto out;
	}
	struct ibv_wc wc[64];
	while (completed < total) {
		int got;
		if (next_completions(w, conn, cq, pfd, wc, 64, &got, "operation", completed, &closed))
			goto out;
		for (int i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "load_client[%d]: write or flush completion %s\n", w->idx,
					ibv_wc_status_str(wc[i].status));
				w->errors++;
				goto out;
			}
			long j = (long)(uintptr_t)wc[i].wr_id;
			uint64_t t1 = now_ns();
			if (ch[j].op >= warmup) {
				w->lat_ns[w->done++] = t1 - ch[j].t_posted;
				w->t_last = t1;
			}
			completed++;
			if (write_post(w, conn, dst, src, flush, ch, j, &posted))
				goto out;
		}
	}

out:
	if (conn)
		(void) close_conn(w, &conn, closed);
	if (pcfg)
		(void) rpma_peer_cfg_delete(&pcfg);
	if (dst)
		(void) rpma_mr_remote_delete(&dst);
	pthread_mutex_lock(&lib_lock);
	if (src && (ret = rpma_mr_dereg(&src)))
		FAIL(w, "rpma_mr_dereg", ret);
	pthread_mutex_unlock(&lib_lock);
	free(src_buf);
	free(ch);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* nearest-rank percentile of a sorted array */
static uint64_t percentile(const uint64_t *s, size_t n, double p)
{
	if (n == 0)
		return 0;
	size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	return s[(rank > n ? n : rank) - 1];
}

static long parse_long(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "load_client: bad value for %s: %s\n", opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 4 || (strcmp(argv[1], "hello") && strcmp(argv[1], "pingpong") && strcmp(argv[1], "write"))) {
		fprintf(stderr, "usage: %s hello ADDR PORT [--cycles N] [--concurrency C] [--timeout SEC] [--latency-file F]\n"
			"       %s pingpong ADDR PORT [--rounds R] [--concurrency C] [--warmup W] [--inflight K]"
			" [--timeout SEC] [--latency-file F]\n"
			"       %s write ADDR PORT --size S [--rounds R] [--concurrency C] [--warmup W] [--inflight K]"
			" [--timeout SEC] [--latency-file F]\n",
			argv[0], argv[0], argv[0]);
		return 2;
	}
	bool hello = strcmp(argv[1], "hello") == 0;
	bool write_mode = strcmp(argv[1], "write") == 0;
	addr = argv[2];
	port = argv[3];
	long concurrency = 1, timeout_s = 600;
	const char *latency_file = NULL;
	for (int i = 4; i < argc; i++) {
		if (i + 1 >= argc) {
			fprintf(stderr, "load_client: %s needs a value\n", argv[i]);
			return 2;
		}
		if (!strcmp(argv[i], "--cycles"))
			cycles = parse_long(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--rounds"))
			rounds = parse_long(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--warmup"))
			warmup = parse_long(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--inflight"))
			inflight = parse_long(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--size"))
			size = parse_long(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--concurrency"))
			concurrency = parse_long(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--timeout"))
			timeout_s = parse_long(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--latency-file"))
			latency_file = argv[i + 1];
		else {
			fprintf(stderr, "load_client: unknown option %s\n", argv[i]);
			return 2;
		}
		i++;
	}
	if (concurrency < 1 || concurrency > 1024) {
		fprintf(stderr, "load_client: --concurrency must be 1..1024\n");
		return 2;
	}
	if (inflight < 1 || inflight > MAX_INFLIGHT) {
		fprintf(stderr, "load_client: --inflight must be 1..%d\n", MAX_INFLIGHT);
		return 2;
	}
	if (write_mode && (size < 1 || size > (1L << 30))) {
		fprintf(stderr, "load_client: write needs --size 1..2^30\n");
		return 2;
	}
	if (timeout_s > 0)
		alarm((unsigned)timeout_s);   /* a hung server must not hang the benchmark */

	raise_fd_limit();
	if (!hello && (inflight > 1 || write_mode)) {
		/* K sends and K receives outstanding, all completing on the main CQ; write: K writes and
		 * K flushes outstanding, only the flushes completing */
		uint32_t q = (uint32_t)(write_mode ? 2 * inflight : inflight), cq;
		q = q > 10 ? q : 10;
		cq = 2 * q;
		int r;
		if ((r = rpma_conn_cfg_new(&conn_cfg)) || (r = rpma_conn_cfg_set_sq_size(conn_cfg, q)) ||
				(r = rpma_conn_cfg_set_rq_size(conn_cfg, q)) || (r = rpma_conn_cfg_set_cq_size(conn_cfg, cq))) {
			fprintf(stderr, "load_client: rpma_conn_cfg: %s\n", rpma_err_2str(r));
			return 1;
		}
	}

	(void) rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR);
	struct ibv_context *ibv;
	int ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv);
	if (ret) {
		fprintf(stderr, "load_client: rpma_utils_get_ibv_context(%s): %s\n", addr, rpma_err_2str(ret));
		return 1;
	}
	if ((ret = rpma_peer_new(ibv, &peer))) {
		fprintf(stderr, "load_client: rpma_peer_new: %s\n", rpma_err_2str(ret));
		return 1;
	}

	long per_thread = hello ? cycles : rounds;
	struct worker *w = calloc((size_t)concurrency, sizeof(*w));
	if (!w)
		return 1;
	pthread_barrier_init(&start_barrier, NULL, (unsigned)concurrency);
	for (long i = 0; i < concurrency; i++) {
		w[i].idx = (int)i;
		w[i].lat_ns = calloc((size_t)(per_thread > 0 ? per_thread : 1), sizeof(uint64_t));
		if (!w[i].lat_ns)
			return 1;
	}
	for (long i = 0; i < concurrency; i++) {
		void *(*fn)(void *) = hello ? hello_worker : write_mode ? write_worker
			: inflight > 1 ? pingpong_inflight_worker : pingpong_worker;
		if (pthread_create(&w[i].tid, NULL, fn, &w[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	long done = 0, retries = 0, errors = 0, sleeps = 0;
	uint64_t first = UINT64_MAX, last = 0;
	for (long i = 0; i < concurrency; i++) {
		pthread_join(w[i].tid, NULL);
		done += w[i].done;
		sleeps += w[i].sleeps;
		retries += w[i].retries;
		errors += w[i].errors;
		if (w[i].done > 0) {
			if (w[i].t_first < first)
				first = w[i].t_first;
			if (w[i].t_last > last)
				last = w[i].t_last;
		}
	}
	uint64_t *all = malloc((size_t)(done > 0 ? done : 1) * sizeof(uint64_t));
	if (!all)
		return 1;
	size_t n = 0;
	double sum = 0;
	for (long i = 0; i < concurrency; i++) {
		for (long j = 0; j < w[i].done; j++) {
			all[n++] = w[i].lat_ns[j];
			sum += (double)w[i].lat_ns[j];
		}
		free(w[i].lat_ns);
	}
	qsort(all, n, sizeof(uint64_t), cmp_u64);
	double seconds = last > first ? (double)(last - first) / 1e9 : 0;
	double rate = seconds > 0 ? (double)done / seconds : 0;
	long expected = per_thread * concurrency;

	if (hello)
		printf("RESULT hello addr=%s concurrency=%ld cycles=%ld seconds=%.3f rate=%.1f p50_ms=%.3f "
			"p99_ms=%.3f mean_ms=%.3f retries=%ld errors=%ld\n",
			addr, concurrency, done, seconds, rate, percentile(all, n, 50) / 1e6,
			percentile(all, n, 99) / 1e6, n ? sum / (double)n / 1e6 : 0, retries, errors);
	else if (write_mode)
		printf("RESULT write addr=%s concurrency=%ld size=%ld rounds=%ld seconds=%.3f rate=%.1f mib_s=%.1f "
			"p50_us=%.1f p99_us=%.1f retries=%ld errors=%ld inflight=%ld flush=%s\n",
			addr, concurrency, size, done, seconds, rate, rate * (double)size / 1048576.0,
			percentile(all, n, 50) / 1e3, percentile(all, n, 99) / 1e3, retries, errors, inflight, flush_name);
	else
		printf("RESULT pingpong addr=%s concurrency=%ld rounds=%ld seconds=%.3f rate=%.1f p50_us=%.1f "
			"p99_us=%.1f mean_us=%.1f min_us=%.1f max_us=%.1f retries=%ld errors=%ld inflight=%ld "
			"sleeps_per_msg=%.3f\n",
			addr, concurrency, done, seconds, rate, percentile(all, n, 50) / 1e3,
			percentile(all, n, 99) / 1e3, n ? sum / (double)n / 1e3 : 0,
			n ? all[0] / 1e3 : 0, n ? all[n - 1] / 1e3 : 0, retries, errors, inflight,
			done ? (double)sleeps / (double)(done + warmup * concurrency) : 0);
	fflush(stdout);
	int file_error = 0;
	if (latency_file) {
		FILE *f = fopen(latency_file, "a");
		for (size_t i = 0; f && i < n; i++)
			fprintf(f, "%" PRIu64 "\n", all[i]);
		if (!f || fclose(f)) {
			perror(latency_file);
			file_error = 1;
		}
	}
	free(all);
	free(w);
	pthread_barrier_destroy(&start_barrier);
	if ((ret = rpma_peer_delete(&peer)))
		fprintf(stderr, "load_client: rpma_peer_delete: %s\n", rpma_err_2str(ret));
	(void) rpma_conn_cfg_delete(&conn_cfg);
	return errors || file_error || done != expected ? 1 : 0;
}

/*
 * baseline_server.c - the C baseline for the rdma-vs-c comparison: a librpma server
 * doing the same work as the Java sample app, on one thread, with one poll() loop.
 *
 *   baseline_server hello|read|pingpong ADDR PORT [--window W] [--busy-poll-us N] [--srq S]
 *
 * Serves until SIGINT/SIGTERM, then disconnects every client, waits (bounded) for
 * their CLOSED events, deletes everything and exits 0 (1 if anything failed).
 *
 * Protocols (wire-compatible with librpma's examples 01-connection, 02-read-to-volatile
 * and 08-messages-ping-pong):
 *   hello:    the client connects with private data "Hello server!\0" (14 bytes);
 *             the server accepts with "Hello client!\0"; once ESTABLISHED the server
 *             disconnects, waits for CLOSED and deletes the connection (the example's
 *             server ends the connection: its client waits for that CLOSED).
 *   read:     "Hello client!\0" (14 bytes) is registered once (RPMA_MR_USAGE_READ_SRC);
 *             every request is accepted with the examples' common_data as private data
 *             (u16 data_offset 0, u8 mr_desc_size, u8 pcfg_desc_size 0, char
 *             descriptors[24] holding the region's descriptor; 28 bytes, little-endian);
 *             the client rpma_reads the string and disconnects; the server waits for
 *             CLOSED, disconnects and deletes. The region is deregistered at shutdown.
 *   pingpong: each message is one little-endian u64. W receives are posted on the
 *             request before accepting (--window W, default 1: W 8-byte slots cut from one
 *             registered region per connection, and W send slots from one other); for each
 *             received value v the server reposts that receive and sends v+1 from a free
 *             send slot (free again when its send completion arrives; a reply waits in a
 *             queue of W while none is free); v == UINT64_MAX means "done": the server
 *             disconnects, waits for CLOSED and deletes the connection. The connection's
 *             queues are sized for W (SQ and RQ >= W, CQ >= 2W; librpma's 10 at least).
 *
 * The event loop polls: a signalfd, the endpoint fd (non-blocking) and, for each
 * connection, its CM event fd (non-blocking) and, in pingpong mode, the fd of its
 * completion channel (non-blocking). Every librpma object is owned by this thread.
 * The poll set grows with the connections (no fixed limit); RLIMIT_NOFILE is raised to
 * its hard limit because each connection holds two fds (CM event and completion channel).
 *
 * --busy-poll-us N (pingpong): before blocking in poll(), poll the connections' CQs with
 * rpma_cq_get_wc for up to N microseconds (sched_yield() between looks, so that other
 * runnable threads on this CPU go on), as the Java sample app does with
 * rpma.server.event-loops.busy-poll: the same algorithm on both sides. Default 0: block at once.
 *
 * --srq S (pingpong): the receives come from one shared receive queue of S slots for all
 * connections (rpma_srq_new, rpma_conn_cfg_set_srq) instead of W per connection: they complete
 * on the SRQ's one receive CQ, whose work completions name the connection by qp_num, and each
 * slot is reposted to the SRQ (rpma_srq_recv) before the reply. Sends stay per connection (W send
 * slots each, completing on the connection's CQ). The SRQ is deleted after every connection.
 *
 * Written against the public API in <librpma.h> (librpma 1.2/1.3).
 */
#define _GNU_SOURCE
#include <librpma.h>
#include <infiniband/verbs.h>
#include "rdma_proc.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#define SHUTDOWN_GRACE_MS 3000  /* how long to wait for CLOSED after SIGTERM */
#define WC_BATCH 16
#define MSG_SIZE sizeof(uint64_t)
#define WR_RECV (1ull << 63)    /* wr_id of a receive: WR_RECV | slot; of a send: slot */
#define MAX_WINDOW 4096
#define DESCRIPTORS_MAX_SIZE 24

static const char HELLO_CLIENT[] = "Hello client!";   /* sent with its '\0': 14 bytes */
static const char HELLO_SERVER[] = "Hello server!";   /* expected from the client */

enum mode { MODE_HELLO, MODE_READ, MODE_PINGPONG };

/* example 02's private data of the accept (common-conn.h), little-endian on the wire */
struct common_data {
	uint16_t data_offset;      /* user data offset in the region */
	uint8_t mr_desc_size;      /* size of the region's descriptor in descriptors[] */
	uint8_t pcfg_desc_size;    /* size of a peer-config descriptor after it (0: none) */
	char descriptors[DESCRIPTORS_MAX_SIZE];
};

struct client {
	struct client *next;
	unsigned long id;
	struct rpma_conn *conn;
	struct rpma_cq *cq;           /* pingpong only: the connection's main CQ */
	int ev_fd;                    /* CM event channel of the connection */
	int cq_fd;                    /* completion channel, -1 in hello mode */
	bool established;
	bool disconnect_sent;
	bool dead;                    /* deleted; freed at the end of the loop iteration */
	/* pingpong: `window` slots of MSG_SIZE bytes each, one registered region per pool */
	uint64_t *recv_buf, *send_buf;
	struct rpma_mr_local *recv_mr, *send_mr;
	unsigned *free_send;          /* stack of send slots whose send completion arrived */
	unsigned n_free;
	uint64_t *pending;            /* replies waiting for a free send slot (ring of window) */
	unsigned pending_head, n_pending;
	unsigned long messages;
	uint32_t qp_num;              /* --srq: how the SRQ's completions name this connection */
	struct client *qp_next;       /* --srq: next client in the same by_qp bucket */
};

static struct {
	unsigned long accepted, established, closed, forced, messages, queued;
	unsigned long bad_pdata, accept_errors, ep_errors, conn_errors, wc_errors, unknown_events;
} stats;

static enum mode mode;
static uint64_t busy_poll_ns;
static unsigned window = 1;
static struct rpma_conn_cfg *conn_cfg;      /* pingpong with a window > 1; NULL: librpma's defaults */
static char *read_buf;                      /* read mode: the registered string */
static struct rpma_mr_local *read_mr;
static struct common_data read_pdata;
static struct rpma_peer *peer;
static struct rpma_ep *ep;
static struct client *clients;
static unsigned long next_id = 1;

/* --srq: the shared receive queue, its receive CQ and its slots, one registered region */
#define QP_BUCKETS 1024
static unsigned srq_slots;
static struct rpma_srq *srq;
static struct rpma_cq *srq_rcq;
static int srq_fd = -1;
static uint64_t *srq_buf;
static struct rpma_mr_local *srq_mr;
static struct client *by_qp[QP_BUCKETS];

static void log_err(const char *what, int ret)
{
	fprintf(stderr, "baseline_server: %s failed: %d (%s)\n", what, ret, rpma_err_2str(ret));
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* release the buffers and registrations of a client (after its connection is gone) */
static void client_free_buffers(struct client *c)
{
	int ret;
	if (c->recv_mr && (ret = rpma_mr_dereg(&c->recv_mr)))
		log_err("rpma_mr_dereg(recv)", ret);
	if (c->send_mr && (ret = rpma_mr_dereg(&c->send_mr)))
		log_err("rpma_mr_dereg(send)", ret);
	free(c->recv_buf);
	free(c->send_buf);
	free(c->free_send);
	free(c->pending);
	c->recv_buf = c->send_buf = c->pending = NULL;
	c->free_send = NULL;
}

/* disconnect (unless done already), delete the connection, release its memory */
static void client_close(struct client *c, bool forced)
{
	int ret;
	if (c->dead)
		return;
	if (!c->disconnect_sent) {
		c->disconnect_sent = true;
		(void) rpma_conn_disconnect(c->conn);   /* fails harmlessly if the peer is gone */
	}
	if ((ret = rpma_conn_delete(&c->conn))) {      /* NULLs c->conn even on error */
		log_err("rpma_conn_delete", ret);
		stats.conn_errors++;
	}
	client_free_buffers(c);
	if (srq) {
		struct client **pp = &by_qp[c->qp_num % QP_BUCKETS];
		while (*pp && *pp != c)
			pp = &(*pp)->qp_next;
		if (*pp)
			*pp = c->qp_next;
	}
	c->dead = true;
	stats.closed++;
	if (forced)
		stats.forced++;
}

static void client_start_disconnect(struct client *c)
{
	int ret;
	if (c->dead || c->disconnect_sent)
		return;
	c->disconnect_sent = true;
	if ((ret = rpma_conn_disconnect(c->conn))) {
		log_err("rpma_conn_disconnect", ret);
		client_close(c, true);
	}
}

/* one connection request from the endpoint: prepare it and accept it */
static void accept_one(void)
{
	struct rpma_conn_req *req = NULL;
	/* the request's QP and CQ are created here, sized by conn_cfg */
	int ret = rpma_ep_next_conn_req(ep, conn_cfg, &req);
	if (ret == RPMA_E_NO_EVENT)
		return;
	if (ret == RPMA_E_INVAL || ret == RPMA_E_PROVIDER || ret == RPMA_E_NOMEM) {
		/* INVAL: a non-request event was dropped; PROVIDER: EAGAIN after a spurious
		 * POLLIN (or a real provider error, logged by librpma); all transient here */
		stats.ep_errors++;
		return;
	}
	if (ret) {
		log_err("rpma_ep_next_conn_req", ret);
		stats.ep_errors++;
		return;
	}

	struct client *c = calloc(1, sizeof(*c));
	if (!c)
		goto reject;
	c->id = next_id++;
	c->ev_fd = c->cq_fd = -1;

	struct rpma_conn_private_data pd = { NULL, 0 };
	struct rpma_conn_private_data *reply = NULL;
	if (mode == MODE_HELLO) {
		struct rpma_conn_private_data in;
		if (rpma_conn_req_get_private_data(req, &in) || in.len < sizeof(HELLO_SERVER) ||
				memcmp(in.ptr, HELLO_SERVER, sizeof(HELLO_SERVER)) != 0)
			stats.bad_pdata++;   /* counted, still accepted (as the upstream example) */
		pd.ptr = (void *)HELLO_CLIENT;
		pd.len = sizeof(HELLO_CLIENT);   /* 14, with the terminating '\0' */
		reply = &pd;
	} else if (mode == MODE_READ) {
		pd.ptr = &read_pdata;
		pd.len = sizeof(read_pdata);     /* 28 */
		reply = &pd;
	} else {
		/* one region per pool, cut into `window` slots: one registration each, not one per slot */
		size_t bytes = (size_t)window * MSG_SIZE;
		if ((!srq && posix_memalign((void **)&c->recv_buf, 64, bytes)) ||
				posix_memalign((void **)&c->send_buf, 64, bytes) ||
				!(c->free_send = calloc(window, sizeof(*c->free_send))) ||
				!(c->pending = calloc(window, sizeof(*c->pending))))
			goto reject;
		if (c->recv_buf)
			memset(c->recv_buf, 0, bytes);
		memset(c->send_buf, 0, bytes);
		for (unsigned i = 0; i < window; i++)
			c->free_send[i] = window - 1 - i;   /* slot 0 on top */
		c->n_free = window;
		if (!srq && (ret = rpma_mr_reg(peer, c->recv_buf, bytes, RPMA_MR_USAGE_RECV, &c->recv_mr))) {
			log_err("rpma_mr_reg(recv)", ret);
			goto reject;
		}
		if ((ret = rpma_mr_reg(peer, c->send_buf, bytes, RPMA_MR_USAGE_SEND, &c->send_mr))) {
			log_err("rpma_mr_reg(send)", ret);
			goto reject;
		}
		/* the receives must be in place before the client can send (--srq: they are, in the SRQ) */
		for (unsigned i = 0; !srq && i < window; i++) {
			if ((ret = rpma_conn_req_recv(req, c->recv_mr, i * MSG_SIZE, MSG_SIZE,
					(void *)(uintptr_t)(WR_RECV | i)))) {
				log_err("rpma_conn_req_recv", ret);
				goto reject;
			}
		}
	}

	/* consumes req whatever the result */
	if ((ret = rpma_conn_req_connect(&req, reply, &c->conn))) {
		log_err("rpma_conn_req_connect", ret);
		goto fail;
	}
	if ((ret = rpma_conn_get_event_fd(c->conn, &c->ev_fd)) || set_nonblock(c->ev_fd)) {
		log_err("rpma_conn_get_event_fd", ret);
		goto fail_conn;
	}
	if (mode == MODE_PINGPONG) {
		if ((ret = rpma_conn_get_cq(c->conn, &c->cq)) || (ret = rpma_cq_get_fd(c->cq, &c->cq_fd)) ||
				set_nonblock(c->cq_fd)) {
			log_err("rpma_conn_get_cq/rpma_cq_get_fd", ret);
			goto fail_conn;
		}
		if (srq) {
			if ((ret = rpma_conn_get_qp_num(c->conn, &c->qp_num))) {
				log_err("rpma_conn_get_qp_num", ret);
				goto fail_conn;
			}
			c->qp_next = by_qp[c->qp_num % QP_BUCKETS];
			by_qp[c->qp_num % QP_BUCKETS] = c;
		}
	}
	c->next = clients;
	clients = c;
	stats.accepted++;
	return;

fail_conn:
	c->next = clients;       /* let the normal path tear it down */
	clients = c;
	client_close(c, true);
	stats.accept_errors++;
	return;
reject:
	if (req && (ret = rpma_conn_req_delete(&req)))   /* the client sees REJECTED */
		log_err("rpma_conn_req_delete", ret);
fail:
	stats.accept_errors++;
	if (c) {
		client_free_buffers(c);
		free(c);
	}
}

static void handle_conn_event(struct client *c)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(c->conn, &ev);
	if (ret == RPMA_E_NO_EVENT)
		return;
	if (ret == RPMA_E_UNKNOWN) {  /* an event librpma does not map (acked and dropped) */
		stats.unknown_events++;
		return;
	}
	if (ret) {
		/* PROVIDER: EAGAIN after a spurious POLLIN, or the channel broke */
		stats.conn_errors++;
		return;
	}
	switch (ev) {
	case RPMA_CONN_ESTABLISHED:
		c->established = true;
		stats.established++;
		/* hello: the example's server ends the connection once it is established;
		 * read and pingpong: the client does (pingpong: after "done") */
		if (mode == MODE_HELLO)
			client_start_disconnect(c);
		break;
	case RPMA_CONN_CLOSED:   /* DISCONNECTED or TIMEWAIT_EXIT: can come twice, the first one wins */
	case RPMA_CONN_LOST:
		/* valid in any state after the accept, also without ESTABLISHED: disconnect
		 * (unless done already) and delete */
		client_close(c, false);
		break;
	default:
		fprintf(stderr, "baseline_server: connection %lu: unexpected event %s\n",
			c->id, rpma_utils_conn_event_2str(ev));
		stats.conn_errors++;
		client_close(c, true);
		break;
	}
}

/* pingpong: send `value` from a free send slot, or queue it until a send completion frees one */
static int reply(struct client *c, uint64_t value)
{
	if (c->n_free == 0) {
		if (c->n_pending == window) {
			/* more unanswered messages than receives posted: not a client of this protocol */
			fprintf(stderr, "baseline_server: connection %lu: more than %u replies waiting\n", c->id, window);
			return -1;
		}
		c->pending[(c->pending_head + c->n_pending++) % window] = value;
		stats.queued++;
		return 0;
	}
	unsigned slot = c->free_send[--c->n_free];
	c->send_buf[slot] = htole64(value);
	int ret = rpma_send(c->conn, c->send_mr, slot * MSG_SIZE, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
		(void *)(uintptr_t)slot);
	if (ret) {
		log_err("rpma_send", ret);
		return ret;
	}
	c->messages++;
	stats.messages++;
	return 0;
}

/* pingpong: value v arrived in receive slot `slot` */
static void handle_message(struct client *c, unsigned slot, uint64_t v)
{
	int ret;
	if (v == UINT64_MAX) {          /* the client is done */
		client_start_disconnect(c);
		return;
	}
	/* the value is read already: the slot can take the next message */
	if ((ret = rpma_recv(c->conn, c->recv_mr, slot * MSG_SIZE, MSG_SIZE, (void *)(uintptr_t)(WR_RECV | slot)))) {
		log_err("rpma_recv", ret);
		goto broken;
	}
	if (reply(c, v + 1))
		goto broken;
	return;
broken:
	stats.conn_errors++;
	client_start_disconnect(c);
}

/* the work completions of one rpma_cq_get_wc */
static void process_wcs(struct client *c, struct ibv_wc *wc, int got)
{
	for (int i = 0; i < got && !c->dead; i++) {
		/* the opcode of a failed completion is undefined: the wr_id tells which it was */
		bool is_recv = (wc[i].wr_id & WR_RECV) != 0;
		unsigned slot = (unsigned)(wc[i].wr_id & ~WR_RECV);
		if (wc[i].status != IBV_WC_SUCCESS) {
			/* flushed work requests after a disconnect are expected */
			if (!c->disconnect_sent) {
				fprintf(stderr, "baseline_server: connection %lu: %s completion %s (vendor_err %u)\n",
					c->id, is_recv ? "receive" : "send", ibv_wc_status_str(wc[i].status),
					wc[i].vendor_err);
				stats.wc_errors++;
				client_start_disconnect(c);
			}
			continue;
		}
		if (slot >= window)
			continue;   /* not a work request of ours */
		if (is_recv) {
			if (wc[i].byte_len != MSG_SIZE) {
				if (!c->disconnect_sent) {
					fprintf(stderr, "baseline_server: connection %lu: received %u bytes, expected %zu\n",
						c->id, wc[i].byte_len, MSG_SIZE);
					stats.wc_errors++;
					client_start_disconnect(c);
				}
				continue;
			}
			if (!c->disconnect_sent)
				handle_message(c, slot, le64toh(c->recv_buf[slot]));
		} else {
			/* the send slot is free again; a queued reply takes it at once */
			c->free_send[c->n_free++] = slot;
			if (c->n_pending && !c->disconnect_sent) {
				uint64_t value = c->pending[c->pending_head];
				c->pending_head = (c->pending_head + 1) % window;
				c->n_pending--;
				if (reply(c, value)) {
					stats.conn_errors++;
					client_start_disconnect(c);
				}
			}
		}
	}
}

static void handle_completions(struct client *c)
{
	/* consume the channel event and re-arm the CQ, then drain it: a completion that
	 * arrives after the re-arm raises a new event, so nothing is left behind */
	int ret = rpma_cq_wait(c->cq);
	if (ret && ret != RPMA_E_NO_COMPLETION) {
		log_err("rpma_cq_wait", ret);
		stats.conn_errors++;
		client_close(c, true);
		return;
	}
	struct ibv_wc wc[WC_BATCH];
	for (;;) {
		int got = 0;
		ret = rpma_cq_get_wc(c->cq, WC_BATCH, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION)
			return;
		if (ret) {
			log_err("rpma_cq_get_wc", ret);
			stats.conn_errors++;
			client_close(c, true);
			return;
		}
		process_wcs(c, wc, got);
		if (got < WC_BATCH)
			return;
	}
}

/* --srq: the client a shared receive's completion came for, or NULL */
static struct client *client_of_qp(uint32_t qp_num)
{
	for (struct client *c = by_qp[qp_num % QP_BUCKETS]; c; c = c->qp_next)
		if (c->qp_num == qp_num)
			return c;
	return NULL;
}

/* --srq: the work completions of one rpma_cq_get_wc on the SRQ's receive CQ */
static void process_srq_wcs(struct ibv_wc *wc, int got)
{
	int ret;
	for (int i = 0; i < got; i++) {
		unsigned slot = (unsigned)(wc[i].wr_id & ~WR_RECV);
		if (slot >= srq_slots)
			continue;   /* not a work request of ours */
		struct client *c = client_of_qp(wc[i].qp_num);
		bool ok = wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len == MSG_SIZE;
		uint64_t v = le64toh(srq_buf[slot]);
		/* the value is read already: the slot can take the next message, of any connection */
		if ((ret = rpma_srq_recv(srq, srq_mr, slot * MSG_SIZE, MSG_SIZE, (void *)(uintptr_t)(WR_RECV | slot)))) {
			log_err("rpma_srq_recv", ret);
			stats.wc_errors++;
		}
		if (!c || c->dead || c->disconnect_sent)
			continue;
		if (!ok) {
			fprintf(stderr, "baseline_server: connection %lu: shared receive %s, %u bytes\n", c->id,
				ibv_wc_status_str(wc[i].status), wc[i].byte_len);
			stats.wc_errors++;
			client_start_disconnect(c);
			continue;
		}
		if (v == UINT64_MAX) {
			client_start_disconnect(c);
			continue;
		}
		if (reply(c, v + 1)) {
			stats.conn_errors++;
			client_start_disconnect(c);
		}
	}
}

static void handle_srq_completions(void)
{
	int ret = rpma_cq_wait(srq_rcq);
	if (ret && ret != RPMA_E_NO_COMPLETION) {
		log_err("rpma_cq_wait(srq)", ret);
		stats.wc_errors++;
		return;
	}
	struct ibv_wc wc[WC_BATCH];
	for (;;) {
		int got = 0;
		ret = rpma_cq_get_wc(srq_rcq, WC_BATCH, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION)
			return;
		if (ret) {
			log_err("rpma_cq_get_wc(srq)", ret);
			stats.wc_errors++;
			return;
		}
		process_srq_wcs(wc, got);
		if (got < WC_BATCH)
			return;
	}
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * --busy-poll-us: look at every connection's CQ until one has completions or the time is
 * up. The CQs stay armed, so what is found here also left an event on its channel: the
 * next poll() returns at once and only consumes it.
 */
static void busy_poll(void)
{
	uint64_t deadline = 0;
	struct ibv_wc wc[WC_BATCH];
	for (;;) {
		int got = 0;
		if (srq && rpma_cq_get_wc(srq_rcq, WC_BATCH, wc, &got) == 0 && got > 0) {
			process_srq_wcs(wc, got);
			return;
		}
		for (struct client *c = clients; c; c = c->next) {
			got = 0;
			if (c->dead || !c->cq || rpma_cq_get_wc(c->cq, WC_BATCH, wc, &got) || got == 0)
				continue;
			process_wcs(c, wc, got);
			return;
		}
		sched_yield();
		/* the clock only once a look found nothing, as the sample app does */
		uint64_t now = now_ns();
		if (deadline == 0)
			deadline = now + busy_poll_ns;
		else if (now >= deadline)
			return;
	}
}

static void reap_dead(void)
{
	struct client **pp = &clients;
	while (*pp) {
		struct client *c = *pp;
		if (c->dead) {
			*pp = c->next;
			free(c);
		} else {
			pp = &c->next;
		}
	}
}

static unsigned count_clients(void)
{
	unsigned n = 0;
	for (struct client *c = clients; c; c = c->next)
		n++;
	return n;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s hello|read|pingpong ADDR PORT [--window W] [--busy-poll-us N] [--srq S]\n", argv0);
	exit(2);
}

static unsigned long parse_ulong(const char *argv0, const char *s)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || !*s || *s == '-')
		usage(argv0);
	return v;
}

/* read mode: register the string once and describe it in the accept's private data */
static int read_region_new(void)
{
	static const char HELLO_STR[] = "Hello client!";   /* example 02's, with its '\0': 14 bytes */
	int ret;
	if (posix_memalign((void **)&read_buf, (size_t)sysconf(_SC_PAGESIZE), sizeof(HELLO_STR))) {
		fprintf(stderr, "baseline_server: out of memory\n");
		return -1;
	}
	memcpy(read_buf, HELLO_STR, sizeof(HELLO_STR));
	if ((ret = rpma_mr_reg(peer, read_buf, sizeof(HELLO_STR), RPMA_MR_USAGE_READ_SRC, &read_mr))) {
		log_err("rpma_mr_reg(read)", ret);
		return ret;
	}
	size_t desc_size = 0;
	if ((ret = rpma_mr_get_descriptor_size(read_mr, &desc_size))) {
		log_err("rpma_mr_get_descriptor_size", ret);
		return ret;
	}
	if (desc_size > DESCRIPTORS_MAX_SIZE) {
		fprintf(stderr, "baseline_server: descriptor of %zu bytes does not fit\n", desc_size);
		return -1;
	}
	memset(&read_pdata, 0, sizeof(read_pdata));
	read_pdata.data_offset = htole16(0);
	read_pdata.mr_desc_size = (uint8_t)desc_size;
	read_pdata.pcfg_desc_size = 0;
	if ((ret = rpma_mr_get_descriptor(read_mr, &read_pdata.descriptors[0]))) {
		log_err("rpma_mr_get_descriptor", ret);
		return ret;
	}
	return 0;
}

/* pingpong with a window: the connections' queues sized for it (librpma's 10 at least) */
static int conn_cfg_new(void)
{
	uint32_t q = window > 10 ? window : 10, cq = 2 * window > 10 ? 2 * window : 10;
	int ret;
	if ((ret = rpma_conn_cfg_new(&conn_cfg)) || (ret = rpma_conn_cfg_set_sq_size(conn_cfg, q)) ||
			(ret = rpma_conn_cfg_set_rq_size(conn_cfg, q)) || (ret = rpma_conn_cfg_set_cq_size(conn_cfg, cq))) {
		log_err("rpma_conn_cfg", ret);
		return ret;
	}
	if (srq && (ret = rpma_conn_cfg_set_srq(conn_cfg, srq))) {
		log_err("rpma_conn_cfg_set_srq", ret);
		return ret;
	}
	return 0;
}

/* --srq: the shared receive queue with its S slots posted, one registered region for all */
static int srq_new(void)
{
	struct rpma_srq_cfg *cfg = NULL;
	int ret;
	if ((ret = rpma_srq_cfg_new(&cfg)) || (ret = rpma_srq_cfg_set_rq_size(cfg, srq_slots)) ||
			(ret = rpma_srq_cfg_set_rcq_size(cfg, srq_slots)) || (ret = rpma_srq_new(peer, cfg, &srq))) {
		log_err("rpma_srq_cfg/rpma_srq_new", ret);
		(void) rpma_srq_cfg_delete(&cfg);
		return -1;
	}
	(void) rpma_srq_cfg_delete(&cfg);
	if ((ret = rpma_srq_get_rcq(srq, &srq_rcq)) || (ret = rpma_cq_get_fd(srq_rcq, &srq_fd)) || set_nonblock(srq_fd)) {
		log_err("rpma_srq_get_rcq/rpma_cq_get_fd", ret);
		return -1;
	}
	size_t bytes = (size_t)srq_slots * MSG_SIZE;
	if (posix_memalign((void **)&srq_buf, 64, bytes)) {
		fprintf(stderr, "baseline_server: out of memory\n");
		return -1;
	}
	memset(srq_buf, 0, bytes);
	if ((ret = rpma_mr_reg(peer, srq_buf, bytes, RPMA_MR_USAGE_RECV, &srq_mr))) {
		log_err("rpma_mr_reg(srq)", ret);
		return -1;
	}
	for (unsigned i = 0; i < srq_slots; i++) {
		if ((ret = rpma_srq_recv(srq, srq_mr, i * MSG_SIZE, MSG_SIZE, (void *)(uintptr_t)(WR_RECV | i)))) {
			log_err("rpma_srq_recv", ret);
			return -1;
		}
	}
	return 0;
}

/* --srq: after every connection that used it */
static int srq_delete(void)
{
	int ret, rc = 0;
	if (srq && (ret = rpma_srq_delete(&srq))) {
		log_err("rpma_srq_delete", ret);
		rc = 1;
	}
	if (srq_mr && (ret = rpma_mr_dereg(&srq_mr))) {
		log_err("rpma_mr_dereg(srq)", ret);
		rc = 1;
	}
	free(srq_buf);
	srq_buf = NULL;
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		usage(argv[0]);
	if (!strcmp(argv[1], "hello"))
		mode = MODE_HELLO;
	else if (!strcmp(argv[1], "read"))
		mode = MODE_READ;
	else if (!strcmp(argv[1], "pingpong"))
		mode = MODE_PINGPONG;
	else
		usage(argv[0]);
	for (int i = 4; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage(argv[0]);
		if (!strcmp(argv[i], "--busy-poll-us"))
			busy_poll_ns = parse_ulong(argv[0], argv[i + 1]) * 1000u;
		else if (!strcmp(argv[i], "--window"))
			window = (unsigned)parse_ulong(argv[0], argv[i + 1]);
		else if (!strcmp(argv[i], "--srq"))
			srq_slots = (unsigned)parse_ulong(argv[0], argv[i + 1]);
		else
			usage(argv[0]);
	}
	if (window < 1 || window > MAX_WINDOW) {
		fprintf(stderr, "baseline_server: --window must be 1..%d\n", MAX_WINDOW);
		return 2;
	}
	if (srq_slots > 0 && (mode != MODE_PINGPONG || srq_slots > 65536)) {
		fprintf(stderr, "baseline_server: --srq is for pingpong, 1..65536 slots\n");
		return 2;
	}
	const char *addr = argv[2], *port = argv[3];
	int ret, rc = 0;

	raise_fd_limit();

	/* librpma logs to syslog by default; also show errors on stderr */
	(void) rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR);

	int sig_fd = stop_signal_fd();
	if (sig_fd < 0) {
		perror("signalfd");
		return 1;
	}

	struct ibv_context *ibv;
	if ((ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv))) {
		log_err("rpma_utils_get_ibv_context", ret);
		return 1;
	}
	if ((ret = rpma_peer_new(ibv, &peer))) {
		log_err("rpma_peer_new", ret);
		return 1;
	}
	if ((mode == MODE_READ && read_region_new()) || (srq_slots > 0 && srq_new()) ||
			(mode == MODE_PINGPONG && (window > 1 || srq) && conn_cfg_new())) {
		(void) srq_delete();
		(void) rpma_mr_dereg(&read_mr);
		free(read_buf);
		(void) rpma_conn_cfg_delete(&conn_cfg);
		(void) rpma_peer_delete(&peer);
		return 1;
	}
	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		log_err("rpma_ep_listen", ret);
		(void) rpma_mr_dereg(&read_mr);
		free(read_buf);
		(void) rpma_conn_cfg_delete(&conn_cfg);
		(void) rpma_peer_delete(&peer);
		return 1;
	}
	int ep_fd;
	if ((ret = rpma_ep_get_fd(ep, &ep_fd)) || set_nonblock(ep_fd)) {
		log_err("rpma_ep_get_fd", ret);
		return 1;
	}
	printf("baseline_server: %s listening on %s:%s (device %s", argv[1], addr, port,
		ibv_get_device_name(ibv->device));
	if (mode == MODE_PINGPONG)
		printf(", window %u", window);
	if (srq)
		printf(", shared receive queue of %u", srq_slots);
	printf(")\n");
	fflush(stdout);

	enum { K_SIG, K_EP, K_EV, K_CQ, K_SRQ };
	struct pollfd *pfd = NULL;
	struct { int kind; struct client *c; } *who = NULL;
	size_t cap = 0;
	bool stopping = false;
	uint64_t deadline = 0;

	for (;;) {
		/* before the poll set is built: busy_poll() may close connections */
		if (busy_poll_ns && mode == MODE_PINGPONG && clients && !stopping) {
			busy_poll();
			reap_dead();
		}
		size_t need = 3 + 2 * (size_t)count_clients();
		if (need > cap) {
			cap = need * 2;
			pfd = realloc(pfd, cap * sizeof(*pfd));
			who = realloc(who, cap * sizeof(*who));
			if (!pfd || !who) {
				fprintf(stderr, "baseline_server: out of memory\n");
				return 1;
			}
		}
		size_t n = 0;
		pfd[n] = (struct pollfd){ sig_fd, POLLIN, 0 };
		who[n].kind = K_SIG; who[n++].c = NULL;
		if (ep) {
			pfd[n] = (struct pollfd){ ep_fd, POLLIN, 0 };
			who[n].kind = K_EP; who[n++].c = NULL;
		}
		if (srq) {
			pfd[n] = (struct pollfd){ srq_fd, POLLIN, 0 };
			who[n].kind = K_SRQ; who[n++].c = NULL;
		}
		for (struct client *c = clients; c; c = c->next) {
			pfd[n] = (struct pollfd){ c->ev_fd, POLLIN, 0 };
			who[n].kind = K_EV; who[n++].c = c;
			if (c->cq_fd >= 0) {
				pfd[n] = (struct pollfd){ c->cq_fd, POLLIN, 0 };
				who[n].kind = K_CQ; who[n++].c = c;
			}
		}

		int timeout = -1;
		if (stopping) {
			uint64_t t = now_ms();
			timeout = t >= deadline ? 0 : (int)(deadline - t);
		}
		int np = poll(pfd, n, timeout);
		if (np < 0 && errno != EINTR) {
			perror("poll");
			rc = 1;
			break;
		}
		bool stop_now = false;
		for (size_t i = 0; np > 0 && i < n; i++) {
			if (!pfd[i].revents)
				continue;
			struct client *c = who[i].c;
			switch (who[i].kind) {
			case K_SIG: {
				struct signalfd_siginfo si;
				while (read(sig_fd, &si, sizeof(si)) == sizeof(si))
					stop_now = true;
				break;
			}
			case K_EP:
				accept_one();
				break;
			case K_EV:
				if (!c->dead)
					handle_conn_event(c);
				break;
			case K_CQ:
				if (!c->dead)
					handle_completions(c);
				break;
			case K_SRQ:
				handle_srq_completions();
				break;
			}
		}
		reap_dead();

		if (stop_now && !stopping) {
			stopping = true;
			deadline = now_ms() + SHUTDOWN_GRACE_MS;
			fprintf(stderr, "baseline_server: stopping, %u connection(s) open\n", count_clients());
			if ((ret = rpma_ep_shutdown(&ep))) {   /* no new requests from here on */
				log_err("rpma_ep_shutdown", ret);
				rc = 1;
			}
			for (struct client *c = clients; c; c = c->next)
				client_start_disconnect(c);
			reap_dead();
		}
		if (stopping && now_ms() >= deadline) {
			for (struct client *c = clients; c; c = c->next)
				client_close(c, true);   /* no CLOSED in time: delete anyway */
			reap_dead();
		}
		if (stopping && !clients)
			break;
	}

	free(pfd);
	free(who);
	if (ep && (ret = rpma_ep_shutdown(&ep))) {
		log_err("rpma_ep_shutdown", ret);
		rc = 1;
	}
	/* the read region outlives every connection that could read it */
	if ((ret = rpma_mr_dereg(&read_mr))) {
		log_err("rpma_mr_dereg(read)", ret);
		rc = 1;
	}
	free(read_buf);
	/* the shared receive queue outlives every connection that used it */
	if (srq_delete())
		rc = 1;
	if ((ret = rpma_conn_cfg_delete(&conn_cfg))) {
		log_err("rpma_conn_cfg_delete", ret);
		rc = 1;
	}
	if ((ret = rpma_peer_delete(&peer))) {
		log_err("rpma_peer_delete", ret);
		rc = 1;
	}
	close(sig_fd);
	if (stats.conn_errors || stats.accept_errors || stats.wc_errors)
		rc = 1;
	printf("baseline_server: stopped: accepted=%lu established=%lu closed=%lu forced=%lu "
		"messages=%lu bad_pdata=%lu accept_errors=%lu ep_errors=%lu conn_errors=%lu wc_errors=%lu "
		"unknown_events=%lu queued_replies=%lu\n",
		stats.accepted, stats.established, stats.closed, stats.forced, stats.messages,
		stats.bad_pdata, stats.accept_errors, stats.ep_errors, stats.conn_errors, stats.wc_errors,
		stats.unknown_events, stats.queued);
	return rc;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The kevent servers, with what kevent has today.
 *
 * kevent-post: readiness. Each connection is a KEVENT_TYPE_SOCKET kevent
 *   (KEVENT_SOCKET_RECV, edge-triggered) on an instance with a posted
 *   ring (KEVENT_RING_POST): the socket's wakeup writes the event into
 *   the ring, and kevent_wait() is called only when the ring is empty.
 *   Then read() and write(), as with epoll (and the same rule: a short
 *   receive emptied the socket). The listening socket reports
 *   KEVENT_SOCKET_ACCEPT with the accept queue's length, so accept4() is
 *   called that many times, without the last one that fails with EAGAIN;
 *   the new connections are registered in one kevent_ctl() per batch.
 *
 * kevent-aio: completions (S1 and S2 only). One KEVENT_TYPE_AIO receive
 *   in flight per connection; when it completes, the reply goes out as a
 *   KEVENT_AIO_SEND, and the next receive is queued, both in the one
 *   kevent_ctl() that answers all the events of a batch. The kernel does
 *   the receives and the sends inside kevent_wait(), which is therefore
 *   called even when the ring is not empty (KEVENT_RING_PENDING), and
 *   the send's completion is one more event; the run ends when the last
 *   reply's send has completed. Each
 *   operation pins its buffer and allocates its kevent. (S3 is left out:
 *   an operation holds its socket, so ending a connection would take a
 *   KEVENT_CTL_REMOVE before the close.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <kevent/kevent.h>

#include "tcp.h"

#define KV_RING 4096		/* slots; every connection's event fits */
#define KV_BATCH 1024		/* entries per kevent_ctl() */

struct kv {
	struct srv *s;
	struct kevent_queue q;	/* the instance and its posted ring */
	struct ukevent *ctl;	/* entries of the next kevent_ctl() */
	int nctl;
	char *buf;
	long long sending;	/* kevent-aio: sends not yet completed */
};

/* user_data: the fd, and the connection's generation to spot stale slots. */
static uint64_t kv_cookie(struct srv *s, int fd)
{
	return (uint64_t)s->conns[fd].gen << 32 | (uint32_t)fd;
}

static void kv_flush(struct kv *k)
{
	int i, ret;

	if (!k->nctl)
		return;
	ret = COUNTED(ctl, kevent_ctl(k->q.fd, KEVENT_CTL_ADD, k->nctl, k->ctl, 0));
	if (ret != k->nctl)
		fail("kevent server: kevent_ctl: %s",
		     ret < 0 ? strerror(-ret) : "short");
	for (i = 0; i < k->nctl; i++)
		if (k->ctl[i].ret_error)
			fail("kevent server: kevent_ctl entry %d: %s", i,
			     strerror(-k->ctl[i].ret_error));
	k->nctl = 0;
}

static struct ukevent *kv_entry(struct kv *k)
{
	if (k->nctl == KV_BATCH)
		kv_flush(k);
	return &k->ctl[k->nctl++];
}

static void kv_open(struct kv *k, struct srv *s)
{
	int err;

	k->s = s;
	err = kevent_queue_init(&k->q, KV_RING, KEVENT_CLOEXEC | KEVENT_RING_POST);
	if (err)
		fail("kevent server: kevent_queue_init: %s", strerror(-err));
	k->ctl = malloc(KV_BATCH * sizeof(*k->ctl));
	k->buf = malloc(s->run->rbuf);
	if (!k->ctl || !k->buf)
		fail("kevent server: set-up: %s", strerror(errno));
}

/*
 * Take the events in the ring, @handle each, give the slots back, send
 * the batch's kevent_ctl(); then enter kevent_wait() if the ring is
 * empty (to sleep) or the kernel has events for it to move in.
 */
static void kv_loop(struct kv *k, void (*handle)(struct kv *k, const struct ukevent *ev))
{
	/* A reply is on its way only once its send has completed. */
	while (!srv_done(k->s) || k->sending) {
		unsigned int n = kevent_ring_ready(&k->q), i;
		bool pending, empty;
		int ret;

		for (i = 0; i < n; i++)
			handle(k, kevent_ring_event(&k->q, i));
		kevent_ring_advance(&k->q, n);
		kv_flush(k);
		if (srv_done(k->s) && !k->sending)
			break;
		pending = kevent_ring_flags(&k->q) & KEVENT_RING_PENDING;
		empty = !kevent_ring_ready(&k->q);
		if (!empty && !pending)
			continue;
		ret = COUNTED(wait, kevent_wait(k->q.fd, empty, NULL));
		if (ret < 0 && ret != -EINTR)
			fail("kevent server: kevent_wait: %s", strerror(-ret));
	}
}

/* ------------------------------------------------------------------ */
/* kevent-post: KEVENT_TYPE_SOCKET, read() and write()                 */
/* ------------------------------------------------------------------ */

static void kv_watch(struct kv *k, int fd, uint32_t events)
{
	kevent_prep_socket(kv_entry(k), fd, events, KEVENT_REQ_ET,
			   kv_cookie(k->s, fd));
}

static void kv_added(void *arg, int fd)
{
	kv_watch(arg, fd, KEVENT_SOCKET_RECV);
}

static void kv_accept(struct kv *k, uint32_t backlog)
{
	srv_accept_backlog(k->s, backlog, "kevent", kv_added, k);
}

static void kv_receive(struct kv *k, int fd)
{
	struct srv *s = k->s;
	struct conn *c = srv_conn(s, fd);
	ssize_t n;

	do {
		n = COUNTED(io, read(fd, k->buf, s->run->rbuf));
		if (n < 0) {
			if (errno == EAGAIN)
				return;
			fail("kevent server: read: %s", strerror(errno));
		}
		if (n == 0) {
			srv_eof(s, c);
			COUNTED(ctl, close(fd));
			return;
		}
		size_t reply = srv_input(s, c, k->buf, n);

		if (reply && COUNTED(io, write(fd, c->out, reply)) != (ssize_t)reply)
			fail("kevent server: short write");
	} while (n == s->run->rbuf);
}

static void post_handle(struct kv *k, const struct ukevent *ev)
{
	int fd = (uint32_t)ev->user_data;

	if (ev->ret_flags & KEVENT_RET_BROKEN)
		fail("kevent server: fd %d broken: %d", fd, ev->ret_error);
	if (fd == k->s->lfd) {
		kv_accept(k, KEVENT_SOCKET_BACKLOG(ev->ret_data));
		return;
	}
	/* A slot of a connection closed since, its fd maybe reused: skip. */
	if (fd < k->s->max_fd && (!k->s->conns[fd].open ||
				  ev->user_data >> 32 != k->s->conns[fd].gen))
		return;
	kv_receive(k, fd);
}

static int post_serve(struct srv *s, const struct tcp_backend *be)
{
	struct kv k = { 0 };
	int i;

	(void)be;
	kv_open(&k, s);
	for (i = 0; i < s->ninitial; i++)
		kv_watch(&k, s->initial[i], KEVENT_SOCKET_RECV);
	if (s->run->scn == TCP_S3) {
		kevent_prep_socket(kv_entry(&k), s->lfd, KEVENT_SOCKET_ACCEPT,
				   KEVENT_REQ_ET, s->lfd);
	}
	kv_flush(&k);
	srv_begin(s);
	kv_loop(&k, post_handle);
	return 0;
}

static bool post_probe(void)
{
	int fd = kevent_init(KV_RING, KEVENT_CLOEXEC | KEVENT_RING_POST);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

const struct tcp_backend tcp_kevent_post = {
	.name = "kevent-post", .scenarios = 7, .probe = post_probe,
	.serve = post_serve,
};

/* ------------------------------------------------------------------ */
/* kevent-aio: KEVENT_TYPE_AIO receive and send                        */
/* ------------------------------------------------------------------ */

#define AIO_RECV_TAG 0
#define AIO_SEND_TAG 1

/* Per connection, the receive buffer (aligned: one page pinned for 4 KiB). */
static char *aio_bufs;

static void aio_queue(struct kv *k, uint32_t op, int fd, uint32_t tag,
		      void *buf, uint64_t len)
{
	struct ukevent *uk = kv_entry(k);
	uint64_t cookie = (uint64_t)tag << 32 | (uint32_t)fd;

	if (op == KEVENT_AIO_SEND)
		kevent_prep_send(uk, fd, tag, buf, len, cookie);
	else
		kevent_prep_recv(uk, fd, tag, buf, len, cookie);
	if (op == KEVENT_AIO_SEND)
		k->sending++;
}

static void aio_recv(struct kv *k, int fd)
{
	aio_queue(k, KEVENT_AIO_RECV, fd, AIO_RECV_TAG,
		  aio_bufs + (size_t)fd * k->s->run->rbuf, k->s->run->rbuf);
}

static void aio_handle(struct kv *k, const struct ukevent *ev)
{
	int fd = (uint32_t)ev->user_data;
	struct conn *c = srv_conn(k->s, fd);
	size_t reply;

	if (ev->ret_flags & KEVENT_RET_BROKEN)
		fail("kevent-aio server: fd %d: %s", fd, strerror(-ev->ret_error));
	if (ev->user_data >> 32 == AIO_SEND_TAG) {
		if (ev->ret_data != TCP_MSG)
			fail("kevent-aio server: sent %llu bytes",
			     (unsigned long long)ev->ret_data);
		k->sending--;
		return;
	}
	if (!ev->ret_data) {
		/* S1: a stream ends once its bytes are in (srv_eof() checks). */
		srv_eof(k->s, c);
		COUNTED(ctl, close(fd));
		return;
	}
	reply = srv_input(k->s, c, aio_bufs + (size_t)fd * k->s->run->rbuf,
			  ev->ret_data);
	if (reply)
		aio_queue(k, KEVENT_AIO_SEND, fd, AIO_SEND_TAG, c->out, reply);
	if (!srv_done(k->s))
		aio_recv(k, fd);
}

static int aio_serve(struct srv *s, const struct tcp_backend *be)
{
	struct kv k = { 0 };
	int i;

	(void)be;
	kv_open(&k, s);
	aio_bufs = aligned_alloc(4096, (size_t)s->max_fd * s->run->rbuf);
	if (!aio_bufs)
		fail("kevent-aio server: malloc");
	for (i = 0; i < s->ninitial; i++)
		aio_recv(&k, s->initial[i]);
	kv_flush(&k);
	srv_begin(s);
	kv_loop(&k, aio_handle);
	return 0;
}

const struct tcp_backend tcp_kevent_aio = {
	.name = "kevent-aio", .scenarios = 1 << TCP_S1 | 1 << TCP_S2,
	.probe = post_probe, .serve = aio_serve,
};

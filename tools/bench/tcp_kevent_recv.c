// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-recv: the kevent server built like the io_uring one (tcp_uring.c).
 *
 *  - an instance with a posted ring (KEVENT_RING_POST);
 *  - one multishot receive per connection (KEVENT_AIO_RECV_MULTI) into
 *    one buffer ring (struct kevent_buf_ring) that all connections share,
 *    1 MiB of run->rbuf-byte buffers as io_uring's: each receive is one
 *    event in the ring, with its bytes and its buffer's id, and the
 *    buffer goes back to the ring once its bytes are checked. Running out
 *    of buffers is an event with -ENOBUFS; the receive is then triggered
 *    (KEVENT_CTL_TRIGGER) in each batch after buffers went back, until
 *    it reports data (kr_stall()).
 *    The end of a stream is an event without KEVENT_RET_MORE, which also
 *    ends the receive: then the connection is closed with close();
 *  - replies as KEVENT_CTL_SEND changes, sent at once by the call; what a
 *    socket does not take is queued as a KEVENT_AIO_SEND whose completion
 *    is one more event (replies are 64 bytes: it should not happen);
 *  - S3: the listener is a KEVENT_TYPE_SOCKET ACCEPT kevent, as in
 *    kevent-post: accept4() as many times as the accept queue's length,
 *    and each new connection's receive is an ADD change of the batch;
 *  - the changes of a batch (receives to start or trigger, replies) go in
 *    the one kevent_submit() that waits for the next events, entered only
 *    when the ring is empty or KEVENT_RING_PENDING is set: the receives
 *    are carried out at delivery, inside that call.
 *
 * System calls: kevent_submit() counts as wait; accept4() and close() as
 * ctl; there is no read() or write().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <kevent/kevent.h>

#include "tcp.h"

#define KR_RING		4096	/* event slots */
#define KR_BATCH	1024	/* changes per kevent_submit() */
#define KR_POOL		(1 << 20)	/* receive buffers, as io_uring's */
#define KR_RECV_TAG	0	/* KEVENT_AIO_ID() tags */
#define KR_SEND_TAG	1

/* Per fd. */
struct kr_fd {
	uint32_t rest;		/* a reply's bytes queued (KEVENT_RET_MORE) */
	bool close;		/* the stream ended meanwhile: close when sent */
	bool stalled;		/* on the stalled list (-ENOBUFS, no data since) */
	int prev, next;		/* that list's links, -1 at its ends */
};

struct kr {
	struct srv *s;
	struct kevent_queue q;		/* the instance and its posted ring */
	unsigned int handled;		/* event slots handled, not given back */
	struct kevent_batch b;		/* the next kevent_submit()'s changes */
	int nsend;			/* of which sends */
	struct kevent_bufs br;		/* the buffer ring... */
	uint32_t nbufs;			/* ...its entries and buffers */
	char *bufs;
	struct kr_fd *fds;		/* indexed by fd */
	int stall_head, stall_tail;	/* receives stopped by -ENOBUFS */
	uint32_t trig_tail;		/* br.tail at the last triggering */
	long long sending;		/* sends queued, not yet completed */
};

/* user_data: the fd, and the connection's generation. */
static uint64_t kr_cookie(struct srv *s, int fd)
{
	return (uint64_t)s->conns[fd].gen << 32 | (uint32_t)fd;
}

static const char *kr_cmd_name(uint32_t cmd)
{
	switch (cmd) {
	case KEVENT_CTL_ADD: return "ADD";
	case KEVENT_CTL_TRIGGER: return "TRIGGER";
	case KEVENT_CTL_SEND: return "SEND";
	}
	return "change";
}

/* One change's result, written back by kevent_submit(). */
static void kr_result(struct kr *k, const struct kevent_change *ch)
{
	const struct ukevent *uk = &ch->ev;
	int fd = (uint32_t)uk->id;

	if (uk->ret_error)
		fail("kevent-recv server: %s of fd %d: %s", kr_cmd_name(ch->cmd),
		     fd, strerror(-uk->ret_error));
	if (ch->cmd != KEVENT_CTL_SEND)
		return;
	if (uk->ret_flags & KEVENT_RET_MORE) {
		/* The rest is a KEVENT_AIO_SEND: its event comes later. */
		if (uk->ret_data >= uk->args[1])
			fail("kevent-recv server: fd %d: %llu of %llu bytes sent, and more to come?",
			     fd, (unsigned long long)uk->ret_data,
			     (unsigned long long)uk->args[1]);
		k->fds[fd].rest = uk->args[1] - uk->ret_data;
		k->sending++;
	} else if (uk->ret_data != uk->args[1]) {
		fail("kevent-recv server: fd %d: sent %llu of %llu bytes",
		     fd, (unsigned long long)uk->ret_data,
		     (unsigned long long)uk->args[1]);
	}
}

/*
 * Give back the buffers and the event slots handled so far, carry out the
 * batch's changes, and have the ring hold at least @min_nr events.
 */
static void kr_submit(struct kr *k, unsigned int min_nr)
{
	unsigned int i;
	int ret;

	kevent_bufs_publish(&k->br);
	kevent_ring_advance(&k->q, k->handled);
	k->handled = 0;
	ret = COUNTED(wait, kevent_batch_submit(&k->q, &k->b, min_nr, NULL));
	if (ret < 0 && ret != -EINTR)
		fail("kevent-recv server: kevent_submit: %s", strerror(-ret));
	for (i = 0; i < k->b.nr; i++)
		kr_result(k, &k->b.changes[i]);
	kevent_batch_reset(&k->b);
	k->nsend = 0;
}

static struct ukevent *kr_change(struct kr *k, unsigned int cmd)
{
	/* A full batch is submitted on its own, without waiting (rare). */
	if (k->b.nr == KR_BATCH)
		kr_submit(k, 0);
	return kevent_batch_add(&k->b, cmd);
}

static void kr_recv(struct kr *k, uint32_t cmd, int fd)
{
	kevent_prep_recv_bufs(kr_change(k, cmd), fd, KR_RECV_TAG, &k->br,
			      kr_cookie(k->s, fd));
}

/* Buffer @bid is ours again: to the ring, published before the next call. */
static void kr_buf_put(struct kr *k, uint32_t bid)
{
	size_t rbuf = k->s->run->rbuf;

	/* As many buffers as entries: the ring is never full. */
	kevent_bufs_add(&k->br, k->bufs + (size_t)bid * rbuf, rbuf, bid);
}

/*
 * The receives that reported -ENOBUFS and no data since. A sender held
 * back by flow control sends nothing that would wake a stopped receive,
 * so each is triggered (KEVENT_CTL_TRIGGER) whenever buffers were given
 * back, until it reports data; a trigger that finds the buffer ring
 * emptied again (by the other receives of the same call) reports
 * -ENOBUFS again, which keeps it on the list. The list is in the order
 * of the stops, so that the receive that stopped first gets buffers
 * first.
 */
static void kr_stall(struct kr *k, int fd)
{
	struct kr_fd *f = &k->fds[fd];

	if (f->stalled)
		return;
	f->stalled = true;
	f->next = -1;
	f->prev = k->stall_tail;
	if (k->stall_tail >= 0)
		k->fds[k->stall_tail].next = fd;
	else
		k->stall_head = fd;
	k->stall_tail = fd;
}

static void kr_unstall(struct kr *k, int fd)
{
	struct kr_fd *f = &k->fds[fd];

	if (!f->stalled)
		return;
	f->stalled = false;
	if (f->prev >= 0)
		k->fds[f->prev].next = f->next;
	else
		k->stall_head = f->next;
	if (f->next >= 0)
		k->fds[f->next].prev = f->prev;
	else
		k->stall_tail = f->prev;
}

/* Before a call: buffers went back since the last time? Trigger. */
static void kr_trigger_stalled(struct kr *k)
{
	int fd;

	if (k->stall_head < 0 || k->br.tail == k->trig_tail)
		return;
	k->trig_tail = k->br.tail;
	for (fd = k->stall_head; fd >= 0; fd = k->fds[fd].next)
		kr_recv(k, KEVENT_CTL_TRIGGER, fd);
}

static void kr_added(void *arg, int fd)
{
	kr_recv(arg, KEVENT_CTL_ADD, fd);
}

static void kr_accept(struct kr *k, uint32_t backlog)
{
	srv_accept_backlog(k->s, backlog, "kevent-recv", kr_added, k);
}

/* The completion of the rest of a reply (KEVENT_RET_MORE at SEND). */
static void kr_sent(struct kr *k, const struct ukevent *ev)
{
	int fd = (uint32_t)ev->user_data;
	struct kr_fd *f;

	if (fd < 0 || fd >= k->s->max_fd || !k->fds[fd].rest ||
	    ev->user_data >> 32 != k->s->conns[fd].gen)
		fail("kevent-recv server: a send's event for fd %d, which has none queued",
		     fd);
	f = &k->fds[fd];
	if (ev->ret_flags & KEVENT_RET_BROKEN)
		fail("kevent-recv server: queued send on fd %d: %s", fd,
		     strerror(-ev->ret_error));
	if (ev->ret_data != f->rest)
		fail("kevent-recv server: queued send on fd %d: %llu of %u bytes",
		     fd, (unsigned long long)ev->ret_data, f->rest);
	f->rest = 0;
	k->sending--;
	if (f->close) {
		f->close = false;
		COUNTED(ctl, close(fd));
	}
}

static void kr_received(struct kr *k, const struct ukevent *ev)
{
	struct srv *s = k->s;
	int fd = (uint32_t)ev->user_data;
	struct conn *c = srv_conn(s, fd);
	uint32_t bytes, bid;
	size_t reply;

	if (ev->user_data >> 32 != c->gen)
		fail("kevent-recv server: fd %d: an event of an earlier connection",
		     fd);
	if (ev->ret_flags & KEVENT_RET_BROKEN)
		fail("kevent-recv server: receive on fd %d: %s", fd,
		     strerror(-ev->ret_error));
	if (ev->ret_error == -ENOBUFS && (ev->ret_flags & KEVENT_RET_MORE)) {
		/* Stopped: triggered once buffers have gone back. */
		kr_stall(k, fd);
		return;
	}
	if (ev->ret_error)
		fail("kevent-recv server: receive on fd %d: %s", fd,
		     strerror(-ev->ret_error));
	kr_unstall(k, fd);
	bytes = KEVENT_AIO_RECV_BYTES(ev->ret_data);
	if (!(ev->ret_flags & KEVENT_RET_MORE)) {
		/* The end of the stream; the receive is gone with it. */
		if (bytes)
			fail("kevent-recv server: fd %d: last event with %u bytes",
			     fd, bytes);
		srv_eof(s, c);
		if (k->fds[fd].rest)
			k->fds[fd].close = true;
		else
			COUNTED(ctl, close(fd));
		return;
	}
	bid = KEVENT_AIO_RECV_BUF(ev->ret_data);
	if (!bytes || bytes > (uint32_t)s->run->rbuf || bid >= k->nbufs)
		fail("kevent-recv server: fd %d: %u bytes in buffer %u", fd,
		     bytes, bid);
	reply = srv_input(s, c, k->bufs + (size_t)bid * s->run->rbuf, bytes);
	kr_buf_put(k, bid);
	if (!reply)
		return;
	/* One reply in flight per connection: its client waits for it. */
	if (k->fds[fd].rest)
		fail("kevent-recv server: fd %d: a reply while the last one is queued",
		     fd);
	kevent_prep_send(kr_change(k, KEVENT_CTL_SEND), fd, KR_SEND_TAG, c->out,
			 reply, kr_cookie(s, fd));
	k->nsend++;
}

static void kr_handle(struct kr *k, const struct ukevent *ev)
{
	if (ev->type == KEVENT_TYPE_SOCKET) {
		if (ev->ret_flags & KEVENT_RET_BROKEN)
			fail("kevent-recv server: listener broken: %d",
			     ev->ret_error);
		kr_accept(k, KEVENT_SOCKET_BACKLOG(ev->ret_data));
	} else if (ev->type == KEVENT_TYPE_AIO && ev->event == KEVENT_AIO_SEND) {
		kr_sent(k, ev);
	} else if (ev->type == KEVENT_TYPE_AIO &&
		   ev->event == KEVENT_AIO_RECV_MULTI) {
		kr_received(k, ev);
	} else {
		fail("kevent-recv server: event of type %u, event %#x",
		     ev->type, ev->event);
	}
}

static void *kr_mmap(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		fail("kevent-recv server: mmap: %s", strerror(errno));
	return p;
}

static void kr_setup(struct kr *k, struct srv *s)
{
	struct kevent_change *chg;
	uint32_t i;
	int err;

	k->s = s;
	err = kevent_queue_init(&k->q, KR_RING, KEVENT_CLOEXEC | KEVENT_RING_POST);
	if (err)
		fail("kevent-recv server: kevent_queue_init: %s", strerror(-err));
	chg = calloc(KR_BATCH, sizeof(*chg));
	k->fds = calloc(s->max_fd, sizeof(*k->fds));
	if (!chg || !k->fds)
		fail("kevent-recv server: set-up: %s", strerror(errno));
	kevent_batch_init(&k->b, chg, KR_BATCH);
	k->stall_head = k->stall_tail = -1;

	/* The buffer ring (zeroed: head and tail 0) and its buffers. */
	for (k->nbufs = 1; k->nbufs * s->run->rbuf < KR_POOL; k->nbufs <<= 1)
		;
	if (k->nbufs > KEVENT_BUF_RING_MAX)
		fail("kevent-recv server: %u buffers, more than a ring holds",
		     k->nbufs);
	err = kevent_bufs_init(&k->br, k->nbufs);
	if (err)
		fail("kevent-recv server: kevent_bufs_init: %s", strerror(-err));
	k->bufs = kr_mmap((size_t)k->nbufs * s->run->rbuf);
	for (i = 0; i < k->nbufs; i++)
		kr_buf_put(k, i);
}

static int kr_serve(struct srv *s, const struct tcp_backend *be)
{
	struct kr k = { 0 };
	int i;

	(void)be;
	kr_setup(&k, s);
	for (i = 0; i < s->ninitial; i++)
		kr_recv(&k, KEVENT_CTL_ADD, s->initial[i]);
	if (s->run->scn == TCP_S3)
		kevent_prep_socket(kr_change(&k, KEVENT_CTL_ADD), s->lfd,
				   KEVENT_SOCKET_ACCEPT, KEVENT_REQ_ET, s->lfd);
	kr_submit(&k, 0);
	srv_begin(s);
	for (;;) {
		bool empty, pending, last;

		/*
		 * Handled in place; a full batch submitted meanwhile gives
		 * back the slots handled before it (kr_submit()).
		 */
		for (; k.handled < kevent_ring_ready(&k.q); k.handled++)
			kr_handle(&k, kevent_ring_event(&k.q, k.handled));
		kevent_ring_advance(&k.q, k.handled);
		k.handled = 0;
		/*
		 * Done: but the last replies must go out (S2), and a reply
		 * is on its way only once its queued rest is sent. Other
		 * changes left (receives to trigger) are dropped.
		 */
		last = srv_done(s);
		if (last && !k.nsend && !k.sending)
			break;
		pending = kevent_ring_flags(&k.q) & KEVENT_RING_PENDING;
		empty = !kevent_ring_ready(&k.q);
		if (!(empty || pending || (last && k.nsend)))
			continue;
		if (!last)
			kr_trigger_stalled(&k);
		kr_submit(&k, empty && (!last || k.sending));
	}
	return 0;
}

/* A kernel with kevent_submit() and multishot receives? */
static bool kr_probe(void)
{
	struct kevent_change ch;
	struct kevent_queue q;
	struct kevent_batch b;
	struct kevent_bufs br;	/* a ring of one entry, never used */
	bool ok;

	if (kevent_queue_init(&q, KR_RING, KEVENT_CLOEXEC | KEVENT_RING_POST))
		return false;
	if (kevent_bufs_init(&br, 1)) {
		kevent_queue_exit(&q);
		return false;
	}
	/* On the instance, which is no socket: -ENOTSOCK, not -EINVAL. */
	kevent_batch_init(&b, &ch, 1);
	kevent_prep_recv_bufs(kevent_batch_add(&b, KEVENT_CTL_ADD), q.fd,
			      KR_RECV_TAG, &br, 0);
	ok = kevent_batch_submit(&q, &b, 0, NULL) >= 0 &&
	     kevent_batch_result(&b, 0) != -EINVAL;
	kevent_queue_exit(&q);
	kevent_bufs_exit(&br);
	return ok;
}

const struct tcp_backend tcp_kevent_recv = {
	.name = "kevent-recv", .scenarios = 7, .probe = kr_probe,
	.serve = kr_serve,
};

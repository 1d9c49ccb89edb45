// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-echo: an echo server whose one event loop waits on kevent
 * (KEVENT_TYPE_POLL, or KEVENT_TYPE_SOCKET), the same server on epoll,
 * one on completions (KEVENT_TYPE_AIO), and one on multishot receives
 * with batched sends (kevent_submit()), each driven by a load generator
 * in the same program.
 *
 *   kevent-echo [-t] [-c CLIENTS] [-n MESSAGES] [-s SIZE] [-b BACKEND]
 *
 *   BACKEND: kevent, kevent-socket, kevent-aio, kevent-recv or epoll
 *   -t   loopback TCP (127.0.0.1) instead of AF_UNIX stream sockets
 *   -c   client processes (default 4), each with its own connection
 *   -n   messages per client (default 200), each echoed before the next
 *   -s   message size in bytes (default 64)
 *   -b   run only this back end (default: all, epoll last)
 *
 * Without -t it serves AF_UNIX and then loopback TCP. Every client checks
 * that each echo is its own message, byte for byte; the program exits 0
 * when all came back intact, 1 otherwise, also when the server saw
 * nothing for 20 s (it is run with the tests).
 * It prints messages per second for each back end, from one short run
 * each: rough, and under QEMU TCG only their ratio means anything (the
 * benchmark is tools/bench/kevent_bench).
 *
 * The server is one process and one loop: a listening socket and every
 * connection are registered with their file descriptor as cookie. It
 * reads what is there and writes it back; when a write is short it waits
 * for POLLOUT instead of POLLIN until the rest is out (KEVENT_CTL_MODIFY,
 * or EPOLL_CTL_MOD). Closing a connection removes its registration. The
 * kevent-aio server instead keeps one receive or send in flight per
 * connection and is told when it has completed (serve_aio()). The
 * kevent-recv server (serve_recv()) has one multishot receive per
 * connection (KEVENT_AIO_RECV_MULTI) into a buffer ring shared by all,
 * and echoes each buffer received with a KEVENT_CTL_SEND change; the
 * changes of a batch go in the kevent_submit() that waits for the next
 * events, on a posted ring.
 *
 * Written on libkevent (tools/lib/kevent):
 *
 *   gcc -Wall -O2 -o kevent-echo tools/examples/kevent-echo.c \
 *       $(pkg-config --cflags --libs libkevent)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kevent/kevent.h>

#define MAX_READY	64
#define BUF_SIZE	65536
#define IDLE_MS		20000	/* the server gives up after this long idle */
#define RUN_LIMIT_S	120	/* the whole program fails after this long */

/* ------------------------------------------------------------------ */
/* The event loop's back ends: register, change, wait                  */
/* ------------------------------------------------------------------ */

struct ready {
	int fd;
	unsigned int revents;	/* poll() bits */
};

struct loop_ops {
	const char *name;
	int (*init)(void);
	/* Watch @fd for @events (POLLIN or POLLOUT); @mod: change, not add. */
	int (*watch)(int efd, int fd, unsigned int events, bool mod);
	/* Wait up to @ms for ready fds; returns how many (0: none), or -1. */
	int (*wait)(int efd, struct ready *r, int max, int ms);
	/* A server of its own, not on readiness (the others are NULL). */
	int (*serve)(int lfd, int clients);
};

/*
 * libkevent returns -errno; the loop takes epoll's convention, -1 and
 * errno. Returns @ret, or -1 with errno set.
 */
static int kev_errno(int ret)
{
	if (ret >= 0)
		return ret;
	errno = -ret;
	return -1;
}

/* One entry on instance @efd: its result, or the call's error. */
static int kev_ctl1(int efd, unsigned int cmd, struct ukevent *uk)
{
	int ret = kevent_ctl(efd, cmd, 1, uk, 0);

	return kev_errno(ret < 0 ? ret : uk->ret_error);
}

static struct __kernel_timespec ms_timeout(long ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000,
	};

	return ts;
}

/* Up to @max events, waiting up to @ms for the first. */
static int kev_get(int efd, struct ukevent *ev, int max, int ms)
{
	struct __kernel_timespec to = ms_timeout(ms);
	struct kevent_wait_args wa;

	kevent_wait_args_set(&wa, &to, NULL);
	return kev_errno(kevent_get_events(efd, 1, max, ev, &wa));
}

static int kev_init(void)
{
	return kev_errno(kevent_init(0, KEVENT_CLOEXEC));
}

static int kev_watch(int efd, int fd, unsigned int events, bool mod)
{
	struct ukevent uk;

	kevent_prep_poll(&uk, fd, events, 0, fd);
	return kev_ctl1(efd, mod ? KEVENT_CTL_MODIFY : KEVENT_CTL_ADD, &uk);
}

static int kev_wait(int efd, struct ready *r, int max, int ms)
{
	struct ukevent ev[MAX_READY];
	int i, n;

	n = kev_get(efd, ev, max < MAX_READY ? max : MAX_READY, ms);
	for (i = 0; i < n; i++) {
		r[i].fd = ev[i].user_data;
		r[i].revents = ev[i].ret_data;
	}
	return n;
}

/*
 * KEVENT_TYPE_SOCKET: the socket's own events. POLLIN asks for RECV and
 * ACCEPT, so one watch call serves the listener (which reports ACCEPT)
 * and the connections (which report RECV).
 */
static int ksock_watch(int efd, int fd, unsigned int events, bool mod)
{
	struct ukevent uk;
	uint32_t ev = 0;

	if (events & POLLIN)
		ev |= KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT;
	if (events & POLLOUT)
		ev |= KEVENT_SOCKET_SEND;
	kevent_prep_socket(&uk, fd, ev, 0, fd);
	return kev_ctl1(efd, mod ? KEVENT_CTL_MODIFY : KEVENT_CTL_ADD, &uk);
}

static int ksock_wait(int efd, struct ready *r, int max, int ms)
{
	struct ukevent ev[MAX_READY];
	uint32_t ready;
	int i, n;

	n = kev_get(efd, ev, max < MAX_READY ? max : MAX_READY, ms);
	for (i = 0; i < n; i++) {
		ready = KEVENT_SOCKET_READY(ev[i].ret_data);
		r[i].fd = ev[i].user_data;
		r[i].revents =
			(ready & (KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT) ?
			 POLLIN : 0) |
			(ready & KEVENT_SOCKET_SEND ? POLLOUT : 0) |
			(ready & KEVENT_SOCKET_HUP ? POLLHUP : 0) |
			(ready & KEVENT_SOCKET_ERROR ? POLLERR : 0);
	}
	return n;
}

static int ep_init(void)
{
	return epoll_create1(EPOLL_CLOEXEC);
}

static int ep_watch(int efd, int fd, unsigned int events, bool mod)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(efd, mod ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev);
}

static int ep_wait(int efd, struct ready *r, int max, int ms)
{
	struct epoll_event ev[MAX_READY];
	int i, n;

	n = epoll_wait(efd, ev, max < MAX_READY ? max : MAX_READY, ms);
	for (i = 0; i < n; i++) {
		r[i].fd = ev[i].data.fd;
		r[i].revents = ev[i].events;	/* EPOLLIN == POLLIN, ... */
	}
	return n;
}

static int serve_aio(int lfd, int clients);
static int serve_recv(int lfd, int clients);

static const struct loop_ops loops[] = {
	{ "kevent", kev_init, kev_watch, kev_wait, NULL },
	{ "kevent-socket", kev_init, ksock_watch, ksock_wait, NULL },
	{ "kevent-aio", NULL, NULL, NULL, serve_aio },
	{ "kevent-recv", NULL, NULL, NULL, serve_recv },
	{ "epoll", ep_init, ep_watch, ep_wait, NULL },
};
#define NR_LOOPS	((int)(sizeof(loops) / sizeof(loops[0])))
#define EPOLL_LOOP	(NR_LOOPS - 1)	/* the reference, last */

/* ------------------------------------------------------------------ */
/* The server                                                          */
/* ------------------------------------------------------------------ */

/* What a connection still has to write back. */
struct conn {
	char *buf;
	size_t off, len;
};

static struct conn *conns;	/* indexed by fd */
static int nr_conns;

static struct conn *conn_get(int fd)
{
	if (fd >= nr_conns) {
		int n = fd + 64;
		struct conn *c = realloc(conns, n * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + nr_conns, 0, (n - nr_conns) * sizeof(*c));
		conns = c;
		nr_conns = n;
	}
	if (!conns[fd].buf && !(conns[fd].buf = malloc(BUF_SIZE)))
		return NULL;
	return &conns[fd];
}

/* Write what is pending; returns 1 if all is out, 0 if not, -1. */
static int conn_flush(int fd, struct conn *c)
{
	while (c->off < c->len) {
		ssize_t n = write(fd, c->buf + c->off, c->len - c->off);

		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		c->off += n;
	}
	c->off = c->len = 0;
	return 1;
}

/* One readiness report for a connection. Returns 1 when it closed. */
static int conn_event(const struct loop_ops *ops, int efd, int fd,
		      unsigned int revents)
{
	struct conn *c = conn_get(fd);
	ssize_t n;
	int done;

	if (!c)
		return -1;
	if (c->len) {			/* waiting for POLLOUT */
		done = conn_flush(fd, c);
		if (done < 0)
			goto close;
		if (done && ops->watch(efd, fd, POLLIN, true))
			return -1;
		return 0;
	}
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	n = read(fd, c->buf, BUF_SIZE);
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		goto close;
	c->len = n;
	done = conn_flush(fd, c);
	if (done < 0)
		goto close;
	if (!done && ops->watch(efd, fd, POLLOUT, true))
		return -1;
	return 0;
close:
	/* Closing the last reference removes the registration. */
	close(fd);
	c->off = c->len = 0;
	return 1;
}

/* Serve until @clients connections have come and gone. */
static int serve(const struct loop_ops *ops, int lfd, int clients)
{
	struct ready r[MAX_READY];
	int efd, closed = 0, i, n, fd;

	efd = ops->init();
	if (efd < 0 || ops->watch(efd, lfd, POLLIN, false)) {
		perror(ops->name);
		return -1;
	}
	while (closed < clients) {
		n = ops->wait(efd, r, MAX_READY, IDLE_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n)
				perror("wait");
			else
				fprintf(stderr, "server: nothing for %d ms\n", IDLE_MS);
			break;
		}
		for (i = 0; i < n; i++) {
			if (r[i].fd != lfd) {
				int ret = conn_event(ops, efd, r[i].fd,
						     r[i].revents);

				if (ret < 0) {
					perror("connection");
					goto out;
				}
				closed += ret;
				continue;
			}
			while ((fd = accept4(lfd, NULL, NULL,
					     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
				if (ops->watch(efd, fd, POLLIN, false)) {
					perror("watch");
					goto out;
				}
			}
			if (errno != EAGAIN) {
				perror("accept");
				goto out;
			}
		}
	}
out:
	close(efd);
	return closed == clients ? 0 : -1;
}

/*
 * The same server on completions (KEVENT_TYPE_AIO): the kernel moves the
 * data, the loop only hears that it has. Each connection has one
 * operation in flight, a receive into its buffer or the send of what that
 * receive got; the listener is watched with KEVENT_TYPE_SOCKET.
 */
static int aio_event(int efd, const struct ukevent *ev)
{
	int fd = ev->user_data;
	struct conn *c = conn_get(fd);
	struct ukevent uk;

	if (!c)
		return -1;
	if ((ev->ret_flags & KEVENT_RET_BROKEN) ||
	    (ev->event == KEVENT_AIO_RECV && !ev->ret_data)) {
		close(fd);		/* nothing is in flight on it */
		return 1;
	}
	if (ev->event == KEVENT_AIO_RECV)
		kevent_prep_send(&uk, fd, 0, c->buf, ev->ret_data, fd);
	else
		kevent_prep_recv(&uk, fd, 0, c->buf, BUF_SIZE, fd);
	return kev_ctl1(efd, KEVENT_CTL_ADD, &uk);
}

static int aio_accept(int efd, int lfd)
{
	struct ukevent uk;
	struct conn *c;
	int fd;

	while ((fd = accept4(lfd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		c = conn_get(fd);
		if (!c)
			return kev_errno(-ENOMEM);
		kevent_prep_recv(&uk, fd, 0, c->buf, BUF_SIZE, fd);
		if (kev_ctl1(efd, KEVENT_CTL_ADD, &uk))
			return -1;
	}
	return errno == EAGAIN ? 0 : -1;
}

static int serve_aio(int lfd, int clients)
{
	struct ukevent uk, ev[MAX_READY];
	int efd, closed = 0, i, n, ret;

	efd = kev_init();
	kevent_prep_socket(&uk, lfd, KEVENT_SOCKET_ACCEPT, 0, lfd);
	if (efd < 0 || kev_ctl1(efd, KEVENT_CTL_ADD, &uk)) {
		perror("kevent-aio");
		return -1;
	}
	while (closed < clients) {
		n = kev_get(efd, ev, MAX_READY, IDLE_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "server: %s\n", n ? strerror(errno) :
				"nothing for a while");
			break;
		}
		for (i = 0; i < n; i++) {
			ret = ev[i].type == KEVENT_TYPE_SOCKET ?
				aio_accept(efd, lfd) : aio_event(efd, &ev[i]);
			if (ret < 0) {
				perror("kevent-aio");
				goto out;
			}
			closed += ret;
		}
	}
out:
	close(efd);
	return closed == clients ? 0 : -1;
}

/*
 * The same server on multishot receives (KEVENT_AIO_RECV_MULTI) and
 * batched sends, through kevent_submit() on a posted ring. Each
 * connection has one receive that takes buffers from a buffer ring
 * shared by all of them; each buffer received is echoed with a
 * KEVENT_CTL_SEND change, in order, one at a time per connection (what
 * a socket cannot take at once is sent by the kernel, and its completion
 * is an event), and goes back to the ring once all of it is sent. The
 * changes of a batch (receives to start or trigger, sends) go in the
 * kevent_submit() that waits for the next events. The end of a stream
 * ends its receive; the connection is closed once its echoes are out.
 */
#define RECV_RING	256	/* event slots */
#define RECV_BUFS	64	/* buffers of the buffer ring, a power of two */
#define RECV_BUF	16384	/* bytes each */
#define RECV_BATCH	256	/* changes per kevent_submit() */
#define RECV_TAG	0	/* KEVENT_AIO_ID() tags */
#define SEND_TAG	1

struct rconn {
	bool open;
	bool eof;		/* its receive ended: close once echoed */
	bool stalled;		/* -ENOBUFS, and no data since */
	bool busy;		/* the first buffer's send is under way */
	int first, last;	/* its buffers to echo, in order; -1: none */
};

struct recv_srv {
	struct kevent_queue q;		/* the instance, its posted ring */
	struct kevent_bufs br;		/* the receives' buffer ring */
	char *bufs;
	uint32_t len[RECV_BUFS];	/* bytes received in each buffer */
	int next[RECV_BUFS];		/* the next buffer of its connection */
	struct rconn *c;	/* indexed by fd */
	int nr_c, nr_stalled, returned, closed;
	bool waited;		/* the last kevent_submit() could sleep */
	/* Two batches: results of one are handled into the other. */
	struct kevent_change chg[2][RECV_BATCH];
	struct kevent_batch b[2];
	int cur;
};

static struct rconn *rconn_get(struct recv_srv *r, int fd)
{
	if (fd >= r->nr_c) {
		int n = fd + 64;
		struct rconn *c = realloc(r->c, n * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + r->nr_c, 0, (n - r->nr_c) * sizeof(*c));
		r->c = c;
		r->nr_c = n;
	}
	return &r->c[fd];
}

static int recv_submit(struct recv_srv *r, unsigned int min_nr);

/* An entry with command @cmd in the current batch, for the caller to fill. */
static struct ukevent *recv_change(struct recv_srv *r, unsigned int cmd)
{
	/* A full batch goes on its own, without waiting. */
	if (r->b[r->cur].nr == RECV_BATCH && recv_submit(r, 0) < 0)
		return NULL;
	return kevent_batch_add(&r->b[r->cur], cmd);
}

/* Back to the buffer ring, given with the next kevent_submit(). */
static void recv_buf_put(struct recv_srv *r, int bid)
{
	/* Never more buffers than entries: it cannot be full. */
	kevent_bufs_add(&r->br, r->bufs + (size_t)bid * RECV_BUF, RECV_BUF,
			bid);
	r->returned++;
}

/* Change @cmd (ADD, TRIGGER) of @fd's receive. */
static int recv_rearm(struct recv_srv *r, unsigned int cmd, int fd)
{
	struct ukevent *uk = recv_change(r, cmd);

	if (!uk)
		return -1;
	kevent_prep_recv_bufs(uk, fd, RECV_TAG, &r->br, fd);
	return 0;
}

/*
 * @fd's next step: send its first buffer if none is under way, or close
 * it once its stream ended and all is echoed.
 */
static int recv_next(struct recv_srv *r, int fd)
{
	struct rconn *c = &r->c[fd];
	struct ukevent *uk;

	if (c->busy)
		return 0;
	if (c->first >= 0) {
		uk = recv_change(r, KEVENT_CTL_SEND);
		if (!uk)
			return -1;
		kevent_prep_send(uk, fd, SEND_TAG,
				 r->bufs + (size_t)c->first * RECV_BUF,
				 r->len[c->first], fd);
		c->busy = true;
		return 0;
	}
	if (c->eof) {
		close(fd);	/* its receive is over: nothing holds it */
		c->open = false;
		r->closed++;
	}
	return 0;
}

/* @fd's first buffer is echoed: back to the ring, and on to the next. */
static int recv_sent(struct recv_srv *r, int fd)
{
	struct rconn *c = &r->c[fd];
	int bid = c->first;

	if (!c->busy || bid < 0) {
		fprintf(stderr, "kevent-recv: fd %d: a send that was not made\n",
			fd);
		return -1;
	}
	c->busy = false;
	c->first = r->next[bid];
	if (c->first < 0)
		c->last = -1;
	recv_buf_put(r, bid);
	return recv_next(r, fd);
}

/* One change's result; a send done whole echoes the next buffer. */
static int recv_result(struct recv_srv *r, const struct kevent_change *ch)
{
	const struct ukevent *uk = &ch->ev;
	int fd = (uint32_t)uk->id;

	if (uk->ret_error) {
		fprintf(stderr, "kevent-recv: change %u on fd %d: %s\n",
			ch->cmd, fd, strerror(-uk->ret_error));
		return -1;
	}
	if (ch->cmd != KEVENT_CTL_SEND || (uk->ret_flags & KEVENT_RET_MORE))
		return 0;	/* a queued rest: its completion will say */
	if (uk->ret_data != uk->args[1]) {
		fprintf(stderr, "kevent-recv: fd %d: %llu of %llu bytes sent\n",
			fd, (unsigned long long)uk->ret_data,
			(unsigned long long)uk->args[1]);
		return -1;
	}
	return recv_sent(r, fd);
}

/*
 * Carry out the batch's changes and wait until the ring holds @min_nr
 * events, or IDLE_MS. Returns what kevent_submit() returned, or -1.
 */
static int recv_submit(struct recv_srv *r, unsigned int min_nr)
{
	struct __kernel_timespec to = ms_timeout(IDLE_MS);
	struct kevent_batch *b = &r->b[r->cur];
	unsigned int i, n;
	int ret;

	/*
	 * A send done whole makes no event: were a connection's next buffer
	 * waiting for it, the call must not sleep before the next send.
	 */
	for (i = 0; min_nr && i < b->nr; i++)
		if (b->changes[i].cmd == KEVENT_CTL_SEND &&
		    r->next[r->c[(uint32_t)b->changes[i].ev.id].first] >= 0)
			min_nr = 0;
	r->waited = min_nr;
	kevent_bufs_publish(&r->br);
	ret = kevent_batch_submit(&r->q, b, min_nr, &to);
	if (ret < 0 && ret != -EINTR) {
		fprintf(stderr, "kevent-recv: kevent_submit: %s\n",
			strerror(-ret));
		return -1;
	}
	/* The results may make changes: into the other batch. */
	n = b->nr;
	r->cur ^= 1;
	kevent_batch_reset(&r->b[r->cur]);
	for (i = 0; i < n; i++)
		if (recv_result(r, &b->changes[i]))
			return -1;
	return ret < 0 ? 0 : ret;
}

static int recv_accept(struct recv_srv *r, int lfd)
{
	struct rconn *c;
	int fd;

	while ((fd = accept4(lfd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		c = rconn_get(r, fd);
		if (!c)
			return -1;
		*c = (struct rconn){ .open = true, .first = -1, .last = -1 };
		if (recv_rearm(r, KEVENT_CTL_ADD, fd))
			return -1;
	}
	return errno == EAGAIN ? 0 : -1;
}

static int recv_event(struct recv_srv *r, const struct ukevent *ev)
{
	int fd = (uint32_t)ev->user_data;
	struct rconn *c = fd < r->nr_c ? &r->c[fd] : NULL;
	uint32_t bytes = KEVENT_AIO_RECV_BYTES(ev->ret_data);
	uint32_t bid = KEVENT_AIO_RECV_BUF(ev->ret_data);

	if (!c || !c->open) {
		fprintf(stderr, "kevent-recv: event for fd %d, not open\n", fd);
		return -1;
	}
	if (ev->ret_flags & KEVENT_RET_BROKEN) {
		fprintf(stderr, "kevent-recv: %s on fd %d: %s\n",
			ev->event == KEVENT_AIO_SEND ? "send" : "receive", fd,
			strerror(-ev->ret_error));
		return -1;
	}
	if (ev->event == KEVENT_AIO_SEND)	/* the rest of a send is out */
		return recv_sent(r, fd);
	if (ev->ret_error == -ENOBUFS) {
		/* Triggered once buffers went back, until it has data. */
		if (!c->stalled)
			r->nr_stalled++;
		c->stalled = true;
		return 0;
	}
	if (c->stalled)
		r->nr_stalled--;
	c->stalled = false;
	if (!(ev->ret_flags & KEVENT_RET_MORE)) {
		c->eof = true;		/* the receive is gone */
		return recv_next(r, fd);
	}
	if (!bytes || bid >= RECV_BUFS) {
		fprintf(stderr, "kevent-recv: fd %d: %u bytes in buffer %u\n",
			fd, bytes, bid);
		return -1;
	}
	/* Echoed in the order received. */
	r->len[bid] = bytes;
	r->next[bid] = -1;
	if (c->last >= 0)
		r->next[c->last] = bid;
	else
		c->first = bid;
	c->last = bid;
	return recv_next(r, fd);
}

/*
 * A receive stopped by -ENOBUFS is triggered each time buffers went
 * back, until it reports data: a trigger that finds the ring emptied
 * again by the others reports nothing, and leaves it stopped.
 */
static int recv_trigger_stalled(struct recv_srv *r)
{
	int fd;

	if (!r->nr_stalled || !r->returned)
		return 0;
	r->returned = 0;
	for (fd = 0; fd < r->nr_c; fd++)
		if (r->c[fd].open && r->c[fd].stalled &&
		    recv_rearm(r, KEVENT_CTL_TRIGGER, fd))
			return -1;
	return 0;
}

static int serve_recv(int lfd, int clients)
{
	struct recv_srv *r = calloc(1, sizeof(*r));
	const struct ukevent *ev;
	int i, ret = -1, err;

	if (!r)
		return -1;
	err = kevent_queue_init(&r->q, RECV_RING,
				KEVENT_CLOEXEC | KEVENT_RING_POST);
	if (err) {
		fprintf(stderr, "kevent-recv: %s\n", strerror(-err));
		free(r);
		return -1;
	}
	err = kevent_bufs_init(&r->br, RECV_BUFS);
	r->bufs = malloc((size_t)RECV_BUFS * RECV_BUF);
	if (err || !r->bufs) {
		fprintf(stderr, "kevent-recv: %s\n", strerror(err ? -err : ENOMEM));
		goto out;
	}
	kevent_batch_init(&r->b[0], r->chg[0], RECV_BATCH);
	kevent_batch_init(&r->b[1], r->chg[1], RECV_BATCH);
	for (i = 0; i < RECV_BUFS; i++)
		recv_buf_put(r, i);
	/* The batch is empty: there is room. */
	kevent_prep_socket(kevent_batch_add(&r->b[r->cur], KEVENT_CTL_ADD), lfd,
			   KEVENT_SOCKET_ACCEPT, KEVENT_REQ_ET, lfd);
	while (r->closed < clients) {
		bool empty, pending;
		int n;

		while ((ev = kevent_ring_peek(&r->q))) {
			if ((ev->type == KEVENT_TYPE_SOCKET ?
			     recv_accept(r, lfd) : recv_event(r, ev)) < 0)
				goto out;
			/* A full batch may have been submitted: slot done. */
			kevent_ring_advance(&r->q, 1);
		}
		if (r->closed == clients)
			break;
		pending = kevent_ring_flags(&r->q) & KEVENT_RING_PENDING;
		empty = !kevent_ring_ready(&r->q);
		if (!empty && !pending)
			continue;
		if (recv_trigger_stalled(r))
			goto out;
		n = recv_submit(r, empty);
		if (n < 0)
			goto out;
		if (!n && r->waited) {
			fprintf(stderr, "server: nothing for %d ms\n", IDLE_MS);
			goto out;
		}
	}
	ret = 0;
out:
	kevent_queue_exit(&r->q);	/* closing it cancels what is left */
	kevent_bufs_exit(&r->br);
	for (i = 0; i < r->nr_c; i++)
		if (r->c[i].open)
			close(i);
	free(r->bufs);
	free(r->c);
	free(r);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The load generator                                                  */
/* ------------------------------------------------------------------ */

struct load {
	bool tcp;
	int clients, messages, size;
};

/* Message @seq of client @id: recognisable bytes, different each time. */
static void fill(char *buf, int size, int id, int seq)
{
	int i;

	for (i = 0; i < size; i++)
		buf[i] = (char)(id * 131 + seq * 7 + i);
}

static int client(const struct sockaddr *addr, socklen_t alen,
		  const struct load *l, int id)
{
	char *out = malloc(l->size), *in = malloc(l->size);
	int fd, seq, one = 1;

	if (!out || !in)
		return 1;
	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, addr, alen)) {
		perror("client: connect");
		return 1;
	}
	if (l->tcp)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (seq = 0; seq < l->messages; seq++) {
		int got = 0;

		fill(out, l->size, id, seq);
		if (write(fd, out, l->size) != l->size) {
			perror("client: write");
			return 1;
		}
		while (got < l->size) {
			ssize_t n = read(fd, in + got, l->size - got);

			if (n <= 0) {
				fprintf(stderr, "client %d: message %d: %s\n", id,
					seq, n ? strerror(errno) : "EOF");
				return 1;
			}
			got += n;
		}
		if (memcmp(in, out, l->size)) {
			fprintf(stderr, "client %d: message %d came back wrong\n",
				id, seq);
			return 1;
		}
	}
	close(fd);
	return 0;
}

/* A listening socket on a fresh address; fills @addr for the clients. */
static int listener(bool tcp, struct sockaddr_storage *addr, socklen_t *alen)
{
	int fd = socket(tcp ? AF_INET : AF_UNIX,
			SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	memset(addr, 0, sizeof(*addr));
	if (tcp) {
		struct sockaddr_in *in = (struct sockaddr_in *)addr;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*alen = sizeof(*in);	/* port 0: any free one */
	} else {
		struct sockaddr_un *un = (struct sockaddr_un *)addr;
		static int serial;

		/* Abstract name: nothing in the file system to clean up. */
		un->sun_family = AF_UNIX;
		*alen = offsetof(struct sockaddr_un, sun_path) + 1 +
			snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1,
				 "kevent-echo-%d-%d", getpid(), serial++);
	}
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, *alen) ||
	    listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)addr, alen)) {
		perror("listener");
		return -1;
	}
	return fd;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The clients of the current run, for on_alarm(). */
static pid_t *volatile client_pids;
static volatile int nr_clients;

/* One server run with its clients; returns messages per second, or -1. */
static double run(const struct loop_ops *ops, const struct load *l)
{
	struct sockaddr_storage addr;
	socklen_t alen;
	int lfd, i, started, status, failed = 0;
	pid_t *pids = calloc(l->clients, sizeof(*pids));
	double t0, t;

	client_pids = pids;
	nr_clients = 0;

	lfd = listener(l->tcp, &addr, &alen);
	if (lfd < 0 || !pids)
		return -1;
	fflush(stdout);
	t0 = now_s();
	for (started = 0; started < l->clients; started++) {
		pids[started] = fork();
		if (pids[started] < 0) {
			perror("fork");
			failed = 1;
			break;
		}
		nr_clients = started + 1;
		if (!pids[started]) {
			close(lfd);
			_exit(client((struct sockaddr *)&addr, alen, l, started));
		}
	}
	if (failed || (ops->serve ? ops->serve(lfd, l->clients)
				  : serve(ops, lfd, l->clients))) {
		/* Clients may be waiting for an echo that will not come. */
		failed = 1;
		for (i = 0; i < started; i++)
			kill(pids[i], SIGKILL);
	}
	t = now_s() - t0;
	for (i = 0; i < started; i++)
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			failed = 1;
	close(lfd);
	nr_clients = 0;
	free(pids);
	return failed ? -1 : l->clients * l->messages / t;
}

/* A stuck run must fail, and say so, rather than hang its caller. */
static void on_alarm(int sig)
{
	static const char msg[] = "echo: FAILED: time limit reached\n";
	int i;

	(void)sig;
	for (i = 0; i < nr_clients; i++)
		if (client_pids[i] > 0)
			kill(client_pids[i], SIGKILL);
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(1);
}

int main(int argc, char **argv)
{
	struct load l = { .clients = 4, .messages = 200, .size = 64 };
	const char *only = NULL;
	int opt, t, b, fail = 0;
	bool tcp_only = false;

	while ((opt = getopt(argc, argv, "tc:n:s:b:")) != -1) {
		switch (opt) {
		case 't': tcp_only = true; break;
		case 'c': l.clients = atoi(optarg); break;
		case 'n': l.messages = atoi(optarg); break;
		case 's': l.size = atoi(optarg); break;
		case 'b': only = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-t] [-c clients] [-n messages] "
				"[-s size] [-b backend]\n"
				"  backend: kevent, kevent-socket, kevent-aio, "
				"kevent-recv or epoll\n", argv[0]);
			return 2;
		}
	}
	if (l.clients < 1 || l.messages < 1 || l.size < 1 || l.size > BUF_SIZE) {
		fprintf(stderr, "%s: bad -c, -n or -s\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(RUN_LIMIT_S);
	printf("echo: %d clients x %d messages x %d bytes (one short run per "
	       "back end: the rates are\n  rough, and under QEMU TCG only "
	       "their ratio means anything; see tools/bench)\n",
	       l.clients, l.messages, l.size);

	for (t = tcp_only; t < 2; t++) {
		double rate[NR_LOOPS] = { 0 };

		l.tcp = t;
		for (b = 0; b < NR_LOOPS; b++) {
			if (only && strcmp(only, loops[b].name))
				continue;
			rate[b] = run(&loops[b], &l);
			if (rate[b] < 0) {
				printf("  %-13s %-7s FAILED\n", loops[b].name,
				       t ? "TCP" : "AF_UNIX");
				fail = 1;
				continue;
			}
			printf("  %-13s %-7s %8.0f messages/s\n", loops[b].name,
			       t ? "TCP" : "AF_UNIX", rate[b]);
		}
		for (b = 0; b < EPOLL_LOOP; b++)
			if (rate[b] > 0 && rate[EPOLL_LOOP] > 0)
				printf("  %s/epoll (%s) = %.2fx\n", loops[b].name,
				       t ? "TCP" : "AF_UNIX",
				       rate[b] / rate[EPOLL_LOOP]);
	}
	printf("echo: %s\n", fail ? "FAILED" : "every message came back intact");
	return fail;
}

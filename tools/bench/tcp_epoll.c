// SPDX-License-Identifier: GPL-2.0
/*
 * The epoll server, as servers are written: epoll_wait(), then for each
 * ready connection read() and write() the reply; accept4() until EAGAIN
 * and one epoll_ctl(ADD) per new connection; close() ends a connection
 * and its registration (no EPOLL_CTL_DEL).
 *
 * Level- or edge-triggered (be->flags: 0 or EPOLLET). Either way a
 * receive shorter than the buffer is taken to have emptied the socket
 * (TCP returns less than asked only when its queue is empty, and new
 * data is a new edge), so a message costs one read(), not a second one
 * to see EAGAIN; every back end follows that rule.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp.h"

#define EP_EVENTS 256

static int ep_add(int ep, int fd, const struct tcp_backend *be)
{
	struct epoll_event ev = { .events = EPOLLIN | be->flags, .data.fd = fd };

	return COUNTED(ctl, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
}

/* Read what @fd has; false when the connection ended and is closed. */
static bool ep_receive(struct srv *s, int fd, char *buf)
{
	struct conn *c = srv_conn(s, fd);
	ssize_t n;

	do {
		n = COUNTED(io, read(fd, buf, s->run->rbuf));
		if (n < 0) {
			if (errno == EAGAIN)
				return true;
			fail("epoll server: read: %s", strerror(errno));
		}
		if (n == 0) {
			srv_eof(s, c);
			COUNTED(ctl, close(fd));
			return false;
		}
		size_t reply = srv_input(s, c, buf, n);

		if (reply && COUNTED(io, write(fd, c->out, reply)) != (ssize_t)reply)
			fail("epoll server: short write");
	} while (n == s->run->rbuf);
	return true;
}

static void ep_accept(struct srv *s, int ep, const struct tcp_backend *be)
{
	for (;;) {
		int fd = COUNTED(ctl, accept4(s->lfd, NULL, NULL,
					      SOCK_NONBLOCK | SOCK_CLOEXEC));

		if (fd < 0) {
			if (errno == EAGAIN)
				return;
			fail("epoll server: accept4: %s", strerror(errno));
		}
		srv_accepted(s, fd);
		if (ep_add(ep, fd, be))
			fail("epoll server: epoll_ctl: %s", strerror(errno));
	}
}

static int ep_serve(struct srv *s, const struct tcp_backend *be)
{
	struct epoll_event ev[EP_EVENTS];
	char *buf = malloc(s->run->rbuf);
	int ep = epoll_create1(EPOLL_CLOEXEC), i;

	if (ep < 0 || !buf)
		fail("epoll server: set-up: %s", strerror(errno));
	for (i = 0; i < s->ninitial; i++)
		if (ep_add(ep, s->initial[i], be))
			fail("epoll server: epoll_ctl: %s", strerror(errno));
	if (s->run->scn == TCP_S3 && ep_add(ep, s->lfd, be))
		fail("epoll server: epoll_ctl: %s", strerror(errno));
	srv_begin(s);
	while (!srv_done(s)) {
		int n = COUNTED(wait, epoll_wait(ep, ev, EP_EVENTS, -1));

		if (n < 0 && errno != EINTR)
			fail("epoll server: epoll_wait: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			if (ev[i].data.fd == s->lfd)
				ep_accept(s, ep, be);
			else
				ep_receive(s, ev[i].data.fd, buf);
		}
	}
	free(buf);
	return 0;
}

const struct tcp_backend tcp_epoll_lt = {
	.name = "epoll-LT", .scenarios = 7, .flags = 0, .serve = ep_serve,
};

const struct tcp_backend tcp_epoll_et = {
	.name = "epoll-ET", .scenarios = 7, .flags = EPOLLET, .serve = ep_serve,
};

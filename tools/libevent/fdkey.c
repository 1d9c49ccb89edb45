// SPDX-License-Identifier: GPL-2.0
/*
 * fdkey: what a KEVENT_TYPE_POLL registration's key, the fd number, means
 * after close() while a dup() keeps the file open, next to epoll, whose
 * key is the (file, fd) pair. Run in the guest by tools/libevent.sh; it
 * prints what it sees and exits 0 (it documents, it does not judge;
 * the kselftests kevent_poll_test and kevent_socket_test judge).
 *
 *   1. pipe A is registered under its read end's number N; dup() keeps
 *      A open; close(N); a new pipe B gets the number N again.
 *   2. ADD of N (pipe B) succeeds and replaces A's registration, which
 *      the number no longer names. epoll: EPOLL_CTL_ADD of B succeeds
 *      too, and A's registration stays, out of reach.
 *   3. MODIFY of N is answered as epoll's EPOLL_CTL_MOD is: ENOENT while
 *      A's registration is the one under N (run here after 2, it finds
 *      B's, which succeeds). Data written to A is not reported any more.
 * Before kevent checked the key's file, 2 failed with EEXIST and 3
 * changed A's registration: the case tools/libevent/reopen.c tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <poll.h>
#include <kevent/kevent.h>

static struct kevent_queue q;

/* A POLL entry for @fd (POLLIN) with command @cmd: its result. */
static int poll_ctl(unsigned int cmd, int fd)
{
	struct ukevent uk;

	kevent_prep_poll(&uk, fd, POLLIN, 0, 0);
	return kevent_queue_ctl1(&q, cmd, &uk);
}

static int ready(int *id)
{
	struct __kernel_timespec ts = { .tv_nsec = 100000000 };
	struct kevent_wait_args wa;
	struct ukevent ev;
	int n;

	kevent_wait_args_set(&wa, &ts, NULL);
	n = kevent_get_events(q.fd, 1, 1, &ev, &wa);

	if (n == 1)
		*id = (int)ev.id;
	return n;
}

int main(void)
{
	int a[2], b[2], keep, ep, ret, id = -1;
	struct epoll_event e = { .events = EPOLLIN };
	char c;

	ret = kevent_queue_init(&q, 0, KEVENT_CLOEXEC);
	if (ret) {
		printf("kevent-fdkey: no kevent: %s\n", strerror(-ret));
		return 0;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (pipe(a) || ep < 0)
		return 1;
	e.data.fd = a[0];
	ret = poll_ctl(KEVENT_CTL_ADD, a[0]);
	printf("kevent-fdkey: ADD fd %d (pipe A): %d\n", a[0], ret);
	epoll_ctl(ep, EPOLL_CTL_ADD, a[0], &e);
	keep = dup(a[0]);
	close(a[0]);
	if (pipe(b) || b[0] != a[0]) {
		printf("kevent-fdkey: pipe B did not get fd %d\n", a[0]);
		return 0;
	}

	ret = poll_ctl(KEVENT_CTL_ADD, b[0]);
	printf("kevent-fdkey: ADD fd %d (now pipe B): %s; epoll ADD: %s\n",
	       b[0], ret ? strerror(-ret) : "ok",
	       epoll_ctl(ep, EPOLL_CTL_ADD, b[0], &e) ? strerror(errno) : "ok");
	epoll_ctl(ep, EPOLL_CTL_DEL, b[0], &e);
	ret = poll_ctl(KEVENT_CTL_MODIFY, b[0]);
	printf("kevent-fdkey: MODIFY fd %d (pipe B): %s; epoll MOD: %s\n",
	       b[0], ret ? strerror(-ret) : "ok",
	       epoll_ctl(ep, EPOLL_CTL_MOD, b[0], &e) ? strerror(errno) : "ok");

	if (write(b[1], "x", 1) != 1)
		return 1;
	ret = ready(&id);
	printf("kevent-fdkey: data in pipe B: %d event(s)\n", ret);
	if (read(b[0], &c, 1) != 1)
		return 1;
	if (write(a[1], "x", 1) != 1)
		return 1;
	ret = ready(&id);
	printf("kevent-fdkey: data in pipe A (fd %d closed, kept as %d): %d event(s), id %d\n",
	       a[0], keep, ret, id);

	ret = poll_ctl(KEVENT_CTL_REMOVE, b[0]);
	ret = ret ? ret : poll_ctl(KEVENT_CTL_ADD, b[0]);
	if (write(b[1], "x", 1) != 1)
		return 1;
	printf("kevent-fdkey: REMOVE + ADD fd %d: %s; data in pipe B: %d event(s)\n",
	       b[0], ret ? strerror(-ret) : "ok", ready(&id));
	return 0;
}

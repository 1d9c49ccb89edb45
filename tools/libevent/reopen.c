// SPDX-License-Identifier: GPL-2.0
/*
 * reopen: an fd number closed and reused between two dispatches, with
 * its old file kept open by a dup(), through libevent. Correct libevent
 * use (event_del() before close()), yet a backend that sends the kernel
 * a MODIFY for "read off, write on" would change the old file's
 * registration if the kernel took the fd number alone for the key
 * (tools/libevent/fdkey.c, case 3): the new socket's EV_WRITE would
 * never come. kevent, as epoll, answers such a MODIFY with ENOENT, which
 * makes the backend ADD.
 *
 * Run by tools/libevent/init.sh with each backend; exits 0 when the
 * write callback ran within a second.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include <event2/event.h>

static int wrote;

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	wrote = (what & EV_WRITE) != 0;
	event_base_loopbreak(arg);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

int main(void)
{
	struct timeval second = { 1, 0 }, now = { 0, 0 };
	struct event_base *base = event_base_new();
	struct event *rd, *wr;
	int p[2], s[2], keep;

	if (!base || pipe(p))
		return 2;
	rd = event_new(base, p[0], EV_READ | EV_PERSIST, on_read, NULL);
	event_add(rd, NULL);
	event_base_loopexit(base, &now);
	event_base_dispatch(base);	/* the kernel has p[0] now */

	keep = dup(p[0]);
	event_del(rd);
	close(p[0]);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) || s[0] != p[0]) {
		printf("libevent-reopen: fd %d not reused\n", p[0]);
		return 2;
	}
	wr = event_new(base, s[0], EV_WRITE, on_write, base);
	event_add(wr, &second);
	event_base_dispatch(base);
	printf("libevent-reopen: %s: fd %d reused, old file kept as %d: %s\n",
	       event_base_get_method(base), s[0], keep,
	       wrote ? "EV_WRITE reported" : "EV_WRITE never came");
	return wrote ? 0 : 1;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * ctlcount: an LD_PRELOAD shim that counts the system calls of libevent's
 * dispatches: the kevent system calls a program makes through syscall()
 * (libkevent makes them so), and epoll_ctl() and epoll_wait(). A dispatch
 * is a call of event_changelist_remove_all_(), which the kevent and epoll
 * backends make once in each (libevent calls it through its PLT, so the
 * shim sees it), whether or not the dispatch enters the kernel: with a
 * posted ring, a dispatch that finds events in the ring makes no system
 * call. Each thread also counts the kevent_ctl() (or epoll_ctl()) calls it
 * makes between two waits (kevent_get_events(), epoll_wait()), and every
 * process counts the socket and file calls a server makes per request
 * (read, write, sendmsg, accept4, close, ...: "io"), those it makes
 * through the C library's functions (nginx's too: recv, send, sendfile,
 * open, fstat, fcntl, shutdown), so that a request's system calls
 * are all counted but for futex() and the C library's own. At exit
 * the process appends one line to the file named by $KEVENT_CTLCOUNT, of
 * names and numbers (ctl0 ... ctl3: waits preceded by 0, 1, 2, 3 or more
 * kevent_ctl() calls; submit: kevent_submit() calls, changes: their
 * entries; kwait: kevent_wait() calls):
 *
 *   dispatches D waits W ctl C entries E add A remove R modify M
 *   ctl0 N ctl1 N ctl2 N ctl3 N submit S changes X kwait K io I
 *
 * (add, remove, modify: epoll's ADD, DEL, MOD.) With $KEVENT_CTLCOUNT_LIVE
 * naming a file, the counters live in a shared mapping of it (ctlcount.h
 * gives the layout), which a load generator reads before and after the
 * interval it measures. A child made by fork() starts from zero, in
 * memory of its own, unless $KEVENT_CTLCOUNT_INHERIT is set: then the
 * children count into their parent's counters (nginx's workers into the
 * mapping the master made). Run by tools/libevent/init.sh for the "-count"
 * backends and for every server of the memcached benchmark, and by
 * tools/nginx/init.sh for every nginx of its benchmark, whatever the
 * event method, so that each pays the same for being counted.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <linux/kevent.h>
#include "ctlcount.h"

static unsigned long own[CC_NR];
/* own[], or the shared mapping of $KEVENT_CTLCOUNT_LIVE */
static unsigned long *cc = own;
static __thread unsigned long since_wait;

#define count(i, n) __atomic_fetch_add(&cc[i], (n), __ATOMIC_RELAXED)

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");

	if (nr == __NR_kevent_ctl) {
		count(CC_CTL, 1);
		count(CC_ENTRIES, (unsigned long)a[2]);
		if (a[1] >= KEVENT_CTL_ADD && a[1] <= KEVENT_CTL_MODIFY)
			count(CC_ADD + a[1] - KEVENT_CTL_ADD, 1);
		since_wait++;
	} else if (nr == __NR_kevent_get_events) {
		count(CC_WAITS, 1);
		count(CC_CTL0 + (since_wait < 3 ? since_wait : 3), 1);
		since_wait = 0;
	} else if (nr == __NR_kevent_submit) {
		const struct kevent_submit *ks = (const void *)a[1];

		count(CC_SUBMIT, 1);
		if (ks)
			count(CC_CHANGES, ks->nr_changes);
	} else if (nr == __NR_kevent_wait) {
		count(CC_KWAIT, 1);
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	static int (*real)(int, int, int, struct epoll_event *);

	if (!real)
		real = (int (*)(int, int, int, struct epoll_event *))
			dlsym(RTLD_NEXT, "epoll_ctl");
	count(CC_CTL, 1);
	count(CC_ENTRIES, 1);
	if (op >= EPOLL_CTL_ADD && op <= EPOLL_CTL_MOD)
		count(CC_ADD + op - EPOLL_CTL_ADD, 1);
	since_wait++;
	return real(epfd, op, fd, ev);
}

int epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
	static int (*real)(int, struct epoll_event *, int, int);

	if (!real)
		real = (int (*)(int, struct epoll_event *, int, int))
			dlsym(RTLD_NEXT, "epoll_wait");
	count(CC_WAITS, 1);
	count(CC_CTL0 + (since_wait < 3 ? since_wait : 3), 1);
	since_wait = 0;
	return real(epfd, evs, max, timeout);
}

/* One call per dispatch of the kevent and epoll backends. */
void event_changelist_remove_all_(void *changelist, void *base)
{
	static void (*real)(void *, void *);

	if (!real)
		real = (void (*)(void *, void *))
			dlsym(RTLD_NEXT, "event_changelist_remove_all_");
	count(CC_DISPATCHES, 1);
	real(changelist, base);
}

/* The calls of a request: each counted, then passed on. */
#define COUNTED(ret, name, params, args)				\
ret name params								\
{									\
	static ret (*real) params;					\
									\
	if (!real)							\
		real = (ret (*) params)dlsym(RTLD_NEXT, #name);		\
	count(CC_IO, 1);						\
	return real args;						\
}

COUNTED(ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n))
COUNTED(ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n))
COUNTED(ssize_t, readv, (int fd, const struct iovec *iov, int n), (fd, iov, n))
COUNTED(ssize_t, writev, (int fd, const struct iovec *iov, int n), (fd, iov, n))
COUNTED(ssize_t, recvfrom, (int fd, void *buf, size_t n, int flags,
			    struct sockaddr *sa, socklen_t *len),
	(fd, buf, n, flags, sa, len))
COUNTED(ssize_t, sendto, (int fd, const void *buf, size_t n, int flags,
			  const struct sockaddr *sa, socklen_t len),
	(fd, buf, n, flags, sa, len))
COUNTED(ssize_t, recvmsg, (int fd, struct msghdr *msg, int flags), (fd, msg, flags))
COUNTED(ssize_t, sendmsg, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags))
COUNTED(int, accept, (int fd, struct sockaddr *sa, socklen_t *len), (fd, sa, len))
COUNTED(int, accept4, (int fd, struct sockaddr *sa, socklen_t *len, int flags),
	(fd, sa, len, flags))
COUNTED(int, close, (int fd), (fd))
COUNTED(int, getpeername, (int fd, struct sockaddr *sa, socklen_t *len), (fd, sa, len))
COUNTED(int, setsockopt, (int fd, int level, int opt, const void *val, socklen_t len),
	(fd, level, opt, val, len))
COUNTED(int, poll, (struct pollfd *fds, nfds_t n, int timeout), (fds, n, timeout))
COUNTED(ssize_t, recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))
COUNTED(ssize_t, send, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags))
COUNTED(ssize_t, sendfile64, (int out, int in, off_t *off, size_t n), (out, in, off, n))
COUNTED(ssize_t, sendfile, (int out, int in, off_t *off, size_t n), (out, in, off, n))
COUNTED(int, fstat64, (int fd, struct stat64 *st), (fd, st))
COUNTED(int, fstat, (int fd, struct stat *st), (fd, st))
COUNTED(int, shutdown, (int fd, int how), (fd, how))

/* The calls whose last argument is optional: it is passed on as found. */
#define COUNTED_VA(name, type, first)					\
int name(first, int a, ...)						\
{									\
	static int (*real)(first, int, type);				\
	va_list ap;							\
	type v;								\
									\
	va_start(ap, a);						\
	v = va_arg(ap, type);						\
	va_end(ap);							\
	if (!real)							\
		real = (int (*)(first, int, type))dlsym(RTLD_NEXT, #name); \
	count(CC_IO, 1);						\
	return real(p0, a, v);						\
}

COUNTED_VA(open64, unsigned int, const char *p0)
COUNTED_VA(open, unsigned int, const char *p0)
COUNTED_VA(fcntl64, long, int p0)

static void reset(void)
{
	cc = own;
	memset(own, 0, sizeof(own));
	since_wait = 0;
}

__attribute__((constructor)) static void init(void)
{
	const char *path = getenv("KEVENT_CTLCOUNT_LIVE");
	void *map;
	int fd;

	if (!getenv("KEVENT_CTLCOUNT_INHERIT"))
		pthread_atfork(NULL, NULL, reset);
	if (!path)
		return;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(own)) < 0) {
		perror(path);
		exit(1);
	}
	map = mmap(NULL, sizeof(own), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror(path);
		exit(1);
	}
	close(fd);
	cc = map;
}

__attribute__((destructor)) static void report(void)
{
	static const char *const names[CC_NR] = CTLCOUNT_NAMES;
	const char *path = getenv("KEVENT_CTLCOUNT");
	char line[400];
	int fd, i, n = 0;

	if (!path || !cc[CC_DISPATCHES])
		return;
	for (i = 0; i < CC_NR; i++)
		n += snprintf(line + n, sizeof(line) - n, "%s%s %lu",
			      i ? " " : "", names[i], cc[i]);
	n += snprintf(line + n, sizeof(line) - n, "\n");
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd >= 0) {
		if (write(fd, line, n) != n)
			n = -1;
		close(fd);
	}
}

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
 * makes between two waits (kevent_get_events(), epoll_wait()). At exit
 * the process appends one line to the file named by $KEVENT_CTLCOUNT, of
 * names and numbers (ctl0 ... ctl3: waits preceded by 0, 1, 2, 3 or more
 * kevent_ctl() calls; submit: kevent_submit() calls, changes: their
 * entries; kwait: kevent_wait() calls):
 *
 *   dispatches D waits W ctl C entries E add A remove R modify M
 *   ctl0 N ctl1 N ctl2 N ctl3 N submit S changes X kwait K
 *
 * (add, remove, modify: epoll's ADD, DEL, MOD.) A child made by fork()
 * starts from zero. Run by tools/libevent/init.sh for the "kevent-count",
 * "kevent-plain-count" and "epoll-count" backends, never in a measured
 * run.
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
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <linux/kevent.h>

static unsigned long dispatches, waits, ctls, entries, bycmd[3], per_wait[4];
static unsigned long submits, changes, kwaits;
static __thread unsigned long since_wait;

#define count(v, n) __atomic_fetch_add(&(v), (n), __ATOMIC_RELAXED)

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
		count(ctls, 1);
		count(entries, (unsigned long)a[2]);
		if (a[1] >= KEVENT_CTL_ADD && a[1] <= KEVENT_CTL_MODIFY)
			count(bycmd[a[1]], 1);
		since_wait++;
	} else if (nr == __NR_kevent_get_events) {
		count(waits, 1);
		count(per_wait[since_wait < 3 ? since_wait : 3], 1);
		since_wait = 0;
	} else if (nr == __NR_kevent_submit) {
		const struct kevent_submit *ks = (const void *)a[1];

		count(submits, 1);
		if (ks)
			count(changes, ks->nr_changes);
	} else if (nr == __NR_kevent_wait) {
		count(kwaits, 1);
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	static int (*real)(int, int, int, struct epoll_event *);

	if (!real)
		real = (int (*)(int, int, int, struct epoll_event *))
			dlsym(RTLD_NEXT, "epoll_ctl");
	count(ctls, 1);
	count(entries, 1);
	if (op >= EPOLL_CTL_ADD && op <= EPOLL_CTL_MOD)
		count(bycmd[op - EPOLL_CTL_ADD], 1);
	since_wait++;
	return real(epfd, op, fd, ev);
}

int epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
	static int (*real)(int, struct epoll_event *, int, int);

	if (!real)
		real = (int (*)(int, struct epoll_event *, int, int))
			dlsym(RTLD_NEXT, "epoll_wait");
	count(waits, 1);
	count(per_wait[since_wait < 3 ? since_wait : 3], 1);
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
	count(dispatches, 1);
	real(changelist, base);
}

static void reset(void)
{
	dispatches = waits = ctls = entries = since_wait = 0;
	submits = changes = kwaits = 0;
	memset(bycmd, 0, sizeof(bycmd));
	memset(per_wait, 0, sizeof(per_wait));
}

__attribute__((constructor)) static void init(void)
{
	pthread_atfork(NULL, NULL, reset);
}

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("KEVENT_CTLCOUNT");
	char line[320];
	int fd, n;

	if (!path || !dispatches)
		return;
	n = snprintf(line, sizeof(line),
		     "dispatches %lu waits %lu ctl %lu entries %lu add %lu remove %lu modify %lu ctl0 %lu ctl1 %lu ctl2 %lu ctl3 %lu submit %lu changes %lu kwait %lu\n",
		     dispatches, waits, ctls, entries, bycmd[KEVENT_CTL_ADD],
		     bycmd[KEVENT_CTL_REMOVE], bycmd[KEVENT_CTL_MODIFY],
		     per_wait[0], per_wait[1], per_wait[2], per_wait[3],
		     submits, changes, kwaits);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd >= 0) {
		if (write(fd, line, n) != n)
			n = -1;
		close(fd);
	}
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The counters of tools/libevent/ctlcount.c, shared with the programs
 * that read them while the counted process runs (memcached-load.c): with
 * $KEVENT_CTLCOUNT_LIVE set to a file, the shim keeps them in a shared
 * mapping of that file, an array of CC_NR unsigned longs in this order.
 */
#ifndef CTLCOUNT_H
#define CTLCOUNT_H

enum ctlcount_counter {
	CC_DISPATCHES,	/* libevent dispatches (kevent and epoll backends) */
	CC_WAITS,	/* kevent_get_events(), epoll_wait() */
	CC_CTL,		/* kevent_ctl(), epoll_ctl() */
	CC_ENTRIES,	/* their entries */
	CC_ADD, CC_REMOVE, CC_MODIFY,	/* entries by command */
	CC_CTL0, CC_CTL1, CC_CTL2, CC_CTL3,	/* waits after 0/1/2/3+ ctl calls */
	CC_SUBMIT,	/* kevent_submit() */
	CC_CHANGES,	/* its changes */
	CC_KWAIT,	/* kevent_wait() */
	CC_IO,		/* read, write, readv, writev, recvfrom, sendto,
			 * recvmsg, sendmsg, accept, accept4, close,
			 * getpeername, setsockopt, poll */
	CC_NR
};

#define CTLCOUNT_NAMES { "dispatches", "waits", "ctl", "entries", "add", \
	"remove", "modify", "ctl0", "ctl1", "ctl2", "ctl3", "submit", \
	"changes", "kwait", "io" }

/* The system calls among them: everything but dispatches and entries. */
static inline unsigned long ctlcount_syscalls(const unsigned long *c)
{
	return c[CC_WAITS] + c[CC_CTL] + c[CC_SUBMIT] + c[CC_KWAIT] + c[CC_IO];
}

#endif

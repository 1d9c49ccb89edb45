/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * kevent.h - tiny header-only user-space library for the kevent system calls.
 *
 * kevent is one file descriptor that reports events of many kinds. The
 * kernel interface is three system calls (see <linux/kevent.h> and
 * Documentation/userspace-api/kevent.rst):
 *
 *   kevent_init()        make an instance, get its file descriptor;
 *   kevent_ctl()         add, remove, modify or trigger an array of kevents,
 *                        or send (KEVENT_CTL_SEND);
 *   kevent_get_events()  wait for ready events and collect them;
 *   kevent_wait()        or have them in a mapped ring (kevent_ring_*());
 *   kevent_submit()      a batch of changes, each with its own command
 *                        (kevent_change_*()), then kevent_wait(), in one
 *                        call.
 *
 * A multishot receive (KEVENT_AIO_RECV_MULTI) takes its buffers from a
 * buffer ring in the application's memory: kevent_buf_ring_add() and
 * kevent_buf_ring_publish() give buffers to it.
 *
 * This header gives them C wrappers that follow the libc convention (-1
 * and errno on failure) plus a few helpers for the common one-entry case.
 * Build with the kernel's installed UAPI headers on the include path, e.g.
 *
 *   make headers_install INSTALL_HDR_PATH=/tmp/khdr
 *   cc -isystem /tmp/khdr/include -I<this dir> app.c
 *
 * Example:
 *
 *   int fd = kevent_init(0, KEVENT_CLOEXEC);
 *   kevent_add_one(fd, KEVENT_TYPE_USER, 42, KEVENT_USER_TRIGGER, 0, cookie);
 *   kevent_trigger_one(fd, 42);                 // from any thread
 *   struct ukevent ev[8];
 *   int n = kevent_get_events(fd, 1, 8, ev, NULL);
 *   // ev[0].user_data == cookie, ev[0].ret_data == 1 (one trigger)
 */
#ifndef KEVENT_LIB_H
#define KEVENT_LIB_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/time_types.h>	/* struct __kernel_timespec */
#include <linux/kevent.h>

/* System call numbers, for C libraries that do not know them yet. */
#if defined(__x86_64__) && !defined(__ILP32__)
# ifndef __NR_kevent_init
#  define __NR_kevent_init		500
# endif
# ifndef __NR_kevent_ctl
#  define __NR_kevent_ctl		501
# endif
# ifndef __NR_kevent_get_events
#  define __NR_kevent_get_events	502
# endif
# ifndef __NR_kevent_wait
#  define __NR_kevent_wait		503
# endif
# ifndef __NR_kevent_submit
#  define __NR_kevent_submit		504
# endif
#elif !defined(__NR_kevent_init)
# error "kevent system call numbers are only known for x86_64; install the kernel headers"
#endif

/*
 * Size of the kernel's sigset_t: what kevent_wait_args.sigsetsize must be.
 * (glibc's sigset_t is 128 bytes; the kernel reads only the first 8.)
 */
#define KEVENT_SIGSET_SIZE	(_NSIG / 8)

/**
 * kevent_wait_args_set() - fill the wait arguments of kevent_get_events(),
 * kevent_wait() and kevent_submit()
 * @wa:      the structure to fill.
 * @timeout: relative; NULL waits for ever, {0, 0} does not wait.
 * @mask:    NULL, or a signal mask to install during the wait (as
 *           ppoll()); it must stay valid until the call returns.
 */
static inline void kevent_wait_args_set(struct kevent_wait_args *wa,
					const struct __kernel_timespec *timeout,
					const sigset_t *mask)
{
	memset(wa, 0, sizeof(*wa));
	if (timeout) {
		wa->timeout = *timeout;
		wa->flags = KEVENT_WAIT_TIMEOUT;
	}
	if (mask) {
		wa->sigmask = (uint64_t)(uintptr_t)mask;
		wa->sigsetsize = KEVENT_SIGSET_SIZE;
	}
}

/**
 * kevent_init() - make a kevent instance
 * @ring_entries: 0, or the slots of a mapped ring (a power of two, see
 *                KEVENT_RING_SIZE() and kevent_wait() in <linux/kevent.h>).
 * @flags:        0 or KEVENT_CLOEXEC.
 *
 * Return: a file descriptor, or -1 with errno set (EINVAL for bad
 * arguments, ENOSYS if the kernel has no kevent).
 */
static inline int kevent_init(unsigned int ring_entries, unsigned int flags)
{
	return syscall(__NR_kevent_init, ring_entries, flags);
}

/**
 * kevent_ctl() - apply a command to an array of kevents
 * @fd:  the instance.
 * @cmd: KEVENT_CTL_ADD, _REMOVE, _MODIFY, _TRIGGER or _SEND.
 * @num: number of entries in @arg (at most 65536).
 * @arg: the entries; each one's ret_error is set to 0 or a negative errno
 *       (and with KEVENT_CTL_SEND, ret_data and ret_flags: see
 *       kevent_submit()).
 * @flags: 0; none are defined yet (EINVAL).
 *
 * Return: the number of entries processed (check each ret_error!), or -1
 * with errno set for an error of the call itself.
 */
static inline int kevent_ctl(int fd, unsigned int cmd, unsigned int num,
			     struct ukevent *arg, unsigned int flags)
{
	return syscall(__NR_kevent_ctl, fd, cmd, num, arg, flags);
}

/**
 * kevent_get_events() - wait for events and collect them
 * @fd:     the instance.
 * @min_nr: wait until this many were delivered (0: never wait).
 * @max_nr: room in @buf, at least 1.
 * @buf:    filled with the delivered events.
 * @args:   NULL (no time limit, no signal mask), or the timeout and signal
 *          mask of the wait (kevent_wait_args_set()).
 *
 * Return: the number of events delivered (possibly fewer than @min_nr
 * after a timeout), or -1 with errno set (EINTR: a signal came first).
 */
static inline int kevent_get_events(int fd, unsigned int min_nr,
				    unsigned int max_nr, struct ukevent *buf,
				    const struct kevent_wait_args *args)
{
	return syscall(__NR_kevent_get_events, fd, min_nr, max_nr, buf,
		       args, args ? sizeof(*args) : 0);
}

/**
 * kevent_set() - fill one entry; all other fields are zeroed
 */
static inline void kevent_set(struct ukevent *uk, uint32_t type, uint64_t id,
			      uint32_t event, uint32_t req_flags,
			      uint64_t user_data)
{
	memset(uk, 0, sizeof(*uk));
	uk->type = type;
	uk->id = id;
	uk->event = event;
	uk->req_flags = req_flags;
	uk->user_data = user_data;
}

/*
 * kevent_ctl_one() - apply @cmd to one entry.
 *
 * Return: the entry's result (0 or a negative errno) or, if the call
 * itself failed, minus its errno. Unlike the other wrappers this one does
 * not use errno: its result is always "0 or -errno".
 */
static inline int kevent_ctl_one(int fd, unsigned int cmd, struct ukevent *uk)
{
	int ret = kevent_ctl(fd, cmd, 1, uk, 0);

	if (ret < 0)
		return -errno;
	return uk->ret_error;
}

/* Register one kevent. Returns 0 or -errno (e.g. -EEXIST). */
static inline int kevent_add_one(int fd, uint32_t type, uint64_t id,
				 uint32_t event, uint32_t req_flags,
				 uint64_t user_data)
{
	struct ukevent uk;

	kevent_set(&uk, type, id, event, req_flags, user_data);
	return kevent_ctl_one(fd, KEVENT_CTL_ADD, &uk);
}

/*
 * Change the event mask, req_flags and user_data of the kevent (type, id).
 * Returns 0 or -errno (e.g. -ENOENT).
 */
static inline int kevent_modify_one(int fd, uint32_t type, uint64_t id,
				    uint32_t event, uint32_t req_flags,
				    uint64_t user_data)
{
	struct ukevent uk;

	kevent_set(&uk, type, id, event, req_flags, user_data);
	return kevent_ctl_one(fd, KEVENT_CTL_MODIFY, &uk);
}

/* Remove the kevent (type, id). Returns 0 or -errno (e.g. -ENOENT). */
static inline int kevent_remove_one(int fd, uint32_t type, uint64_t id)
{
	struct ukevent uk;

	kevent_set(&uk, type, id, 0, 0, 0);
	return kevent_ctl_one(fd, KEVENT_CTL_REMOVE, &uk);
}

/* Fire the KEVENT_TYPE_USER kevent @id. Returns 0 or -errno. */
static inline int kevent_trigger_one(int fd, uint64_t id)
{
	struct ukevent uk;

	kevent_set(&uk, KEVENT_TYPE_USER, id, KEVENT_USER_TRIGGER, 0, 0);
	return kevent_ctl_one(fd, KEVENT_CTL_TRIGGER, &uk);
}

#ifdef KEVENT_TYPE_TIMER
/*
 * Arm the timer @id: first expiry @first_ns from now (or at @first_ns of
 * its clock with KEVENT_TIMER_ABSTIME in @clock_flags), then every
 * @period_ns (0: one-shot). Each event's ret_data is the number of
 * expirations since the previous one. Returns 0 or -errno.
 */
static inline int kevent_timer_add(int fd, uint64_t id, uint64_t first_ns,
				   uint64_t period_ns, uint32_t clock_flags,
				   uint32_t req_flags, uint64_t user_data)
{
	struct ukevent uk;

	kevent_set(&uk, KEVENT_TYPE_TIMER, id, KEVENT_TIMER_EXPIRED,
		   req_flags, user_data);
	uk.args[0] = first_ns;
	uk.args[1] = period_ns;
	uk.arg_flags = clock_flags;
	return kevent_ctl_one(fd, KEVENT_CTL_ADD, &uk);
}
#endif

#ifdef KEVENT_TYPE_SOCKET
/*
 * Watch socket @sock for KEVENT_SOCKET_* @events. A delivered event's
 * ready events are KEVENT_SOCKET_READY(ret_data) and, with ACCEPT, the
 * accept queue's length is KEVENT_SOCKET_BACKLOG(ret_data). Returns 0 or
 * -errno.
 */
static inline int kevent_socket_add(int fd, int sock, uint32_t events,
				    uint32_t req_flags, uint64_t user_data)
{
	return kevent_add_one(fd, KEVENT_TYPE_SOCKET, (uint64_t)sock, events,
			      req_flags, user_data);
}
#endif

#ifdef KEVENT_TYPE_AIO
/*
 * Start one asynchronous operation on socket @sock: KEVENT_AIO_RECV into,
 * or KEVENT_AIO_SEND from, the @len bytes at @buf. @tag tells apart
 * operations in flight on one socket. The completion is delivered once,
 * with the bytes moved in ret_data (or KEVENT_RET_BROKEN and ret_error);
 * the buffer must stay allocated until then. Returns 0 or -errno.
 */
static inline int kevent_aio_add(int fd, uint32_t op, int sock, uint32_t tag,
				 void *buf, uint64_t len, uint64_t user_data)
{
	struct ukevent uk;

	kevent_set(&uk, KEVENT_TYPE_AIO, KEVENT_AIO_ID(sock, tag), op,
		   KEVENT_REQ_ONESHOT, user_data);
	uk.args[0] = (uint64_t)(uintptr_t)buf;
	uk.args[1] = len;
	return kevent_ctl_one(fd, KEVENT_CTL_ADD, &uk);
}

/* Send @count bytes of file @file_fd from @offset on socket @sock. */
static inline int kevent_aio_sendfile(int fd, int sock, int file_fd,
				      uint64_t offset, uint64_t count,
				      uint64_t user_data)
{
	struct ukevent uk;

	kevent_set(&uk, KEVENT_TYPE_AIO, KEVENT_AIO_ID(sock, file_fd),
		   KEVENT_AIO_SENDFILE, KEVENT_REQ_ONESHOT, user_data);
	uk.args[0] = offset;
	uk.args[1] = count;
	return kevent_ctl_one(fd, KEVENT_CTL_ADD, &uk);
}
#endif

/**
 * kevent_wait() - have ready events in an instance's mapped ring
 * @fd:     an instance made with ring_entries.
 * @min_nr: wait until the ring holds this many unconsumed events.
 * @args:   NULL (no time limit, no signal mask), or the timeout and signal
 *          mask of the wait (kevent_wait_args_set()).
 *
 * Return: the events it added (on a posted ring: the events in the ring),
 * or -1 with errno set.
 */
static inline int kevent_wait(int fd, unsigned int min_nr,
			      const struct kevent_wait_args *args)
{
	return syscall(__NR_kevent_wait, fd, min_nr, args,
		       args ? sizeof(*args) : 0);
}

#include <sys/mman.h>

/* Map the ring of an instance made with @entries slots, or NULL. */
static inline struct kevent_ring *kevent_ring_map(int fd, unsigned int entries)
{
	void *p = mmap(NULL, KEVENT_RING_SIZE(entries), PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : (struct kevent_ring *)p;
}

/* Slot @i of a mapped ring; indexes run freely, the mask is applied. */
static inline struct ukevent *kevent_ring_slot(struct kevent_ring *r,
					       uint32_t i)
{
	struct ukevent *ev = (struct ukevent *)((char *)r +
						KEVENT_RING_EVENTS_OFFSET);

	return &ev[i & r->mask];
}

/**
 * kevent_ring_claim() - take one event from a ring shared by threads
 * @r:   the mapped ring.
 * @out: filled with the event.
 *
 * The slot is copied before tail moves past it, and tail moves by a
 * compare-and-swap, so each event goes to exactly one thread: the kernel
 * reuses a slot only once tail has passed it. A thread that finds the
 * ring empty calls kevent_wait().
 *
 * Return: 1 with an event in @out, 0 if the ring is empty.
 */
static inline int kevent_ring_claim(struct kevent_ring *r, struct ukevent *out)
{
	uint32_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

	for (;;) {
		if (t == __atomic_load_n(&r->head, __ATOMIC_ACQUIRE))
			return 0;
		memcpy(out, kevent_ring_slot(r, t), sizeof(*out));
		/* On failure t is reloaded with the tail another thread set. */
		if (__atomic_compare_exchange_n(&r->tail, &t, t + 1, 0,
						__ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			return 1;
	}
}

#ifdef KEVENT_CTL_SEND
/**
 * kevent_submit() - carry out a batch of changes, then wait on the ring
 * @fd: an instance made with ring_entries.
 * @s:  the changes (@s->changes, @s->nr_changes entries of
 *      @s->change_size bytes: kevent_submit_set() fills it) and the wait
 *      (@s->min_nr and @s->wait, as kevent_wait()'s).
 *
 * Each change is carried out with its own command, in order, and its
 * result written back into it: ret_error (check each one!) and, for
 * KEVENT_CTL_SEND, ret_data (bytes sent at once) and ret_flags
 * (KEVENT_RET_MORE: the rest was queued as a KEVENT_AIO_SEND, whose
 * completion comes as an event).
 *
 * Return: what kevent_wait() returns (on a posted ring: the events in the
 * ring), or -1 with errno set.
 */
static inline int kevent_submit(int fd, struct kevent_submit *s)
{
	return syscall(__NR_kevent_submit, fd, s, sizeof(*s));
}

/*
 * kevent_submit_set() - fill @s for @nr changes at @changes, waiting until
 * the ring holds @min_nr events (0: never sleep), for at most @timeout
 * (NULL: no limit), with @mask installed meanwhile (NULL: none).
 */
static inline void kevent_submit_set(struct kevent_submit *s,
				     struct kevent_change *changes,
				     unsigned int nr, unsigned int min_nr,
				     const struct __kernel_timespec *timeout,
				     const sigset_t *mask)
{
	memset(s, 0, sizeof(*s));
	s->changes = (uint64_t)(uintptr_t)changes;
	s->nr_changes = nr;
	s->change_size = sizeof(*changes);
	s->min_nr = min_nr;
	kevent_wait_args_set(&s->wait, timeout, mask);
}

/*
 * kevent_change_set() - fill one change: command @cmd on the entry that
 * kevent_set() makes of the other arguments. Returns the entry, for its
 * args.
 */
static inline struct ukevent *kevent_change_set(struct kevent_change *ch,
						uint32_t cmd, uint32_t type,
						uint64_t id, uint32_t event,
						uint32_t req_flags,
						uint64_t user_data)
{
	ch->cmd = cmd;
	ch->flags = 0;
	kevent_set(&ch->ev, type, id, event, req_flags, user_data);
	return &ch->ev;
}

/*
 * kevent_change_send() - a KEVENT_CTL_SEND change: send the @len bytes at
 * @buf on socket @sock now, what the socket cannot take as a
 * KEVENT_AIO_SEND tagged @tag (only one may be in flight per (sock, tag):
 * the buffer must stay as it is until its completion).
 */
static inline void kevent_change_send(struct kevent_change *ch, int sock,
				      uint32_t tag, const void *buf,
				      uint64_t len, uint64_t user_data)
{
	struct ukevent *uk = kevent_change_set(ch, KEVENT_CTL_SEND,
					       KEVENT_TYPE_AIO,
					       KEVENT_AIO_ID(sock, tag),
					       KEVENT_AIO_SEND,
					       KEVENT_REQ_ONESHOT, user_data);

	uk->args[0] = (uint64_t)(uintptr_t)buf;
	uk->args[1] = len;
}

/*
 * kevent_change_recv_multi() - a KEVENT_AIO_RECV_MULTI change on socket
 * @sock, tagged @tag, taking buffers from @ring of @entries entries: with
 * KEVENT_CTL_ADD, start it; with KEVENT_CTL_TRIGGER, have it receive
 * again after -ENOBUFS, once buffers were given back; with
 * KEVENT_CTL_REMOVE, stop it.
 */
static inline void kevent_change_recv_multi(struct kevent_change *ch,
					    uint32_t cmd, int sock,
					    uint32_t tag,
					    struct kevent_buf_ring *ring,
					    uint32_t entries,
					    uint64_t user_data)
{
	struct ukevent *uk = kevent_change_set(ch, cmd, KEVENT_TYPE_AIO,
					       KEVENT_AIO_ID(sock, tag),
					       KEVENT_AIO_RECV_MULTI,
					       KEVENT_REQ_ONESHOT, user_data);

	uk->args[0] = (uint64_t)(uintptr_t)ring;
	uk->args[1] = entries;
}

/* Bytes of a buffer ring of @entries entries (a power of two). */
static inline size_t kevent_buf_ring_size(uint32_t entries)
{
	return sizeof(struct kevent_buf_ring) +
	       (size_t)entries * sizeof(struct kevent_buf);
}

/**
 * kevent_buf_ring_add() - write one buffer at the tail of a buffer ring
 * @ring: the ring (zeroed memory, 8-byte aligned, when it is made).
 * @mask: its entries - 1.
 * @tail: the caller's copy of the tail, advanced by one; the kernel sees
 *        the buffer once kevent_buf_ring_publish() has stored it.
 * @addr: the buffer...
 * @len:  ...of @len bytes (not 0);
 * @bid:  its id, returned by KEVENT_AIO_RECV_BUF() of the receive's event.
 *
 * A buffer is the application's from the event that reports it until it
 * is added again. With no more buffers than entries, the tail cannot
 * overrun the kernel's head.
 */
static inline void kevent_buf_ring_add(struct kevent_buf_ring *ring,
				       uint32_t mask, uint32_t *tail,
				       void *addr, uint32_t len, uint32_t bid)
{
	struct kevent_buf *b = &ring->bufs[*tail & mask];

	b->addr = (uint64_t)(uintptr_t)addr;
	b->len = len;
	b->bid = bid;
	++*tail;
}

/* Give the buffers added up to @tail to the kernel (a release store). */
static inline void kevent_buf_ring_publish(struct kevent_buf_ring *ring,
					   uint32_t tail)
{
	__atomic_store_n(&ring->tail, tail, __ATOMIC_RELEASE);
}
#endif /* KEVENT_CTL_SEND */

/* A __kernel_timespec of @ms milliseconds, for kevent_get_events(). */
static inline struct __kernel_timespec kevent_ms(long long ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000,
	};

	return ts;
}

#endif /* KEVENT_LIB_H */

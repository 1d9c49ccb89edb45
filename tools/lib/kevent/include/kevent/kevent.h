/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * libkevent: the user-space library of the kevent system calls.
 *
 * kevent is one file descriptor that reports events of many kinds (see
 * <linux/kevent.h> and Documentation/userspace-api/kevent.rst). This
 * library gives a program:
 *
 *   kevent_probe()          is kevent here? Decided without a system call
 *                           by number, so that a kernel that gave those
 *                           numbers to something else is never called;
 *   kevent_init() ...       the system calls, refused with -ENOSYS where
 *                           the probe says no;
 *   struct kevent_queue     an instance and its mapped ring: init, exit,
 *                           and the ring read in place (peek, advance,
 *                           copy out) without a system call;
 *   struct kevent_batch     changes (add, remove, modify, trigger, send)
 *                           collected, carried out with kevent_ctl() or,
 *                           with a wait, in one kevent_submit(), each
 *                           entry's result read afterwards;
 *   kevent_prep_*()         an entry of each type filled in, for a batch
 *                           (kevent_batch_add()) or a single call
 *                           (kevent_queue_ctl1());
 *   struct kevent_bufs      the buffer ring a multishot receive takes its
 *                           buffers from: add, publish, recycle.
 *
 * Every function returns 0 or a count on success and a negative errno on
 * failure, as liburing's do: errno is not used.
 *
 * Memory ordering of the mapped ring (Documentation/userspace-api/
 * kevent.rst, "The ring"): the kernel writes slots and then head, with
 * release semantics; the consumer reads head with acquire semantics
 * before it reads the slots head covers, and stores tail with release
 * semantics after it has read the slots it gives back. kevent_ring_peek()
 * and kevent_ring_advance() do exactly that; between them the slots are
 * the caller's to read. One thread consumes a ring with peek and advance;
 * threads that share one use kevent_ring_claim(), which copies an event
 * out and moves tail by compare-and-swap.
 *
 * The kernel's <linux/kevent.h> comes with the library, as <kevent/uapi.h>:
 *
 *   cc app.c $(pkg-config --cflags --libs libkevent)
 */
#ifndef LIBKEVENT_KEVENT_H
#define LIBKEVENT_KEVENT_H

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/time_types.h>
#include <kevent/uapi.h>	/* <linux/kevent.h> of the kernel it was built for */

#ifdef __cplusplus
extern "C" {
#endif

#define LIBKEVENT_VERSION_MAJOR	0
#define LIBKEVENT_VERSION_MINOR	1
#define LIBKEVENT_VERSION	"0.1"

/* The version of the library the program runs with (the shared one's). */
int kevent_version_major(void);
int kevent_version_minor(void);

/**
 * kevent_probe() - is kevent available?
 *
 * Decided from /proc/sys/user/max_kevents, the per-user limit that comes
 * with kevent, before any system call is made: on a kernel without kevent
 * the system call numbers may belong to other calls. Without /proc
 * mounted the answer is no. The answer is kept for the process's life.
 *
 * Return: 0 if kevent is here, -ENOSYS if not.
 */
int kevent_probe(void);

/*
 * The system calls. Each returns what the kernel returned, a negative
 * errno on failure, and -ENOSYS without a call where kevent_probe() says
 * no. The arguments are those of the system calls (<linux/kevent.h>).
 */
int kevent_init(unsigned int ring_entries, unsigned int flags);
int kevent_ctl(int fd, unsigned int cmd, unsigned int num,
	       struct ukevent *arg, unsigned int flags);
int kevent_get_events(int fd, unsigned int min_nr, unsigned int max_nr,
		      struct ukevent *buf, const struct kevent_wait_args *args);
int kevent_wait(int fd, unsigned int min_nr,
		const struct kevent_wait_args *args);
int kevent_submit(int fd, struct kevent_submit *s);

/*
 * Size of the kernel's sigset_t, what kevent_wait_args.sigsetsize holds
 * (the C library's sigset_t is larger; the kernel reads this much of it).
 */
#define KEVENT_SIGSET_SIZE	(_NSIG / 8)

/**
 * kevent_wait_args_set() - fill the wait arguments of a waiting call
 * @wa:      the structure to fill.
 * @timeout: relative; NULL waits without a limit, {0, 0} does not wait.
 * @sigmask: NULL, or the address of a signal mask (a sigset_t) installed
 *           for the wait, as ppoll() does; valid until the call returns.
 */
void kevent_wait_args_set(struct kevent_wait_args *wa,
			  const struct __kernel_timespec *timeout,
			  const void *sigmask);

/**
 * struct kevent_queue - an instance, with its mapped ring if it has one
 * @fd:      the instance's file descriptor.
 * @flags:   the flags it was made with (KEVENT_CLOEXEC, KEVENT_RING_POST).
 * @entries: the ring's slots, 0 without a ring.
 * @ring:    the mapped ring's header, NULL without a ring.
 * @events:  the ring's slots.
 * @mask:    @entries - 1.
 *
 * The fields are read-only to the program.
 */
struct kevent_queue {
	int			fd;
	unsigned int		flags;
	unsigned int		entries;
	unsigned int		mask;
	struct kevent_ring	*ring;
	struct ukevent		*events;
};

/**
 * kevent_queue_init() - make an instance, and map its ring
 * @q:       filled in.
 * @entries: 0 for no ring, or its slots: a power of two, at most
 *           KEVENT_RING_MAX_ENTRIES.
 * @flags:   KEVENT_CLOEXEC; KEVENT_RING_POST for a ring into which events
 *           are written as they happen (needs @entries).
 *
 * Return: 0, or a negative errno (nothing is left open).
 */
int kevent_queue_init(struct kevent_queue *q, unsigned int entries,
		      unsigned int flags);

/* Unmap the ring and close the instance; @q may then be made again. */
void kevent_queue_exit(struct kevent_queue *q);

/**
 * kevent_ring_map() - map the ring of an instance made elsewhere
 * @q:       filled in; @q->fd is @fd, which stays the caller's to close
 *           (kevent_ring_unmap() does not close it).
 * @fd:      an instance made with a ring of @entries slots.
 * @entries: its slots.
 *
 * Return: 0, or a negative errno (-ENODEV: the instance has no ring).
 */
int kevent_ring_map(struct kevent_queue *q, int fd, unsigned int entries);

/* Unmap the ring mapped by kevent_ring_map() or kevent_queue_init(). */
void kevent_ring_unmap(struct kevent_queue *q);

/**
 * kevent_queue_wait() - wait until the ring holds @min_nr events
 * @q:       a queue with a ring.
 * @min_nr:  0 fills the ring without sleeping.
 * @timeout: NULL waits without a limit.
 *
 * Return: what kevent_wait() returns: on a posted ring, the events in the
 * ring; otherwise the events it moved into the ring.
 */
int kevent_queue_wait(struct kevent_queue *q, unsigned int min_nr,
		      const struct __kernel_timespec *timeout);

/**
 * kevent_ring_ready() - how many events the ring holds for the consumer
 * @q: a queue with a ring.
 *
 * Return: the count; more than @q->entries means that the ring's indexes
 * were overwritten (kevent_ring_copy() reports it as -EINVAL).
 */
static inline unsigned int kevent_ring_ready(const struct kevent_queue *q)
{
	return __atomic_load_n(&q->ring->head, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&q->ring->tail, __ATOMIC_RELAXED);
}

/**
 * kevent_ring_peek() - the oldest event in the ring, read in place
 * @q: a queue with a ring, consumed by this thread only.
 *
 * Return: the event, which stays valid until kevent_ring_advance() gives
 * its slot back, or NULL if the ring is empty.
 */
static inline struct ukevent *kevent_ring_peek(struct kevent_queue *q)
{
	unsigned int tail = __atomic_load_n(&q->ring->tail, __ATOMIC_RELAXED);

	if (tail == __atomic_load_n(&q->ring->head, __ATOMIC_ACQUIRE))
		return NULL;
	return &q->events[tail & q->mask];
}

/**
 * kevent_ring_event() - an unread event, read in place
 * @q: a queue with a ring, consumed by this thread only.
 * @i: which: 0 is the oldest, and @i is below what kevent_ring_ready()
 *     returned.
 *
 * For reading a batch: kevent_ring_ready(), then events 0 to n - 1, then
 * one kevent_ring_advance(q, n).
 */
static inline struct ukevent *kevent_ring_event(struct kevent_queue *q,
						unsigned int i)
{
	unsigned int tail = __atomic_load_n(&q->ring->tail, __ATOMIC_RELAXED);

	return &q->events[(tail + i) & q->mask];
}

/* Give back the @nr oldest slots, read with kevent_ring_peek(). */
static inline void kevent_ring_advance(struct kevent_queue *q, unsigned int nr)
{
	unsigned int tail = __atomic_load_n(&q->ring->tail, __ATOMIC_RELAXED);

	__atomic_store_n(&q->ring->tail, tail + nr, __ATOMIC_RELEASE);
}

/**
 * kevent_ring_copy() - copy events out of the ring and give their slots back
 * @q:   a queue with a ring, consumed by this thread only.
 * @out: room for @max events.
 * @max: at most this many.
 *
 * Return: the number copied (0: the ring is empty), or -EINVAL if the
 * ring's indexes were overwritten.
 */
int kevent_ring_copy(struct kevent_queue *q, struct ukevent *out,
		     unsigned int max);

/**
 * kevent_ring_claim() - take one event from a ring shared by threads
 * @q:   a queue with a ring.
 * @out: filled with the event.
 *
 * The slot is copied before tail moves past it, and tail moves by
 * compare-and-swap, so each event goes to exactly one thread.
 *
 * Return: 1 with an event in @out, 0 if the ring is empty.
 */
int kevent_ring_claim(struct kevent_queue *q, struct ukevent *out);

/*
 * Flags the kernel sets in the ring's header: KEVENT_RING_FULL (events
 * wait in the kernel for free slots), KEVENT_RING_PENDING (on a posted
 * ring, events wait that only kevent_queue_wait() moves in).
 */
static inline unsigned int kevent_ring_flags(const struct kevent_queue *q)
{
	return __atomic_load_n(&q->ring->flags, __ATOMIC_ACQUIRE);
}

/*
 * The result a batch entry has before it is carried out; an entry that
 * still has it afterwards was not reached (the call stopped before it).
 * No command returns it.
 */
#define KEVENT_NOT_REACHED	INT32_MIN

/**
 * struct kevent_batch - changes collected to be carried out together
 * @changes:  the caller's array, of @capacity entries.
 * @nr:       entries collected so far.
 * @capacity: room in @changes.
 *
 * Entries are carried out in order, each with its own command; each
 * one's result is written back into it: kevent_batch_result().
 */
struct kevent_batch {
	struct kevent_change	*changes;
	unsigned int		nr;
	unsigned int		capacity;
};

/* Start an empty batch in @changes, room for @capacity entries. */
void kevent_batch_init(struct kevent_batch *b, struct kevent_change *changes,
		       unsigned int capacity);

/* Empty the batch, to collect again. */
static inline void kevent_batch_reset(struct kevent_batch *b)
{
	b->nr = 0;
}

/**
 * kevent_batch_add() - add an entry with command @cmd
 * @b:   the batch.
 * @cmd: KEVENT_CTL_ADD, _REMOVE, _MODIFY, _TRIGGER or _SEND.
 *
 * Return: the entry, zeroed, for the caller to fill (type, id, event,
 * req_flags, user_data, args), or NULL if the batch is full.
 */
struct ukevent *kevent_batch_add(struct kevent_batch *b, unsigned int cmd);

/**
 * kevent_batch_ctl() - carry the batch out with kevent_ctl()
 * @q: the queue; a ring is not needed.
 * @b: the batch.
 *
 * Consecutive entries with the same command go in one call.
 *
 * Return: the number of entries carried out (their results say how each
 * went), or the negative errno of a call refused as a whole, which stops
 * the batch there: the entries from that one on keep KEVENT_NOT_REACHED.
 */
int kevent_batch_ctl(struct kevent_queue *q, struct kevent_batch *b);

/**
 * kevent_batch_submit() - carry the batch out and wait, in one system call
 * @q:       a queue with a ring.
 * @b:       the batch (may be empty: then only the wait).
 * @min_nr:  wait until the ring holds this many events (0: do not sleep).
 * @timeout: NULL waits without a limit.
 *
 * The changes are made whatever the wait returns; each entry's result
 * says how it went. If one is refused, the call does not sleep (as with
 * @min_nr 0), so that the caller sees it before waiting on it.
 *
 * Return: what kevent_queue_wait() returns, or a negative errno.
 */
int kevent_batch_submit(struct kevent_queue *q, struct kevent_batch *b,
			unsigned int min_nr,
			const struct __kernel_timespec *timeout);

/* Entry @i's result: 0, a negative errno, or KEVENT_NOT_REACHED. */
static inline int kevent_batch_result(const struct kevent_batch *b,
				      unsigned int i)
{
	return b->changes[i].ev.ret_error;
}

/* The entry @i, with what the kernel wrote back (ret_data, ret_flags). */
static inline struct ukevent *kevent_batch_entry(struct kevent_batch *b,
						 unsigned int i)
{
	return &b->changes[i].ev;
}

/*
 * Entries of each type. Each kevent_prep_*() fills every field of @uk:
 * those it does not name are zeroed (the kernel refuses reserved fields
 * that are not). @req_flags: 0 (level-triggered), KEVENT_REQ_ET or
 * KEVENT_REQ_ONESHOT. @user_data comes back in every event.
 */
static inline void kevent_prep(struct ukevent *uk, uint16_t type, uint64_t id,
			       uint32_t event, uint16_t req_flags,
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
 * The key alone, for KEVENT_CTL_REMOVE, and for KEVENT_CTL_TRIGGER of a
 * user event or of a stopped multishot receive.
 */
static inline void kevent_prep_key(struct ukevent *uk, uint16_t type,
				   uint64_t id)
{
	kevent_prep(uk, type, id, 0, 0, 0);
}

/* A user event @id, fired by KEVENT_CTL_TRIGGER; ret_data: the triggers. */
static inline void kevent_prep_user(struct ukevent *uk, uint64_t id,
				    uint16_t req_flags, uint64_t user_data)
{
	kevent_prep(uk, KEVENT_TYPE_USER, id, KEVENT_USER_TRIGGER, req_flags,
		    user_data);
}

/* Readiness of file @fd, in poll() bits (POLLIN, ...); ret_data: revents. */
static inline void kevent_prep_poll(struct ukevent *uk, int fd,
				    uint32_t poll_events, uint16_t req_flags,
				    uint64_t user_data)
{
	kevent_prep(uk, KEVENT_TYPE_POLL, (uint32_t)fd, poll_events, req_flags,
		    user_data);
}

/*
 * Socket @sock's KEVENT_SOCKET_* events; ret_data: KEVENT_SOCKET_READY()
 * and, for KEVENT_SOCKET_ACCEPT, KEVENT_SOCKET_BACKLOG().
 */
static inline void kevent_prep_socket(struct ukevent *uk, int sock,
				      uint32_t events, uint16_t req_flags,
				      uint64_t user_data)
{
	kevent_prep(uk, KEVENT_TYPE_SOCKET, (uint32_t)sock, events, req_flags,
		    user_data);
}

/*
 * Timer @id: first expiry @first_ns from now (or, with
 * KEVENT_TIMER_ABSTIME in @clock_flags, at that time of its clock), then
 * every @period_ns (0: once). @clock_flags: KEVENT_TIMER_ABSTIME,
 * KEVENT_TIMER_REALTIME or KEVENT_TIMER_BOOTTIME (default monotonic).
 * ret_data: the expirations since the last delivery.
 */
static inline void kevent_prep_timer(struct ukevent *uk, uint64_t id,
				     uint64_t first_ns, uint64_t period_ns,
				     uint16_t clock_flags, uint16_t req_flags,
				     uint64_t user_data)
{
	kevent_prep(uk, KEVENT_TYPE_TIMER, id, KEVENT_TIMER_EXPIRED, req_flags,
		    user_data);
	uk->args[0] = first_ns;
	uk->args[1] = period_ns;
	uk->arg_flags = clock_flags;
}

/*
 * Entries created in (KEVENT_INODE_CREATE) or removed from
 * (KEVENT_INODE_REMOVE) the directory open as @fd, or the removal of the
 * file open as @fd; the inode is watched, @fd may be closed.
 */
static inline void kevent_prep_inode(struct ukevent *uk, int fd,
				     uint32_t events, uint16_t req_flags,
				     uint64_t user_data)
{
	kevent_prep(uk, KEVENT_TYPE_INODE, (uint32_t)fd, events, req_flags,
		    user_data);
}

/*
 * Signal @signo, which the collecting threads must block; ret_data:
 * KEVENT_SIGNAL_PID() and KEVENT_SIGNAL_VALUE() or KEVENT_SIGNAL_CODE().
 */
static inline void kevent_prep_signal(struct ukevent *uk, int signo,
				      uint16_t req_flags, uint64_t user_data)
{
	kevent_prep(uk, KEVENT_TYPE_SIGNAL, (uint32_t)signo,
		    KEVENT_SIGNAL_RECEIVED, req_flags, user_data);
}

/*
 * A receive on socket @sock into @buf, of at most @len bytes, done by the
 * kernel when data comes; @tag tells apart operations in flight on one
 * socket. ret_data: the bytes received. @buf stays pinned until then.
 */
static inline void kevent_prep_recv(struct ukevent *uk, int sock, uint32_t tag,
				    void *buf, uint32_t len, uint64_t user_data)
{
	kevent_prep(uk, KEVENT_TYPE_AIO, KEVENT_AIO_ID(sock, tag),
		    KEVENT_AIO_RECV, KEVENT_REQ_ONESHOT, user_data);
	uk->args[0] = (uint64_t)(uintptr_t)buf;
	uk->args[1] = len;
}

/*
 * A send of the @len bytes at @buf on socket @sock: with KEVENT_CTL_ADD,
 * all of it by the kernel, reported when done; with KEVENT_CTL_SEND, what
 * the socket takes at once (ret_data) and the rest by the kernel
 * (KEVENT_RET_MORE in ret_flags).
 */
static inline void kevent_prep_send(struct ukevent *uk, int sock, uint32_t tag,
				    const void *buf, uint32_t len,
				    uint64_t user_data)
{
	kevent_prep(uk, KEVENT_TYPE_AIO, KEVENT_AIO_ID(sock, tag),
		    KEVENT_AIO_SEND, KEVENT_REQ_ONESHOT, user_data);
	uk->args[0] = (uint64_t)(uintptr_t)buf;
	uk->args[1] = len;
}

/*
 * A send of @len bytes of file @file_fd from @offset on socket @sock;
 * @arg_flags: 0, or KEVENT_AIO_PROGRESS for an event per chunk sent.
 */
static inline void kevent_prep_sendfile(struct ukevent *uk, int sock,
					int file_fd, uint64_t offset,
					uint64_t len, uint16_t arg_flags,
					uint64_t user_data)
{
	kevent_prep(uk, KEVENT_TYPE_AIO, KEVENT_AIO_ID(sock, file_fd),
		    KEVENT_AIO_SENDFILE, KEVENT_REQ_ONESHOT, user_data);
	uk->args[0] = offset;
	uk->args[1] = len;
	uk->arg_flags = arg_flags;
}

/*
 * A multishot receive on socket @sock into buffers taken from @ring, of
 * @entries entries: an event per receive, KEVENT_AIO_RECV_BYTES() and
 * KEVENT_AIO_RECV_BUF() in ret_data, KEVENT_RET_MORE while it goes on.
 */
static inline void kevent_prep_recv_multi(struct ukevent *uk, int sock,
					  uint32_t tag,
					  struct kevent_buf_ring *ring,
					  uint32_t entries, uint64_t user_data)
{
	kevent_prep(uk, KEVENT_TYPE_AIO, KEVENT_AIO_ID(sock, tag),
		    KEVENT_AIO_RECV_MULTI, KEVENT_REQ_ONESHOT, user_data);
	uk->args[0] = (uint64_t)(uintptr_t)ring;
	uk->args[1] = entries;
}

/**
 * kevent_queue_ctl1() - carry out one entry
 * @q:   the queue.
 * @cmd: KEVENT_CTL_*.
 * @uk:  the entry; its result is written back into it.
 *
 * Return: the entry's result (0 or a negative errno), or the negative
 * errno of the call.
 */
static inline int kevent_queue_ctl1(struct kevent_queue *q, unsigned int cmd,
				    struct ukevent *uk)
{
	int ret = kevent_ctl(q->fd, cmd, 1, uk, 0);

	return ret < 0 ? ret : uk->ret_error;
}

/**
 * struct kevent_bufs - a buffer ring for multishot receives
 * @ring:    the ring, in memory shared with the kernel.
 * @entries: its entries, a power of two.
 * @mask:    @entries - 1.
 * @tail:    where the next buffer goes; the kernel sees the buffers
 *           before it once kevent_bufs_publish() has stored it.
 *
 * The program gives buffers by adding them at the tail; a receive takes
 * them at the head, and its event names the buffer by its id
 * (KEVENT_AIO_RECV_BUF()). The buffer is the program's from that event
 * until it is added again (kevent_bufs_recycle()). One thread adds.
 */
struct kevent_bufs {
	struct kevent_buf_ring	*ring;
	unsigned int		entries;
	unsigned int		mask;
	unsigned int		tail;
};

/**
 * kevent_bufs_init() - make an empty buffer ring
 * @br:      filled in.
 * @entries: a power of two, at most KEVENT_BUF_RING_MAX.
 *
 * Return: 0, or a negative errno.
 */
int kevent_bufs_init(struct kevent_bufs *br, unsigned int entries);

/* Free the ring; no receive may use it any more. */
void kevent_bufs_exit(struct kevent_bufs *br);

/* Buffers given and not yet taken by a receive. */
static inline unsigned int kevent_bufs_available(const struct kevent_bufs *br)
{
	return br->tail - __atomic_load_n(&br->ring->head, __ATOMIC_ACQUIRE);
}

/**
 * kevent_bufs_add() - write a buffer at the tail, not given yet
 * @br:   the buffer ring.
 * @addr: the buffer...
 * @len:  ...of @len bytes, not 0;
 * @bid:  the id its receive's event reports.
 *
 * Return: 0, or -ENOSPC if the ring holds as many buffers as it has
 * entries (the buffer would overwrite one the kernel has not taken).
 */
static inline int kevent_bufs_add(struct kevent_bufs *br, void *addr,
				  uint32_t len, uint32_t bid)
{
	struct kevent_buf *b;

	if (kevent_bufs_available(br) >= br->entries)
		return -ENOSPC;
	b = &br->ring->bufs[br->tail & br->mask];
	b->addr = (uint64_t)(uintptr_t)addr;
	b->len = len;
	b->bid = bid;
	br->tail++;
	return 0;
}

/* Give the kernel the buffers added so far (a release store of tail). */
static inline void kevent_bufs_publish(struct kevent_bufs *br)
{
	__atomic_store_n(&br->ring->tail, br->tail, __ATOMIC_RELEASE);
}

/*
 * Give back a buffer whose event was read: add and publish. A receive
 * stopped for want of buffers (ret_error -ENOBUFS) resumes at its
 * socket's next wakeup, or at once with a KEVENT_CTL_TRIGGER of its key.
 */
static inline int kevent_bufs_recycle(struct kevent_bufs *br, void *addr,
				      uint32_t len, uint32_t bid)
{
	int ret = kevent_bufs_add(br, addr, len, bid);

	if (!ret)
		kevent_bufs_publish(br);
	return ret;
}

/* A multishot receive on @sock taking its buffers from @br. */
static inline void kevent_prep_recv_bufs(struct ukevent *uk, int sock,
					 uint32_t tag, struct kevent_bufs *br,
					 uint64_t user_data)
{
	kevent_prep_recv_multi(uk, sock, tag, br->ring, br->entries, user_data);
}

#ifdef __cplusplus
}
#endif

#endif /* LIBKEVENT_KEVENT_H */

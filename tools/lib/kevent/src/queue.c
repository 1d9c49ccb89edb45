// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * An instance and its mapped ring: making, mapping, waiting, and reading
 * the ring beyond what the header does inline. The ordering rules are at
 * the top of kevent/kevent.h.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "internal.h"

static void kevent_queue_clear(struct kevent_queue *q, int fd)
{
	memset(q, 0, sizeof(*q));
	q->fd = fd;
}

KEVENT_EXPORT int kevent_ring_map(struct kevent_queue *q, int fd,
				  unsigned int entries)
{
	struct kevent_ring *ring;
	int ret = kevent__available();

	kevent_queue_clear(q, fd);
	if (ret)
		return ret;
	if (!kevent__ring_size_ok(entries, KEVENT_RING_MAX_ENTRIES))
		return -EINVAL;
	ring = mmap(NULL, KEVENT_RING_SIZE(entries), PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED)
		return -errno;
	/* The kernel fills the header at kevent_init(): a ring of another size. */
	if (ring->entries != entries || ring->mask != entries - 1) {
		munmap(ring, KEVENT_RING_SIZE(entries));
		return -EINVAL;
	}
	q->ring = ring;
	q->events = (struct ukevent *)((char *)ring + KEVENT_RING_EVENTS_OFFSET);
	q->entries = entries;
	q->mask = entries - 1;
	return 0;
}

KEVENT_EXPORT void kevent_ring_unmap(struct kevent_queue *q)
{
	if (q->ring)
		munmap(q->ring, KEVENT_RING_SIZE(q->entries));
	q->ring = NULL;
	q->events = NULL;
	q->entries = 0;
	q->mask = 0;
}

KEVENT_EXPORT int kevent_queue_init(struct kevent_queue *q,
				    unsigned int entries, unsigned int flags)
{
	int fd, ret;

	kevent_queue_clear(q, -1);
	fd = kevent_init(entries, flags);
	if (fd < 0)
		return fd;
	if (entries) {
		ret = kevent_ring_map(q, fd, entries);
		if (ret) {
			close(fd);
			kevent_queue_clear(q, -1);
			return ret;
		}
	}
	q->fd = fd;
	q->flags = flags;
	return 0;
}

KEVENT_EXPORT void kevent_queue_exit(struct kevent_queue *q)
{
	kevent_ring_unmap(q);
	if (q->fd >= 0)
		close(q->fd);
	kevent_queue_clear(q, -1);
}

KEVENT_EXPORT int kevent_queue_wait(struct kevent_queue *q, unsigned int min_nr,
				    const struct __kernel_timespec *timeout)
{
	struct kevent_wait_args wa;

	if (!timeout)
		return kevent_wait(q->fd, min_nr, NULL);
	kevent_wait_args_set(&wa, timeout, NULL);
	return kevent_wait(q->fd, min_nr, &wa);
}

KEVENT_EXPORT int kevent_ring_copy(struct kevent_queue *q, struct ukevent *out,
				   unsigned int max)
{
	unsigned int head = __atomic_load_n(&q->ring->head, __ATOMIC_ACQUIRE);
	unsigned int tail = __atomic_load_n(&q->ring->tail, __ATOMIC_RELAXED);
	unsigned int n = head - tail, first;

	if (n > q->entries)
		return -EINVAL;
	if (n > max)
		n = max;
	/* Up to the end of the slots, then from their start. */
	first = q->entries - (tail & q->mask);
	if (first > n)
		first = n;
	memcpy(out, &q->events[tail & q->mask], first * sizeof(*out));
	memcpy(out + first, q->events, (n - first) * sizeof(*out));
	__atomic_store_n(&q->ring->tail, tail + n, __ATOMIC_RELEASE);
	return n;
}

KEVENT_EXPORT int kevent_ring_claim(struct kevent_queue *q, struct ukevent *out)
{
	unsigned int t = __atomic_load_n(&q->ring->tail, __ATOMIC_ACQUIRE);

	for (;;) {
		if (t == __atomic_load_n(&q->ring->head, __ATOMIC_ACQUIRE))
			return 0;
		memcpy(out, &q->events[t & q->mask], sizeof(*out));
		/* On failure t is reloaded with the tail another thread set. */
		if (__atomic_compare_exchange_n(&q->ring->tail, &t, t + 1, 0,
						__ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			return 1;
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * kevent_bench back ends: kevent (KEVENT_TYPE_POLL), epoll, io_uring
 * (multishot IORING_OP_POLL_ADD) and poll(), plus "none", which does no
 * waiting at all and gives the floor every back end sits on. And, for the
 * timers scenario, kevent's own timers (KEVENT_TYPE_TIMER) and timerfds
 * watched by some of the former.
 *
 * io_uring is driven with raw system calls rather than liburing so that
 * every io_uring_enter() is seen by COUNTED(): liburing decides by itself
 * when to enter the kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>

#include "bench.h"

int be_fail(const struct be_state *s, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", s->be->name, what, strerror(errno));
	return -1;
}

/* Report an event that is not "readable" as the error it is. */
static int bad_event(const struct be_state *s, const char *what,
		     unsigned long long cookie, unsigned long long data)
{
	fprintf(stderr, "%s: %s (cookie %llu, 0x%llx)\n", s->be->name, what,
		cookie, data);
	return -1;
}

/* ------------------------------------------------------------------ */
/* kevent, on libkevent                                                */
/* ------------------------------------------------------------------ */

/* be_fail() for libkevent's -errno results. */
static int kev_fail(struct be_state *s, const char *what, int err)
{
	errno = -err;
	return be_fail(s, what);
}

/* Entries one kevent_ctl() takes (KEVENT_CTL_MAX_BATCH in the kernel). */
#define KEVENT_BATCH 65536

/*
 * Add the @num entries @uk to the instance s->fd, in one call per 65536,
 * and check every entry's result.
 */
static int kev_add(struct be_state *s, struct ukevent *uk, int num)
{
	int i, done, ret = 0;

	for (done = 0; done < num && ret >= 0; done += ret) {
		int n = num - done;

		if (n > KEVENT_BATCH)
			n = KEVENT_BATCH;
		ret = COUNTED(ctl, kevent_ctl(s->fd, KEVENT_CTL_ADD, n,
					      uk + done, 0));
		if (ret <= 0)
			ret = kev_fail(s, "kevent_ctl(ADD)", ret ?: -EIO);
	}
	for (i = 0; ret >= 0 && i < num; i++)
		if (uk[i].ret_error)
			ret = kev_fail(s, "kevent_ctl(ADD) entry",
				       uk[i].ret_error);
	return ret < 0 ? -1 : 0;
}

/* Register every fd on the instance s->fd. */
static int kev_register(struct be_state *s)
{
	struct ukevent *uk = calloc(s->nfds, sizeof(*uk));
	int i, ret;

	if (!uk)
		return be_fail(s, "malloc");
	for (i = 0; i < s->nfds; i++)
		kevent_prep_poll(&uk[i], s->fds[i], POLLIN, s->be->flags, i);
	ret = kev_add(s, uk, s->nfds);
	free(uk);
	return ret;
}

/* An instance and the buffer its events are copied into. */
static int kev_open(struct be_state *s)
{
	s->fd = COUNTED(ctl, kevent_init(0, KEVENT_CLOEXEC));
	if (s->fd < 0)
		return kev_fail(s, "kevent_init", s->fd);
	s->buf = malloc(MAX_EVENTS * sizeof(struct ukevent));
	if (!s->buf)
		return be_fail(s, "malloc");
	return 0;
}

static int kev_setup(struct be_state *s)
{
	return kev_open(s) ?: kev_register(s);
}

/*
 * Collect up to @max events into s->buf, waiting for one if @block.
 * Returns how many (0 after a signal), or be_fail()'s result.
 */
/* A wait that does not sleep: a zero timeout. */
static const struct kevent_wait_args kev_nowait = {
	.flags = KEVENT_WAIT_TIMEOUT,
};

static int kev_collect(struct be_state *s, int max, bool block)
{
	int n;

	n = COUNTED(wait, kevent_get_events(s->fd, 1, max, s->buf,
					    block ? NULL : &kev_nowait));
	if (n < 0)
		return n == -EINTR ? 0 : kev_fail(s, "kevent_get_events", n);
	return n;
}

static int kev_wait(struct be_state *s, int *cookies, int max, bool block)
{
	struct ukevent *ev = s->buf;
	int i, n;

	n = kev_collect(s, max, block);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if ((ev[i].ret_flags & KEVENT_RET_BROKEN) ||
		    !(ev[i].ret_data & POLLIN))
			return bad_event(s, "not readable", ev[i].user_data,
					 ev[i].ret_data);
		cookies[i] = ev[i].user_data;
	}
	return n;
}

/*
 * kevent with a mapped ring: kevent_wait() publishes ready events into
 * memory shared with user space instead of copying them into a buffer.
 * It is entered only when the ring is empty.
 */
#define KRING_ENTRIES 1024

static bool kring_probe(const struct backend *be)
{
	int fd = kevent_init(KRING_ENTRIES, KEVENT_CLOEXEC);

	(void)be;
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int kring_open(struct be_state *s, unsigned int flags)
{
	int err;

	s->fd = COUNTED(ctl, kevent_init(KRING_ENTRIES, KEVENT_CLOEXEC | flags));
	if (s->fd < 0)
		return kev_fail(s, "kevent_init(ring)", s->fd);
	err = kevent_ring_map(&s->kq, s->fd, KRING_ENTRIES);
	if (err)
		return kev_fail(s, "kevent_ring_map", err);
	return kev_register(s);
}

static int kring_setup(struct be_state *s)
{
	return kring_open(s, 0);
}

static int kring_wait(struct be_state *s, int *cookies, int max, bool block)
{
	unsigned int n = kevent_ring_ready(&s->kq), i;
	int ret;

	if (!n) {
		ret = COUNTED(wait, kevent_wait(s->fd, block,
						block ? NULL : &kev_nowait));
		if (ret < 0)
			return ret == -EINTR ? 0 : kev_fail(s, "kevent_wait", ret);
		n = kevent_ring_ready(&s->kq);
	}
	if (n > (unsigned int)max)
		n = max;
	for (i = 0; i < n; i++) {
		const struct ukevent *e = kevent_ring_event(&s->kq, i);

		if ((e->ret_flags & KEVENT_RET_BROKEN) || !(e->ret_data & POLLIN))
			return bad_event(s, "not readable", e->user_data,
					 e->ret_data);
		cookies[i] = e->user_data;
	}
	/* The slots are read: give them back. */
	kevent_ring_advance(&s->kq, n);
	return n;
}

static void kring_teardown(struct be_state *s)
{
	kevent_ring_unmap(&s->kq);
}

/*
 * kevent with a posted ring: the pipe's wakeup writes the event into the
 * ring, so kevent_wait() is entered only when the ring is empty, to sleep.
 */
static bool kpost_probe(const struct backend *be)
{
	int fd = kevent_init(KRING_ENTRIES, KEVENT_CLOEXEC | KEVENT_RING_POST);

	(void)be;
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int kpost_setup(struct be_state *s)
{
	return kring_open(s, KEVENT_RING_POST);
}

static int kpost_wait(struct be_state *s, int *cookies, int max, bool block)
{
	return kring_wait(s, cookies, max, block);
}

/* ------------------------------------------------------------------ */
/* epoll                                                               */
/* ------------------------------------------------------------------ */

static int ep_setup(struct be_state *s)
{
	int i;

	s->fd = COUNTED(ctl, epoll_create1(EPOLL_CLOEXEC));
	if (s->fd < 0)
		return be_fail(s, "epoll_create1");
	s->buf = malloc(MAX_EVENTS * sizeof(struct epoll_event));
	if (!s->buf)
		return be_fail(s, "malloc");
	/* One call per fd: epoll has no batch. */
	for (i = 0; i < s->nfds; i++) {
		struct epoll_event ev = {
			.events = EPOLLIN | s->be->flags,
			.data.u32 = i,
		};

		if (COUNTED(ctl, epoll_ctl(s->fd, EPOLL_CTL_ADD, s->fds[i], &ev)))
			return be_fail(s, "epoll_ctl(ADD)");
	}
	return 0;
}

static int ep_wait(struct be_state *s, int *cookies, int max, bool block)
{
	struct epoll_event *ev = s->buf;
	int i, n;

	n = COUNTED(wait, epoll_wait(s->fd, ev, max, block ? -1 : 0));
	if (n < 0)
		return errno == EINTR ? 0 : be_fail(s, "epoll_wait");
	for (i = 0; i < n; i++) {
		if (!(ev[i].events & EPOLLIN))
			return bad_event(s, "not readable", ev[i].data.u32,
					 ev[i].events);
		cookies[i] = ev[i].data.u32;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* io_uring: multishot IORING_OP_POLL_ADD                              */
/* ------------------------------------------------------------------ */

#define IO_URING_FLAGS_DEFER (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)

/* The mapped rings, as io_uring_setup(2) describes them. */
struct uring {
	unsigned int *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	unsigned int sq_entries;
	unsigned int sq_local_tail;	/* SQEs queued by us so far */
	unsigned int to_submit;		/* queued but not yet submitted */
	void *sq_map, *cq_map;
	size_t sq_map_len, cq_map_len, sqes_len;
};

static int uring_enter(struct be_state *s, unsigned int min_complete,
		       unsigned int flags)
{
	unsigned int to_submit = s->ring->to_submit;
	int ret;

	ret = syscall(__NR_io_uring_enter, s->fd, to_submit, min_complete,
		      flags, NULL, 0);
	if (ret < 0 && errno == EINTR && !to_submit)
		return 0;
	if (ret < 0)
		return be_fail(s, "io_uring_enter");
	if ((unsigned int)ret != to_submit) {
		fprintf(stderr, "%s: io_uring_enter submitted %d of %u\n",
			s->be->name, ret, to_submit);
		return -1;
	}
	s->ring->to_submit = 0;
	return 0;
}

static unsigned int roundup_pow2(unsigned int x)
{
	unsigned int p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

static void *map_ring(struct be_state *s, size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, s->fd, off);

	if (p == MAP_FAILED) {
		be_fail(s, "mmap");
		return NULL;
	}
	return p;
}

/* Queue a multishot poll for cookie @i; submits first if the SQ is full. */
static int uring_queue_poll(struct be_state *s, int i)
{
	struct uring *r = s->ring;
	struct io_uring_sqe *sqe;
	unsigned int idx;

	if (r->sq_local_tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) >=
	    r->sq_entries) {
		if (COUNTED(ctl, uring_enter(s, 0, 0)))
			return -1;
	}
	idx = r->sq_local_tail & *r->sq_mask;
	sqe = &r->sqes[idx];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = s->fds[i];
	sqe->poll32_events = POLLIN;
	sqe->len = IORING_POLL_ADD_MULTI;
	sqe->user_data = i;
	r->sq_array[idx] = idx;
	r->sq_local_tail++;
	r->to_submit++;
	__atomic_store_n(r->sq_tail, r->sq_local_tail, __ATOMIC_RELEASE);
	return 0;
}

static int uring_setup(struct be_state *s)
{
	struct io_uring_params p;
	struct uring *r;
	int i;

	memset(&p, 0, sizeof(p));
	p.flags = s->be->flags | IORING_SETUP_CQSIZE;
	/* Room for every fd's completion at once: the CQ never overflows. */
	p.cq_entries = roundup_pow2(s->nfds + MAX_EVENTS);
	if (p.cq_entries > 65536)
		p.cq_entries = 65536;
	s->fd = COUNTED(ctl, syscall(__NR_io_uring_setup,
				     s->nfds < 4096 ? roundup_pow2(s->nfds) : 4096, &p));
	if (s->fd < 0)
		return be_fail(s, "io_uring_setup");
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		fprintf(stderr, "%s: needs IORING_FEAT_SINGLE_MMAP\n", s->be->name);
		return -1;
	}

	r = s->ring = calloc(1, sizeof(*r));
	if (!r)
		return be_fail(s, "malloc");
	r->sq_map_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	r->cq_map_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (r->cq_map_len > r->sq_map_len)
		r->sq_map_len = r->cq_map_len;
	r->sq_map = map_ring(s, r->sq_map_len, IORING_OFF_SQ_RING);
	r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = map_ring(s, r->sqes_len, IORING_OFF_SQES);
	if (!r->sq_map || !r->sqes)
		return -1;
	r->cq_map = r->sq_map;		/* one mapping for both rings */
	r->sq_head = r->sq_map + p.sq_off.head;
	r->sq_tail = r->sq_map + p.sq_off.tail;
	r->sq_mask = r->sq_map + p.sq_off.ring_mask;
	r->sq_array = r->sq_map + p.sq_off.array;
	r->cq_head = r->cq_map + p.cq_off.head;
	r->cq_tail = r->cq_map + p.cq_off.tail;
	r->cq_mask = r->cq_map + p.cq_off.ring_mask;
	r->cqes = r->cq_map + p.cq_off.cqes;
	r->sq_entries = p.sq_entries;
	r->sq_local_tail = *r->sq_tail;

	for (i = 0; i < s->nfds; i++)
		if (uring_queue_poll(s, i))
			return -1;
	if (r->to_submit && COUNTED(ctl, uring_enter(s, 0, 0)))
		return -1;
	return 0;
}

/*
 * Take up to @max completions off the CQ. A multishot poll that ended (no
 * IORING_CQE_F_MORE: the kernel can do that at any time, for example on CQ
 * overflow) is queued again, to be submitted before the caller returns.
 */
static int uring_reap(struct be_state *s, int *cookies, int max)
{
	struct uring *r = s->ring;
	unsigned int head = *r->cq_head;
	unsigned int tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
	int n = 0;

	for (; head != tail && n < max; head++) {
		struct io_uring_cqe *cqe = &r->cqes[head & *r->cq_mask];

		if (cqe->res < 0) {
			errno = -cqe->res;
			return be_fail(s, "poll completion");
		}
		if (!(cqe->res & POLLIN))
			return bad_event(s, "not readable", cqe->user_data,
					 cqe->res);
		cookies[n++] = cqe->user_data;
		if (!(cqe->flags & IORING_CQE_F_MORE) &&
		    uring_queue_poll(s, cqe->user_data))
			return -1;
	}
	__atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
	return n;
}

static int uring_wait(struct be_state *s, int *cookies, int max, bool block)
{
	int n = uring_reap(s, cookies, max);

	/*
	 * Without IORING_SETUP_DEFER_TASKRUN completions are posted by task
	 * work when the task returns to user space, often before we look;
	 * with it, only inside io_uring_enter(GETEVENTS). Either way, enter
	 * only when the CQ is empty.
	 */
	while (n == 0) {
		if (COUNTED(wait, uring_enter(s, block, IORING_ENTER_GETEVENTS)))
			return -1;
		n = uring_reap(s, cookies, max);
		if (!block)
			break;
	}
	/* Re-armed polls must be in place before anything is written. */
	if (n > 0 && s->ring->to_submit && COUNTED(ctl, uring_enter(s, 0, 0)))
		return -1;
	return n;
}

/*
 * Cancel every poll before the ring is closed: closing alone leaves the
 * cancelling to a kernel worker, which would run during the next
 * measurement.
 */
static void uring_teardown(struct be_state *s)
{
	struct io_uring_sync_cancel_reg reg = {
		.flags = IORING_ASYNC_CANCEL_ANY,
		.timeout = { .tv_sec = -1, .tv_nsec = -1 },
	};
	struct uring *r = s->ring;

	if (s->fd >= 0 && syscall(__NR_io_uring_register, s->fd,
				  IORING_REGISTER_SYNC_CANCEL, &reg, 1) < 0 &&
	    errno != ENOENT)
		be_fail(s, "IORING_REGISTER_SYNC_CANCEL");
	if (r) {
		if (r->sqes)
			munmap(r->sqes, r->sqes_len);
		if (r->sq_map)
			munmap(r->sq_map, r->sq_map_len);
		free(r);
		s->ring = NULL;
	}
}

/* ------------------------------------------------------------------ */
/* poll(): the O(N) control                                            */
/* ------------------------------------------------------------------ */

static int poll_setup(struct be_state *s)
{
	struct pollfd *pfd = calloc(s->nfds, sizeof(*pfd));
	int i;

	if (!pfd)
		return be_fail(s, "malloc");
	for (i = 0; i < s->nfds; i++) {
		pfd[i].fd = s->fds[i];
		pfd[i].events = POLLIN;
	}
	s->buf = pfd;
	return 0;
}

static int poll_wait(struct be_state *s, int *cookies, int max, bool block)
{
	struct pollfd *pfd = s->buf;
	int i, n = 0;

	if (COUNTED(wait, poll(pfd, s->nfds, block ? -1 : 0)) < 0)
		return errno == EINTR ? 0 : be_fail(s, "poll");
	/* Finding the ready ones is O(N) in user space too. */
	for (i = 0; i < s->nfds; i++) {
		if (!pfd[i].revents)
			continue;
		if (!(pfd[i].revents & POLLIN))
			return bad_event(s, "not readable", i, pfd[i].revents);
		if (n < max)
			cookies[n++] = i;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* none: what the harness made ready, without asking the kernel        */
/* ------------------------------------------------------------------ */

static int none_setup(struct be_state *s)
{
	(void)s;
	return 0;
}

static int none_wait(struct be_state *s, int *cookies, int max, bool block)
{
	int n = s->nhint < max ? s->nhint : max;

	(void)block;
	memcpy(cookies, s->hint, n * sizeof(*cookies));
	s->hint += n;
	s->nhint -= n;
	return n;
}

/* ------------------------------------------------------------------ */
/* Timers: KEVENT_TYPE_TIMER, and timerfds watched by a poll back end  */
/* ------------------------------------------------------------------ */

/* Does this kernel have timer kevents? */
static bool ktimer_probe(const struct backend *be)
{
	int fd = kevent_init(0, KEVENT_CLOEXEC);
	struct ukevent uk;
	bool ok;

	(void)be;
	if (fd < 0)
		return false;
	kevent_prep_timer(&uk, 0, 1000000000, 0, 0, 0, 0);
	ok = kevent_ctl(fd, KEVENT_CTL_ADD, 1, &uk, 0) == 1 && !uk.ret_error;
	close(fd);
	return ok;
}

/* One kevent per timer, all added by one kevent_ctl(). */
static int ktimer_setup(struct be_state *s)
{
	struct ukevent *uk;
	int i, ret;

	ret = kev_open(s);
	if (ret)
		return ret;
	uk = calloc(s->nfds, sizeof(*uk));
	if (!uk)
		return be_fail(s, "malloc");
	for (i = 0; i < s->nfds; i++) {
		kevent_prep_timer(&uk[i], i, timer_first(s, i), s->period_ns,
				  KEVENT_TIMER_ABSTIME, 0, i);
	}
	ret = kev_add(s, uk, s->nfds);
	free(uk);
	return ret;
}

static int ktimer_wait(struct be_state *s, int *cookies, int max, bool block)
{
	struct ukevent *ev = s->buf;
	int i, n;

	n = kev_collect(s, max, block);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		/* The harness checks the cookie and the count. */
		if ((ev[i].ret_flags & KEVENT_RET_BROKEN) ||
		    ev[i].type != KEVENT_TYPE_TIMER ||
		    ev[i].id != ev[i].user_data)
			return bad_event(s, "not a timer's expiry",
					 ev[i].user_data, ev[i].ret_flags);
		cookies[i] = ev[i].user_data;
		s->data[i] = ev[i].ret_data;
	}
	return n;
}

/* The back end of backends[] called @name, or NULL. */
static const struct backend *find_backend(const char *name)
{
	int i;

	for (i = 0; name && i < nr_backends; i++)
		if (!strcmp(backends[i].name, name))
			return &backends[i];
	return NULL;
}

static struct timespec ns_to_ts(uint64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000,
				  .tv_nsec = ns % 1000000000 };
}

/*
 * One timerfd per timer, registered with the back end s->be->on, then
 * armed: the first expiries should not fall among the registrations,
 * which for a thousand timerfds take many milliseconds under TCG. (An
 * expiry that does loses nothing: the timerfd counts it, and the back
 * end reports it as ready.)
 */
static int tfd_setup(struct be_state *s)
{
	struct be_state *in;
	int i;

	s->tfds = malloc(s->nfds * sizeof(*s->tfds));
	in = s->inner = calloc(1, sizeof(*in));
	if (!s->tfds || !in)
		return be_fail(s, "malloc");
	for (i = 0; i < s->nfds; i++)
		s->tfds[i] = -1;
	for (i = 0; i < s->nfds; i++) {
		s->tfds[i] = COUNTED(ctl, timerfd_create(CLOCK_MONOTONIC,
				TFD_NONBLOCK | TFD_CLOEXEC));
		if (s->tfds[i] < 0)
			return be_fail(s, "timerfd_create");
	}
	*in = (struct be_state){ .be = find_backend(s->be->on),
				 .fds = s->tfds, .nfds = s->nfds, .fd = -1 };
	if (!in->be) {
		fprintf(stderr, "%s: no back end %s\n", s->be->name, s->be->on);
		return -1;
	}
	if (in->be->setup(in))
		return -1;
	for (i = 0; i < s->nfds; i++) {
		struct itimerspec its = {
			.it_value = ns_to_ts(timer_first(s, i)),
			.it_interval = ns_to_ts(s->period_ns),
		};

		if (COUNTED(ctl, timerfd_settime(s->tfds[i], TFD_TIMER_ABSTIME,
						 &its, NULL)))
			return be_fail(s, "timerfd_settime");
	}
	return 0;
}

/* Wait through the inner back end, then read each reported timerfd. */
static int tfd_wait(struct be_state *s, int *cookies, int max, bool block)
{
	int i, n = s->inner->be->wait(s->inner, cookies, max, block);

	for (i = 0; i < n; i++) {
		uint64_t count;
		ssize_t r;

		if (cookies[i] < 0 || cookies[i] >= s->nfds)
			return bad_event(s, "cookie out of range", cookies[i], 0);
		r = COUNTED(io, read(s->tfds[cookies[i]], &count, sizeof(count)));
		if (r < 0 && errno == EAGAIN)
			count = 0;	/* the harness decides if that may be */
		else if (r != sizeof(count))
			return be_fail(s, "read(timerfd)");
		s->data[i] = count;
	}
	return n;
}

static void tfd_teardown(struct be_state *s)
{
	int i;

	if (s->inner) {
		if (s->inner->be)
			be_close(s->inner);
		free(s->inner);
		s->inner = NULL;
	}
	for (i = 0; s->tfds && i < s->nfds; i++)
		if (s->tfds[i] >= 0)
			close(s->tfds[i]);
	free(s->tfds);
	s->tfds = NULL;
}

/* ------------------------------------------------------------------ */

void be_close(struct be_state *s)
{
	if (s->be->teardown)
		s->be->teardown(s);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->buf);
	s->buf = NULL;
}

#define BE(n, b, f, pfx, ...) { .name = n, .base = b, .flags = f, \
	.setup = pfx##_setup, .wait = pfx##_wait, __VA_ARGS__ }

/*
 * In the order of the tables. The harness takes each row's ratio to the
 * row named in .base. io_uring's multishot poll posts one completion per
 * wakeup, so it is compared with edge-triggered epoll. "-dt": with
 * IORING_SETUP_DEFER_TASKRUN (and SINGLE_ISSUER, which it needs).
 * kevent-ring: edge-triggered, like kevent-ET, but through the ring.
 * kevent-post: the same through a posted ring (KEVENT_RING_POST).
 */
const struct backend backends[] = {
	BE("epoll-LT",    NULL,       0,                    ep),
	BE("epoll-ET",    NULL,       EPOLLET,              ep),
	BE("kevent-LT",   "epoll-LT", 0,                    kev),
	BE("kevent-ET",   "epoll-ET", KEVENT_REQ_ET,        kev),
	BE("kevent-ring", "epoll-ET", KEVENT_REQ_ET,        kring,
	   .probe = kring_probe, .teardown = kring_teardown),
	BE("kevent-post", "epoll-ET", KEVENT_REQ_ET,        kpost,
	   .probe = kpost_probe, .teardown = kring_teardown),
	BE("io_uring",    "epoll-ET", 0,                    uring,
	   .teardown = uring_teardown),
	BE("io_uring-dt", "epoll-ET", IO_URING_FLAGS_DEFER, uring,
	   .teardown = uring_teardown),
	BE("poll",        "epoll-LT", 0,                    poll),
	BE("none",        "epoll-LT", 0,                    none),
};
const int nr_backends = sizeof(backends) / sizeof(backends[0]);

/*
 * The timers scenario, in the order of its table; each row's ratio is
 * taken to timerfd+epoll, the usual way. timerfd+kevent tells apart what
 * the timer source itself gains from what kevent's delivery does.
 * io_uring's own multishot IORING_OP_TIMEOUT is not here: it re-arms
 * itself, relative to when its completion was processed, and posts one
 * completion per firing without a count, so its expirations drift and
 * cannot be checked against the time (and its first expiry cannot be
 * set); a timerfd watched by a multishot poll is the io_uring way to
 * have periodic timers that count.
 */
const struct backend timer_backends[] = {
	BE("timerfd+epoll",    NULL,            0,              tfd,
	   .on = "epoll-LT", .teardown = tfd_teardown),
	BE("kevent-timer",     "timerfd+epoll", 0,              ktimer,
	   .on = "kevent-LT", .probe = ktimer_probe),
	BE("timerfd+kevent",   "timerfd+epoll", 0,              tfd,
	   .on = "kevent-LT", .teardown = tfd_teardown),
	BE("timerfd+io_uring", "timerfd+epoll", TIMER_EMPTY_OK, tfd,
	   .on = "io_uring", .teardown = tfd_teardown),
};
const int nr_timer_backends = sizeof(timer_backends) /
			      sizeof(timer_backends[0]);

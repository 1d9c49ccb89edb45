// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * libkevent's first test: the probe, a queue with and without a ring,
 * batches carried out by kevent_ctl() and by kevent_submit() with each
 * entry's result, the ring read in place, copied out across its end and
 * claimed, and the errors of bad input.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <kevent/kevent.h>
#include "ktest.h"

/* An ADD of user event @id, then a TRIGGER of it, into @b. */
static void add_and_trigger(struct kevent_batch *b, uint64_t id)
{
	struct ukevent *uk = kevent_batch_add(b, KEVENT_CTL_ADD);

	uk->type = KEVENT_TYPE_USER;
	uk->id = id;
	uk->event = KEVENT_USER_TRIGGER;
	uk->user_data = id * 10;
	uk = kevent_batch_add(b, KEVENT_CTL_TRIGGER);
	uk->type = KEVENT_TYPE_USER;
	uk->id = id;
}

static void test_probe(void)
{
	REQUIRE(kevent_probe() == 0, "kevent_probe: kevent is here");
	CHECK(kevent_probe() == 0, "kevent_probe: the same answer again");
	CHECK(kevent_version_major() == LIBKEVENT_VERSION_MAJOR &&
	      kevent_version_minor() == LIBKEVENT_VERSION_MINOR,
	      "the library's version is the header's");
}

/* No ring: the batch goes by kevent_ctl(), events by kevent_get_events(). */
static void test_batch_ctl(void)
{
	struct kevent_change changes[4];
	struct kevent_queue q;
	struct kevent_batch b;
	struct ukevent ev[4], *uk;
	int ret;

	REQUIRE(kevent_queue_init(&q, 0, KEVENT_CLOEXEC) == 0,
		"queue without a ring");
	CHECK(q.fd >= 0 && !q.ring && !q.entries, "no ring mapped");
	kevent_batch_init(&b, changes, 4);
	add_and_trigger(&b, 1);
	uk = kevent_batch_add(&b, KEVENT_CTL_REMOVE);
	uk->type = KEVENT_TYPE_USER;
	uk->id = 99;
	uk = kevent_batch_add(&b, KEVENT_CTL_ADD);
	uk->type = 0x7fff;			/* no such type */
	uk->id = 2;
	CHECK(!kevent_batch_add(&b, KEVENT_CTL_ADD), "a full batch adds nothing");

	ret = kevent_batch_ctl(&q, &b);
	CHECK(ret == 4, "kevent_batch_ctl carried out 4 entries (%d)", ret);
	CHECK(kevent_batch_result(&b, 0) == 0, "ADD: 0");
	CHECK(kevent_batch_result(&b, 1) == 0, "TRIGGER: 0");
	CHECK(kevent_batch_result(&b, 2) == -ENOENT,
	      "REMOVE of nothing: -ENOENT (%d)", kevent_batch_result(&b, 2));
	CHECK(kevent_batch_result(&b, 3) == -EINVAL,
	      "ADD of no type: -EINVAL (%d)", kevent_batch_result(&b, 3));

	ret = kevent_get_events(q.fd, 1, 4, ev, NULL);
	CHECK(ret == 1 && ev[0].id == 1 && ev[0].user_data == 10 &&
	      ev[0].ret_data == 1, "the triggered event comes (%d)", ret);

	/* A call refused as a whole: every entry is left not reached. */
	kevent_batch_reset(&b);
	add_and_trigger(&b, 3);
	close(q.fd);
	ret = kevent_batch_ctl(&q, &b);
	CHECK(ret == -EBADF, "a closed instance: -EBADF (%d)", ret);
	CHECK(kevent_batch_result(&b, 0) == KEVENT_NOT_REACHED &&
	      kevent_batch_result(&b, 1) == KEVENT_NOT_REACHED,
	      "its entries are not reached");
	q.fd = -1;
	kevent_queue_exit(&q);
}

/* A posted ring: submit and wait in one call, read in place. */
static void test_submit_and_peek(void)
{
	struct kevent_change changes[8];
	struct kevent_queue q;
	struct kevent_batch b;
	struct ukevent *ev;
	int ret;

	REQUIRE(kevent_queue_init(&q, 8, KEVENT_CLOEXEC | KEVENT_RING_POST) == 0,
		"queue with a posted ring of 8");
	CHECK(q.ring && q.entries == 8 && q.mask == 7, "ring mapped");
	CHECK(kevent_ring_peek(&q) == NULL && kevent_ring_ready(&q) == 0,
	      "an empty ring");

	kevent_batch_init(&b, changes, 8);
	add_and_trigger(&b, 5);
	add_and_trigger(&b, 6);
	ret = kevent_batch_submit(&q, &b, 2, NULL);
	CHECK(ret == 2, "kevent_batch_submit: two events in the ring (%d)", ret);
	CHECK(kevent_batch_result(&b, 0) == 0 && kevent_batch_result(&b, 1) == 0 &&
	      kevent_batch_result(&b, 2) == 0 && kevent_batch_result(&b, 3) == 0,
	      "every entry: 0");
	CHECK(kevent_ring_ready(&q) == 2, "two ready");
	CHECK(kevent_ring_event(&q, 0)->id == 5 && kevent_ring_event(&q, 1)->id == 6,
	      "kevent_ring_event: both, in order");
	ev = kevent_ring_peek(&q);
	CHECK(ev && ev->id == 5 && ev->user_data == 50, "peek: the first");
	kevent_ring_advance(&q, 1);
	ev = kevent_ring_peek(&q);
	CHECK(ev && ev->id == 6 && ev->user_data == 60, "peek: the second");
	kevent_ring_advance(&q, 1);
	CHECK(kevent_ring_peek(&q) == NULL, "empty again");

	/* An empty batch only waits: with min_nr 0 and nothing ready, 0. */
	kevent_batch_reset(&b);
	ret = kevent_batch_submit(&q, &b, 0, NULL);
	CHECK(ret == 0, "an empty batch, min_nr 0: 0 (%d)", ret);
	kevent_queue_exit(&q);
	CHECK(q.fd == -1 && !q.ring, "queue_exit clears the queue");
}

/* Copy out across the ring's end, claim, and a corrupted index. */
static void test_copy_and_claim(void)
{
	struct kevent_change changes[8];
	struct ukevent out[8];
	struct kevent_queue q;
	struct kevent_batch b;
	unsigned int round, i, tail;
	int ret, ok = 1;

	REQUIRE(kevent_queue_init(&q, 4, KEVENT_RING_POST) == 0,
		"queue with a posted ring of 4");
	kevent_batch_init(&b, changes, 8);
	for (i = 0; i < 3; i++)
		add_and_trigger(&b, 100 + i);
	ret = kevent_batch_ctl(&q, &b);
	CHECK(ret == 6, "three user events added and triggered (%d)", ret);
	ret = kevent_ring_copy(&q, out, 8);
	CHECK(ret == 3, "copied 3 (%d)", ret);

	/* Three each round in a ring of four: the copies cross its end. */
	for (round = 0; round < 5; round++) {
		kevent_batch_reset(&b);
		for (i = 0; i < 3; i++) {
			struct ukevent *uk = kevent_batch_add(&b,
							      KEVENT_CTL_TRIGGER);

			uk->type = KEVENT_TYPE_USER;
			uk->id = 100 + i;
		}
		ok &= kevent_batch_ctl(&q, &b) == 3;
		ok &= kevent_ring_copy(&q, out, 2) == 2;
		ok &= kevent_ring_copy(&q, out + 2, 8) == 1;
		for (i = 0; i < 3; i++)
			ok &= out[i].id == 100 + i && out[i].ret_data == 1;
	}
	CHECK(ok, "five rounds across the ring's end, every event in order");

	kevent_batch_reset(&b);
	add_and_trigger(&b, 200);
	CHECK(kevent_batch_ctl(&q, &b) == 2, "one more event");
	CHECK(kevent_ring_claim(&q, out) == 1 && out[0].id == 200,
	      "kevent_ring_claim takes it");
	CHECK(kevent_ring_claim(&q, out) == 0, "then nothing");

	/* The program scribbled over tail: the library says so, no read. */
	tail = q.ring->tail;
	q.ring->tail = tail + 1000;
	CHECK(kevent_ring_copy(&q, out, 8) == -EINVAL,
	      "kevent_ring_copy of a corrupted ring: -EINVAL");
	ret = kevent_queue_wait(&q, 0, NULL);
	CHECK(ret == -EINVAL, "kevent_wait on it: -EINVAL from the kernel (%d)",
	      ret);
	q.ring->tail = tail;
	CHECK(kevent_queue_wait(&q, 0, NULL) == 0, "sane again once restored");
	kevent_queue_exit(&q);
}

static int fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void test_bad_input(void)
{
	struct kevent_queue q, q2;

	CHECK(kevent_queue_init(&q, 3, 0) == -EINVAL,
	      "a ring of 3 slots: -EINVAL");
	CHECK(q.fd == -1, "nothing left open");
	CHECK(kevent_queue_init(&q, 0, KEVENT_RING_POST) == -EINVAL,
	      "a posted ring without slots: -EINVAL");
	CHECK(kevent_queue_init(&q, 8, 0x80000000u) == -EINVAL,
	      "an unknown flag: -EINVAL");
	REQUIRE(kevent_queue_init(&q, 0, 0) == 0, "queue without a ring");
	CHECK(kevent_ring_map(&q2, q.fd, 8) == -ENODEV,
	      "mapping the ring of an instance without one: -ENODEV");
	kevent_queue_exit(&q);
	REQUIRE(kevent_queue_init(&q, 16, 0) == 0, "queue with a ring of 16");
	CHECK(kevent_ring_map(&q2, q.fd, 8) == -EINVAL,
	      "mapping it as a ring of 8: -EINVAL");
	CHECK(kevent_ring_map(&q2, q.fd, 16) == 0 && q2.ring != q.ring &&
	      q2.fd == q.fd, "a second mapping of it");
	kevent_ring_unmap(&q2);
	CHECK(!q2.ring && fd_open(q.fd), "unmap leaves the instance open");
	kevent_queue_exit(&q);
}

/* Empty and NULL arrays, and a batch larger than the ring. */
static void test_arrays(void)
{
	struct kevent_change changes[12];
	struct kevent_queue q, plain;
	struct kevent_batch b;
	struct ukevent out, evs[4];
	unsigned int i;
	int ret, ok = 1;

	REQUIRE(kevent_queue_init(&q, 4, 0) == 0, "queue with a ring of 4");
	kevent_batch_init(&b, NULL, 0);
	CHECK(!kevent_batch_add(&b, KEVENT_CTL_ADD), "a batch of no room: NULL");
	CHECK(kevent_batch_ctl(&q, &b) == 0, "an empty batch by kevent_ctl: 0");
	CHECK(kevent_batch_submit(&q, &b, 0, NULL) == 0,
	      "an empty batch by kevent_submit: 0");
	CHECK(kevent_ring_copy(&q, &out, 0) == 0, "a copy of 0 events: 0");
	CHECK(kevent_ctl(q.fd, KEVENT_CTL_ADD, 1, NULL, 0) == -EFAULT,
	      "kevent_ctl of NULL: -EFAULT");

	/* An event that cannot be written out is not lost. */
	REQUIRE(kevent_queue_init(&plain, 0, 0) == 0, "queue without a ring");
	kevent_batch_init(&b, changes, 12);
	add_and_trigger(&b, 400);
	CHECK(kevent_batch_ctl(&plain, &b) == 2, "a triggered event");
	CHECK(kevent_get_events(plain.fd, 1, 1, NULL, NULL) == -EFAULT,
	      "kevent_get_events into NULL: -EFAULT");
	CHECK(kevent_get_events(plain.fd, 1, 1, &out, NULL) == 1 &&
	      out.id == 400, "the event comes to the next call");
	kevent_queue_exit(&plain);

	/* Twelve changes through a ring of four: changes are not events. */
	kevent_batch_init(&b, changes, 12);
	for (i = 0; i < 6; i++)
		add_and_trigger(&b, 300 + i);
	ret = kevent_batch_submit(&q, &b, 4, NULL);
	CHECK(ret == 4, "12 changes, 6 events, a ring of 4: 4 in it (%d)", ret);
	for (i = 0; i < 12; i++)
		ok &= kevent_batch_result(&b, i) == 0;
	CHECK(ok, "every change made");
	CHECK(kevent_ring_flags(&q) & KEVENT_RING_FULL,
	      "KEVENT_RING_FULL: the rest wait in the kernel");
	kevent_batch_reset(&b);
	ret = kevent_batch_submit(&q, &b, 5, NULL);
	CHECK(ret == -EINVAL, "waiting for more than the ring holds: -EINVAL (%d)",
	      ret);
	CHECK(kevent_ring_copy(&q, evs, 4) == 4 &&
	      kevent_queue_wait(&q, 0, NULL) == 2,
	      "the other 2 come once there is room");
	kevent_queue_exit(&q);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_probe();
	test_batch_ctl();
	test_submit_and_peek();
	test_copy_and_claim();
	test_bad_input();
	test_arrays();
	return ktest_done();
}

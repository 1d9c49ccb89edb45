// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * libkevent's buffer ring: a multishot receive on a posted ring takes
 * the buffers given to it, one per receive, stops with -ENOBUFS when
 * they run out, goes on when they are recycled and triggered, and ends
 * when the peer closes; a ring cannot be given more buffers than it has
 * entries.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <kevent/kevent.h>
#include "ktest.h"

#define NBUF	4
#define BUFLEN	16
#define TAG	9

static struct kevent_queue q;
static struct kevent_bufs br;
static char bufs[NBUF][BUFLEN];
static int sv[2];

/* The next event of the receive, waiting at most a second; 1 if it came. */
static int next_event(struct ukevent *ev)
{
	struct __kernel_timespec ts = { .tv_sec = 1 };

	if (!kevent_ring_ready(&q) && kevent_queue_wait(&q, 1, &ts) < 0)
		return 0;
	return kevent_ring_copy(&q, ev, 1) == 1;
}

/* The peer writes @s; the receive reports it in one buffer: its id. */
static int receive(const char *s, unsigned int *bid)
{
	struct ukevent ev;
	size_t len = strlen(s);

	if (write(sv[1], s, len) != (ssize_t)len || !next_event(&ev))
		return 0;
	*bid = KEVENT_AIO_RECV_BUF(ev.ret_data);
	return ev.ret_error == 0 && (ev.ret_flags & KEVENT_RET_MORE) &&
	       KEVENT_AIO_RECV_BYTES(ev.ret_data) == len && *bid < NBUF &&
	       !memcmp(bufs[*bid], s, len) && ev.user_data == 123;
}

int main(void)
{
	unsigned int i, bid, seen = 0;
	struct ukevent uk, ev;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(kevent_bufs_init(&br, 3) == -EINVAL, "3 entries: -EINVAL");
	CHECK(kevent_bufs_init(&br, KEVENT_BUF_RING_MAX * 2) == -EINVAL,
	      "more than KEVENT_BUF_RING_MAX: -EINVAL");
	REQUIRE(kevent_bufs_init(&br, NBUF) == 0, "a buffer ring of %d", NBUF);
	REQUIRE(kevent_queue_init(&q, 16, KEVENT_RING_POST) == 0,
		"a queue with a posted ring");
	REQUIRE(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "a socket pair");

	for (i = 0; i < NBUF; i++)
		kevent_bufs_add(&br, bufs[i], BUFLEN, i);
	CHECK(kevent_bufs_available(&br) == NBUF, "%d buffers added", NBUF);
	CHECK(kevent_bufs_add(&br, bufs[0], BUFLEN, 0) == -ENOSPC,
	      "one more: -ENOSPC");
	CHECK(br.ring->tail == 0, "not given before publish");
	kevent_bufs_publish(&br);
	CHECK(br.ring->tail == NBUF, "published");

	kevent_prep_recv_bufs(&uk, sv[0], TAG, &br, 123);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == 0,
	      "multishot receive: ADD");
	for (i = 0; i < NBUF; i++) {
		char s[8] = "msg-0";

		s[4] = '0' + i;
		if (receive(s, &bid))
			seen |= 1u << bid;
	}
	CHECK(seen == (1u << NBUF) - 1, "%d receives, one buffer each", NBUF);
	CHECK(kevent_bufs_available(&br) == 0, "every buffer taken");

	/* No buffer left: the data waits in the socket, one event says so. */
	CHECK(write(sv[1], "late", 4) == 4, "the peer writes again");
	CHECK(next_event(&ev) && ev.ret_error == -ENOBUFS &&
	      (ev.ret_flags & KEVENT_RET_MORE) && ev.ret_data == 0,
	      "-ENOBUFS, the receive stopped");
	CHECK(kevent_bufs_recycle(&br, bufs[2], BUFLEN, 2) == 0,
	      "a buffer recycled");
	kevent_prep_key(&uk, KEVENT_TYPE_AIO, KEVENT_AIO_ID(sv[0], TAG));
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_TRIGGER, &uk) == 0,
	      "TRIGGER resumes it");
	CHECK(next_event(&ev) && ev.ret_error == 0 &&
	      KEVENT_AIO_RECV_BYTES(ev.ret_data) == 4 &&
	      KEVENT_AIO_RECV_BUF(ev.ret_data) == 2 &&
	      !memcmp(bufs[2], "late", 4), "the waiting data, in that buffer");

	/* The peer closes: a last event, without KEVENT_RET_MORE. */
	kevent_bufs_recycle(&br, bufs[0], BUFLEN, 0);
	close(sv[1]);
	CHECK(next_event(&ev) && ev.ret_error == 0 &&
	      !(ev.ret_flags & KEVENT_RET_MORE) && ev.ret_data == 0,
	      "end of file ends the receive");
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_REMOVE, &uk) == -ENOENT,
	      "it is gone");

	close(sv[0]);
	kevent_queue_exit(&q);
	kevent_bufs_exit(&br);
	CHECK(!br.ring, "bufs_exit clears the ring");
	return ktest_done();
}

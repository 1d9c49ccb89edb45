// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * libkevent's typed entries: one of each type, made with its
 * kevent_prep_*() and carried out by kevent_queue_ctl1() or a batch, and
 * the event it brings: user events, timers, poll, sockets, inodes,
 * signals, and receive, send and sendfile done by the kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <kevent/kevent.h>
#include "ktest.h"

static struct kevent_queue q;

/* One event, waiting at most a second; 1 if it came. */
static int get_one(struct ukevent *ev)
{
	struct __kernel_timespec ts = { .tv_sec = 1 };
	struct kevent_wait_args wa;

	kevent_wait_args_set(&wa, &ts, NULL);
	return kevent_get_events(q.fd, 1, 1, ev, &wa);
}

/* Nothing ready now; 1 if so. */
static int none_ready(void)
{
	struct __kernel_timespec ts = { 0 };
	struct kevent_wait_args wa;
	struct ukevent ev;

	kevent_wait_args_set(&wa, &ts, NULL);
	return kevent_get_events(q.fd, 0, 1, &ev, &wa) == 0;
}

static void test_user(void)
{
	struct ukevent uk, ev;

	kevent_prep_user(&uk, 7, KEVENT_REQ_ET, 70);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == 0, "user: ADD");
	kevent_prep_key(&uk, KEVENT_TYPE_USER, 7);
	kevent_queue_ctl1(&q, KEVENT_CTL_TRIGGER, &uk);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_TRIGGER, &uk) == 0,
	      "user: TRIGGER twice");
	CHECK(get_one(&ev) == 1 && ev.id == 7 && ev.user_data == 70 &&
	      ev.ret_data == 2, "user: one event, two triggers");
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_REMOVE, &uk) == 0,
	      "user: REMOVE by key");
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_REMOVE, &uk) == -ENOENT,
	      "user: REMOVE again: -ENOENT");
}

static void test_timer(void)
{
	struct ukevent uk, ev;

	kevent_prep_timer(&uk, 1, 1000000, 0, 0, KEVENT_REQ_ONESHOT, 11);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == 0,
	      "timer: ADD, 1 ms, once");
	CHECK(get_one(&ev) == 1 && ev.type == KEVENT_TYPE_TIMER &&
	      ev.id == 1 && ev.ret_data == 1 && ev.user_data == 11,
	      "timer: expired once");
	kevent_prep_timer(&uk, 2, 1000000, 1000000, 0, KEVENT_REQ_ET, 22);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == 0,
	      "timer: ADD, every 1 ms");
	usleep(20000);
	CHECK(get_one(&ev) == 1 && ev.id == 2 && ev.ret_data >= 2,
	      "timer: expirations counted (%llu)",
	      (unsigned long long)ev.ret_data);
	kevent_prep_key(&uk, KEVENT_TYPE_TIMER, 2);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_REMOVE, &uk) == 0,
	      "timer: REMOVE");
	kevent_prep_timer(&uk, 3, 1000000, 10, 0, 0, 0);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == -EINVAL,
	      "timer: a 10 ns period: -EINVAL");
}

static void test_poll_and_socket(void)
{
	struct ukevent uk, ev;
	int p[2], sv[2];

	if (pipe2(p, O_NONBLOCK | O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		CHECK(0, "pipe and socket pair");
		return;
	}
	kevent_prep_poll(&uk, p[0], POLLIN, KEVENT_REQ_ET, 33);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == 0, "poll: ADD");
	CHECK(none_ready(), "poll: nothing yet");
	CHECK(write(p[1], "x", 1) == 1, "poll: write");
	CHECK(get_one(&ev) == 1 && ev.id == (uint64_t)p[0] &&
	      (ev.ret_data & POLLIN) && ev.user_data == 33, "poll: POLLIN");

	kevent_prep_socket(&uk, sv[0], KEVENT_SOCKET_RECV, KEVENT_REQ_ET, 44);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == 0, "socket: ADD");
	CHECK(write(sv[1], "y", 1) == 1, "socket: write");
	CHECK(get_one(&ev) == 1 && ev.id == (uint64_t)sv[0] &&
	      (KEVENT_SOCKET_READY(ev.ret_data) & KEVENT_SOCKET_RECV),
	      "socket: KEVENT_SOCKET_RECV");
	kevent_prep_socket(&uk, p[0], KEVENT_SOCKET_RECV, 0, 0);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == -ENOTSOCK,
	      "socket: a pipe: -ENOTSOCK");
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

static void test_inode(void)
{
	char dir[] = "/tmp/libkevent-XXXXXX", path[64];
	struct ukevent uk, ev;
	int dfd, fd;

	mkdir("/tmp", 01777);
	if (!mkdtemp(dir)) {
		CHECK(0, "inode: a directory (%d)", errno);
		return;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	kevent_prep_inode(&uk, dfd, KEVENT_INODE_CREATE | KEVENT_INODE_REMOVE,
			  0, 55);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == 0, "inode: ADD");
	snprintf(path, sizeof(path), "%s/f", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(get_one(&ev) == 1 && ev.type == KEVENT_TYPE_INODE &&
	      (ev.ret_data & KEVENT_INODE_CREATE) && ev.user_data == 55,
	      "inode: KEVENT_INODE_CREATE");
	close(fd);
	unlink(path);
	CHECK(get_one(&ev) == 1 && (ev.ret_data & KEVENT_INODE_REMOVE),
	      "inode: KEVENT_INODE_REMOVE");
	kevent_prep_key(&uk, KEVENT_TYPE_INODE, dfd);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_REMOVE, &uk) == 0,
	      "inode: REMOVE");
	close(dfd);
	rmdir(dir);
}

static void test_signal(void)
{
	struct ukevent uk, ev;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	kevent_prep_signal(&uk, SIGUSR1, KEVENT_REQ_ONESHOT, 66);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == 0, "signal: ADD");
	kill(getpid(), SIGUSR1);
	CHECK(get_one(&ev) == 1 && ev.id == SIGUSR1 &&
	      KEVENT_SIGNAL_PID(ev.ret_data) == getpid(),
	      "signal: SIGUSR1 from ourselves");
	kevent_prep_signal(&uk, SIGKILL, 0, 0);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == -EINVAL,
	      "signal: SIGKILL: -EINVAL");
}

static void test_aio(void)
{
	char buf[64] = "", file[] = "/tmp/libkevent-file-XXXXXX";
	static char data[3000], got[3000];
	struct kevent_change changes[2];
	struct kevent_queue rq;
	struct kevent_batch b;
	struct ukevent uk, ev;
	int sv[2], fd;
	size_t n = 0;
	ssize_t r;
	unsigned int i;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		CHECK(0, "aio: socket pair");
		return;
	}
	kevent_prep_recv(&uk, sv[0], 1, buf, sizeof(buf), 77);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == 0, "recv: ADD");
	CHECK(write(sv[1], "hello", 5) == 5, "recv: the peer writes");
	CHECK(get_one(&ev) == 1 && ev.ret_data == 5 && ev.user_data == 77 &&
	      !memcmp(buf, "hello", 5), "recv: 5 bytes, in the buffer");

	/* KEVENT_CTL_SEND in a batch with its wait: sent at once. */
	REQUIRE(kevent_queue_init(&rq, 8, KEVENT_RING_POST) == 0,
		"send: a queue with a ring");
	kevent_batch_init(&b, changes, 2);
	kevent_prep_send(kevent_batch_add(&b, KEVENT_CTL_SEND), sv[0], 2,
			 "world", 5, 88);
	CHECK(kevent_batch_submit(&rq, &b, 0, NULL) == 0 &&
	      kevent_batch_result(&b, 0) == 0 &&
	      kevent_batch_entry(&b, 0)->ret_data == 5 &&
	      !(kevent_batch_entry(&b, 0)->ret_flags & KEVENT_RET_MORE),
	      "send: KEVENT_CTL_SEND sent 5 bytes at once");
	CHECK(read(sv[1], buf, sizeof(buf)) == 5 && !memcmp(buf, "world", 5),
	      "send: the peer reads them");
	kevent_queue_exit(&rq);

	mkdir("/tmp", 01777);
	fd = mkstemp(file);
	for (i = 0; i < sizeof(data); i++)
		data[i] = 'a' + i % 26;
	if (fd < 0 || write(fd, data, sizeof(data)) != sizeof(data)) {
		CHECK(0, "sendfile: a file");
		return;
	}
	kevent_prep_sendfile(&uk, sv[0], fd, 0, sizeof(data), 0, 99);
	CHECK(kevent_queue_ctl1(&q, KEVENT_CTL_ADD, &uk) == 0,
	      "sendfile: ADD");
	/* The file fits in the socket's buffer: it completes unread. */
	CHECK(get_one(&ev) == 1 && ev.ret_data == sizeof(data) &&
	      ev.user_data == 99, "sendfile: its completion");
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	while (n < sizeof(got) &&
	       (r = read(sv[1], got + n, sizeof(got) - n)) > 0)
		n += r;
	CHECK(n == sizeof(data) && !memcmp(got, data, n),
	      "sendfile: the peer reads the file");
	close(fd);
	unlink(file);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	REQUIRE(kevent_queue_init(&q, 0, KEVENT_CLOEXEC) == 0, "a queue");
	test_user();
	test_timer();
	test_poll_and_socket();
	test_inode();
	test_signal();
	test_aio();
	kevent_queue_exit(&q);
	return ktest_done();
}

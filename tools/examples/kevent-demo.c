// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-demo: a tour of the kevent system calls.
 *
 * Runs a series of small demonstrations, one function per event source
 * and feature, printing what it does and what the kernel reports. Each
 * demonstration checks the results it gets; the program exits 0 if all of
 * them are as expected and 1 otherwise, so it doubles as a smoke test
 * inside a QEMU guest.
 *
 * Build (static, for an initramfs):
 *
 *   make headers_install INSTALL_HDR_PATH=/tmp/khdr
 *   gcc -static -Wall -O2 -isystem /tmp/khdr/include -I tools/include \
 *       -o kevent-demo tools/examples/kevent-demo.c -lpthread
 *
 * To add a source (timers, sockets, ...): write one
 * "static int demo_<source>(int kfd)" function that returns 0 on success
 * and -1 on an unexpected result (use CHECK()), and add it to demos[] at
 * the end of the file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kevent.h"

/* ------------------------------------------------------------------ */
/* Reporting                                                           */
/* ------------------------------------------------------------------ */

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Check @cond; on failure say where and why, and fail the demo. */
#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("  FAILED at %s:%d: %s: ", __FILE__,	\
			       __LINE__, #cond);			\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			return -1;					\
		}							\
	} while (0)

/*
 * A cookie: what an application hangs on a kevent through user_data
 * (typically a pointer to its own object) and gets back with each event.
 */
struct cookie {
	const char *name;
};

static uint64_t to_user_data(struct cookie *c)
{
	return (uint64_t)(uintptr_t)c;
}

static const char *cookie_name(uint64_t user_data)
{
	struct cookie *c = (struct cookie *)(uintptr_t)user_data;

	return c ? c->name : "(none)";
}

static const char *type_name(uint32_t type)
{
	switch (type) {
	case KEVENT_TYPE_USER:
		return "user";
#ifdef KEVENT_TYPE_POLL
	case KEVENT_TYPE_POLL:
		return "poll";
#endif
#ifdef KEVENT_TYPE_TIMER
	case KEVENT_TYPE_TIMER:
		return "timer";
#endif
#ifdef KEVENT_TYPE_INODE
	case KEVENT_TYPE_INODE:
		return "inode";
#endif
#ifdef KEVENT_TYPE_SOCKET
	case KEVENT_TYPE_SOCKET:
		return "socket";
#endif
#ifdef KEVENT_TYPE_AIO
	case KEVENT_TYPE_AIO:
		return "aio";
#endif
#ifdef KEVENT_TYPE_SIGNAL
	case KEVENT_TYPE_SIGNAL:
		return "signal";
#endif
	default:
		return "?";
	}
}

static void print_event(const struct ukevent *ev)
{
	char data[64];

#ifdef KEVENT_TYPE_POLL
	if (ev->type == KEVENT_TYPE_POLL)
		snprintf(data, sizeof(data), "revents=%#" PRIx64 "%s%s",
			 (uint64_t)ev->ret_data,
			 ev->ret_data & POLLIN ? " (POLLIN)" : "",
			 ev->ret_data & POLLHUP ? " (POLLHUP)" : "");
	else
#endif
#ifdef KEVENT_TYPE_SOCKET
	if (ev->type == KEVENT_TYPE_SOCKET)
		snprintf(data, sizeof(data), "ready=%s%s%s%s%s backlog=%u",
			 ev->ret_data & KEVENT_SOCKET_RECV ? " RECV" : "",
			 ev->ret_data & KEVENT_SOCKET_SEND ? " SEND" : "",
			 ev->ret_data & KEVENT_SOCKET_ACCEPT ? " ACCEPT" : "",
			 ev->ret_data & KEVENT_SOCKET_HUP ? " HUP" : "",
			 ev->ret_data & KEVENT_SOCKET_ERROR ? " ERROR" : "",
			 KEVENT_SOCKET_BACKLOG(ev->ret_data));
	else
#endif
#ifdef KEVENT_TYPE_AIO
	if (ev->type == KEVENT_TYPE_AIO)
		snprintf(data, sizeof(data), "bytes=%" PRIu64 " error=%d",
			 (uint64_t)ev->ret_data, ev->ret_error);
	else
#endif
		snprintf(data, sizeof(data), "ret_data=%" PRIu64,
			 (uint64_t)ev->ret_data);
	printf("  event: type=%s id=%" PRIu64 " cookie=\"%s\" %s%s%s%s\n",
	       type_name(ev->type), (uint64_t)ev->id,
	       cookie_name(ev->user_data), data,
	       ev->req_flags & KEVENT_REQ_ONESHOT ? " [oneshot]" : "",
	       ev->req_flags & KEVENT_REQ_ET ? " [et]" : "",
	       ev->ret_flags & KEVENT_RET_BROKEN ? " [broken]" : "");
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Collect events for up to @ms milliseconds (0: only what is ready now)
 * into @ev, printing each one. Returns how many, or -1.
 */
static int collect(int kfd, struct ukevent *ev, unsigned int max,
		   unsigned int min, long ms)
{
	struct __kernel_timespec to = kevent_ms(ms);
	struct kevent_wait_args wa;
	int n, i;

	kevent_wait_args_set(&wa, &to, NULL);
	n = kevent_get_events(kfd, min, max, ev, &wa);
	if (n < 0) {
		printf("  kevent_get_events: %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++)
		print_event(&ev[i]);
	if (!n)
		printf("  (no event)\n");
	return n;
}

/* ------------------------------------------------------------------ */
/* A helper thread that fires user kevents on a schedule               */
/* ------------------------------------------------------------------ */

struct shot {
	uint64_t id;
	long delay_ms;		/* after the previous shot */
};

struct shooter {
	pthread_t thread;
	int kfd;
	const struct shot *shots;
	int nr;
	int error;		/* first failed trigger's -errno */
};

static void *shooter_main(void *arg)
{
	struct shooter *s = arg;
	int i, err;

	for (i = 0; i < s->nr; i++) {
		sleep_ms(s->shots[i].delay_ms);
		printf("  [thread] trigger id=%" PRIu64 "\n", s->shots[i].id);
		err = kevent_trigger_one(s->kfd, s->shots[i].id);
		if (err && !s->error)
			s->error = err;
	}
	return NULL;
}

static int shooter_start(struct shooter *s, int kfd, const struct shot *shots,
			 int nr)
{
	s->kfd = kfd;
	s->shots = shots;
	s->nr = nr;
	s->error = 0;
	return pthread_create(&s->thread, NULL, shooter_main, s) ? -1 : 0;
}

static int shooter_join(struct shooter *s)
{
	pthread_join(s->thread, NULL);
	return s->error;
}

/* ------------------------------------------------------------------ */
/* Demonstrations: KEVENT_TYPE_USER                                    */
/* ------------------------------------------------------------------ */

/*
 * Three user kevents with cookies; another thread fires them one by one
 * and the main thread sleeps in kevent_get_events() until each arrives.
 */
static int demo_user_thread_wakeup(int kfd)
{
	static struct cookie c[] = { { "alpha" }, { "beta" }, { "gamma" } };
	static const struct shot shots[] = {
		{ 2, 100 }, { 1, 100 }, { 3, 100 },
	};
	static const uint64_t expect[] = { 2, 1, 3 };
	struct ukevent ev[8];
	struct shooter s;
	int i, got = 0, n, err;
	long long t0;

	printf("Registering user kevents 1, 2, 3 with cookies alpha, beta, gamma\n");
	for (i = 0; i < 3; i++) {
		err = kevent_add_one(kfd, KEVENT_TYPE_USER, i + 1,
				     KEVENT_USER_TRIGGER, 0, to_user_data(&c[i]));
		CHECK(err == 0, "add id %d: %s", i + 1, strerror(-err));
	}

	printf("A thread fires 2, 1, 3, 100 ms apart; main thread waits\n");
	CHECK(shooter_start(&s, kfd, shots, 3) == 0, "pthread_create");
	t0 = now_ms();
	while (got < 3) {
		n = collect(kfd, ev + got, 8 - got, 1, 10000);
		if (n <= 0)
			break;
		printf("  (woken after %lld ms)\n", now_ms() - t0);
		got += n;
	}
	err = shooter_join(&s);
	CHECK(err == 0, "trigger: %s", strerror(-err));
	CHECK(got == 3, "got %d events, expected 3", got);
	for (i = 0; i < 3; i++) {
		CHECK(ev[i].id == expect[i], "event %d is id %" PRIu64
		      ", expected %" PRIu64 " (FIFO order)", i,
		      (uint64_t)ev[i].id, expect[i]);
		CHECK(ev[i].user_data == to_user_data(&c[expect[i] - 1]),
		      "event %d has the wrong cookie", i);
		CHECK(ev[i].ret_data == 1, "ret_data %" PRIu64 ", expected 1",
		      (uint64_t)ev[i].ret_data);
	}

	for (i = 0; i < 3; i++)
		CHECK(kevent_remove_one(kfd, KEVENT_TYPE_USER, i + 1) == 0,
		      "remove id %d", i + 1);
	return 0;
}

/* Triggers that come before delivery are counted in one event. */
static int demo_user_coalescing(int kfd)
{
	static struct cookie c = { "counter" };
	struct ukevent ev[4];
	int i, n;

	CHECK(kevent_add_one(kfd, KEVENT_TYPE_USER, 7, KEVENT_USER_TRIGGER, 0,
			     to_user_data(&c)) == 0, "add");
	printf("Triggering kevent 7 five times before collecting\n");
	for (i = 0; i < 5; i++)
		CHECK(kevent_trigger_one(kfd, 7) == 0, "trigger");
	n = collect(kfd, ev, 4, 0, 0);
	CHECK(n == 1, "%d events, expected one", n);
	CHECK(ev[0].ret_data == 5, "ret_data %" PRIu64 ", expected 5",
	      (uint64_t)ev[0].ret_data);
	printf("Collecting again: the count was consumed\n");
	n = collect(kfd, ev, 4, 0, 0);
	CHECK(n == 0, "%d events, expected none", n);
	CHECK(kevent_remove_one(kfd, KEVENT_TYPE_USER, 7) == 0, "remove");
	return 0;
}

/*
 * Level- and edge-triggered user kevents. A user kevent's event is its
 * trigger count, which delivery consumes, so both kinds are delivered
 * once per burst of triggers. (For a source with a lasting state, such as
 * a readable pipe, a level-triggered kevent is delivered again for as long
 * as the state lasts, an edge-triggered one only once per change.)
 */
static int demo_user_et_lt(int kfd)
{
	static struct cookie lt = { "level" }, et = { "edge" };
	struct ukevent ev[4];
	int n, round;

	CHECK(kevent_add_one(kfd, KEVENT_TYPE_USER, 10, KEVENT_USER_TRIGGER, 0,
			     to_user_data(&lt)) == 0, "add LT");
	CHECK(kevent_add_one(kfd, KEVENT_TYPE_USER, 11, KEVENT_USER_TRIGGER,
			     KEVENT_REQ_ET, to_user_data(&et)) == 0, "add ET");

	for (round = 1; round <= 2; round++) {
		printf("Round %d: trigger the level kevent 10 and the edge kevent 11\n",
		       round);
		CHECK(kevent_trigger_one(kfd, 10) == 0, "trigger 10");
		CHECK(kevent_trigger_one(kfd, 11) == 0, "trigger 11");
		n = collect(kfd, ev, 4, 0, 0);
		CHECK(n == 2, "%d events, expected 2", n);
		CHECK(ev[0].id == 10 && ev[1].id == 11, "wrong order");
		CHECK(ev[1].req_flags == KEVENT_REQ_ET, "ET flag not reported");
		printf("  collecting again, nothing new happened:\n");
		n = collect(kfd, ev, 4, 0, 0);
		CHECK(n == 0, "%d events, expected none", n);
	}

	CHECK(kevent_remove_one(kfd, KEVENT_TYPE_USER, 10) == 0, "remove 10");
	CHECK(kevent_remove_one(kfd, KEVENT_TYPE_USER, 11) == 0, "remove 11");
	return 0;
}

/* A one-shot kevent is removed by its first delivery. */
static int demo_user_oneshot(int kfd)
{
	static struct cookie c = { "once" };
	struct ukevent ev[4];
	int n, err;

	printf("Registering one-shot kevent 20\n");
	CHECK(kevent_add_one(kfd, KEVENT_TYPE_USER, 20, KEVENT_USER_TRIGGER,
			     KEVENT_REQ_ONESHOT, to_user_data(&c)) == 0, "add");
	CHECK(kevent_trigger_one(kfd, 20) == 0, "trigger");
	n = collect(kfd, ev, 4, 0, 0);
	CHECK(n == 1 && ev[0].id == 20, "expected kevent 20");

	err = kevent_trigger_one(kfd, 20);
	printf("Triggering it again: %s\n", err ? strerror(-err) : "ok");
	CHECK(err == -ENOENT, "expected ENOENT, it should be gone");
	err = kevent_remove_one(kfd, KEVENT_TYPE_USER, 20);
	CHECK(err == -ENOENT, "remove: expected ENOENT");
	printf("Registering it anew: ");
	err = kevent_add_one(kfd, KEVENT_TYPE_USER, 20, KEVENT_USER_TRIGGER,
			     KEVENT_REQ_ONESHOT, to_user_data(&c));
	printf("%s\n", err ? strerror(-err) : "ok");
	CHECK(err == 0, "re-add");
	CHECK(kevent_remove_one(kfd, KEVENT_TYPE_USER, 20) == 0, "remove");
	return 0;
}

/* MODIFY swaps the cookie; REMOVE drops an undelivered event. */
static int demo_user_modify_remove(int kfd)
{
	static struct cookie old = { "old" }, new = { "new" };
	struct ukevent ev[4];
	int n;

	CHECK(kevent_add_one(kfd, KEVENT_TYPE_USER, 30, KEVENT_USER_TRIGGER, 0,
			     to_user_data(&old)) == 0, "add");
	CHECK(kevent_trigger_one(kfd, 30) == 0, "trigger");
	printf("Kevent 30 triggered with cookie \"old\"; modify it to \"new\"\n");
	CHECK(kevent_modify_one(kfd, KEVENT_TYPE_USER, 30, KEVENT_USER_TRIGGER,
				0, to_user_data(&new)) == 0, "modify");
	n = collect(kfd, ev, 4, 0, 0);
	CHECK(n == 1 && ev[0].user_data == to_user_data(&new),
	      "expected one event with the new cookie");

	printf("Trigger kevent 30, then remove it before collecting\n");
	CHECK(kevent_trigger_one(kfd, 30) == 0, "trigger");
	CHECK(kevent_remove_one(kfd, KEVENT_TYPE_USER, 30) == 0, "remove");
	n = collect(kfd, ev, 4, 0, 0);
	CHECK(n == 0, "a removed kevent was delivered");
	return 0;
}

/* The instance fd works with poll(), so it can sit in another event loop. */
static int demo_instance_poll(int kfd)
{
	struct pollfd pfd = { .fd = kfd, .events = POLLIN };
	static const struct shot shots[] = { { 40, 150 } };
	struct ukevent ev[2];
	struct shooter s;
	int n;

	CHECK(kevent_add_one(kfd, KEVENT_TYPE_USER, 40, KEVENT_USER_TRIGGER, 0,
			     0) == 0, "add");
	n = poll(&pfd, 1, 0);
	printf("poll() with nothing ready: %d\n", n);
	CHECK(n == 0, "the fd is readable with nothing ready");

	printf("poll() while a thread fires kevent 40 in 150 ms\n");
	CHECK(shooter_start(&s, kfd, shots, 1) == 0, "pthread_create");
	n = poll(&pfd, 1, 10000);
	CHECK(shooter_join(&s) == 0, "trigger");
	printf("  poll() returned %d, revents=%#x\n", n, pfd.revents);
	CHECK(n == 1 && (pfd.revents & POLLIN), "expected POLLIN");
	n = collect(kfd, ev, 2, 0, 0);
	CHECK(n == 1 && ev[0].id == 40, "expected kevent 40");
	CHECK(poll(&pfd, 1, 0) == 0, "still readable after collecting");
	CHECK(kevent_remove_one(kfd, KEVENT_TYPE_USER, 40) == 0, "remove");
	return 0;
}

/* Errors come back per entry, in ret_error; the call reports progress. */
static int demo_batch_errors(int kfd)
{
	struct ukevent uk[3];
	int n, i;

	printf("One ADD call with three entries: new, bad event mask, duplicate\n");
	kevent_set(&uk[0], KEVENT_TYPE_USER, 50, KEVENT_USER_TRIGGER, 0, 0);
	kevent_set(&uk[1], KEVENT_TYPE_USER, 51, 0, 0, 0);
	kevent_set(&uk[2], KEVENT_TYPE_USER, 50, KEVENT_USER_TRIGGER, 0, 0);
	n = kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk, 0);
	printf("  kevent_ctl() = %d\n", n);
	CHECK(n == 3, "expected 3 entries processed");
	for (i = 0; i < 3; i++)
		printf("  entry %d: %s\n", i,
		       uk[i].ret_error ? strerror(-uk[i].ret_error) : "ok");
	CHECK(uk[0].ret_error == 0, "entry 0");
	CHECK(uk[1].ret_error == -EINVAL, "entry 1");
	CHECK(uk[2].ret_error == -EEXIST, "entry 2");
	CHECK(kevent_remove_one(kfd, KEVENT_TYPE_USER, 50) == 0, "remove");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Demonstrations: KEVENT_TYPE_POLL (files)                            */
/* ------------------------------------------------------------------ */

#ifdef KEVENT_TYPE_POLL
struct writer {
	pthread_t thread;
	int fd;
	long delay_ms;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	sleep_ms(w->delay_ms);
	printf("  [thread] write \"hello\" into the pipe\n");
	if (write(w->fd, "hello", 5) != 5)
		printf("  [thread] write: %s\n", strerror(errno));
	return NULL;
}

/*
 * A pipe's read end watched like poll() would: level-triggered, so it is
 * reported for as long as there is something to read; closing the file
 * descriptor removes the registration.
 */
static int demo_pipe(int kfd)
{
	static struct cookie c = { "pipe" };
	struct ukevent uk, ev[4];
	struct writer w;
	char buf[16];
	int p[2], n, err;

	CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
	kevent_set(&uk, KEVENT_TYPE_POLL, p[0], POLLIN, 0, to_user_data(&c));
	err = kevent_ctl_one(kfd, KEVENT_CTL_ADD, &uk);
	if (err == -EOPNOTSUPP) {
		printf("KEVENT_TYPE_POLL is not in this kernel: skipped\n");
		close(p[0]);
		close(p[1]);
		return 0;
	}
	CHECK(err == 0, "add: %s", strerror(-err));
	printf("Pipe read end (fd %d) registered for POLLIN\n", p[0]);
	n = collect(kfd, ev, 4, 0, 0);
	CHECK(n == 0, "an empty pipe was reported readable");

	printf("A thread writes into the pipe in 100 ms; main thread waits\n");
	w.fd = p[1];
	w.delay_ms = 100;
	CHECK(pthread_create(&w.thread, NULL, writer_main, &w) == 0,
	      "pthread_create");
	n = collect(kfd, ev, 4, 1, 10000);
	pthread_join(w.thread, NULL);
	CHECK(n == 1 && ev[0].id == (uint64_t)p[0] && (ev[0].ret_data & POLLIN),
	      "expected POLLIN on fd %d", p[0]);

	printf("Not read yet, so still reported (level-triggered):\n");
	n = collect(kfd, ev, 4, 0, 0);
	CHECK(n == 1 && (ev[0].ret_data & POLLIN), "expected POLLIN again");
	CHECK(read(p[0], buf, sizeof(buf)) == 5, "read");
	printf("Data read; collecting again:\n");
	n = collect(kfd, ev, 4, 0, 0);
	CHECK(n == 0, "a drained pipe was reported readable");

	printf("The writer closes its end:\n");
	close(p[1]);
	n = collect(kfd, ev, 4, 1, 10000);
	CHECK(n == 1 && (ev[0].ret_data & POLLHUP), "expected POLLHUP");

	close(p[0]);
	err = kevent_remove_one(kfd, KEVENT_TYPE_POLL, p[0]);
	printf("Read end closed; removing its kevent: %s\n",
	       err ? strerror(-err) : "ok");
	CHECK(err == -ENOENT, "closing the fd should have removed the kevent");
	return 0;
}
#endif /* KEVENT_TYPE_POLL */

#ifdef KEVENT_TYPE_TIMER
/*
 * Timers: a one-shot and a periodic one in the same instance as
 * everything else. A late reader is told how many periods went by.
 */
static int demo_timer(int kfd)
{
	static struct cookie once = { "one-shot" }, tick = { "every 20 ms" };
	struct ukevent ev[4], *periodic;
	bool seen_once;
	long long t0;
	int n, err;

	err = kevent_timer_add(kfd, 1, 50 * 1000000ULL, 0, 0, 0,
			       to_user_data(&once));
	if (err == -EOPNOTSUPP) {
		printf("KEVENT_TYPE_TIMER is not in this kernel: skipped\n");
		return 0;
	}
	CHECK(err == 0, "add one-shot: %s", strerror(-err));
	err = kevent_timer_add(kfd, 2, 20 * 1000000ULL, 20 * 1000000ULL, 0, 0,
			       to_user_data(&tick));
	CHECK(err == 0, "add periodic: %s", strerror(-err));
	printf("Timer 1 fires once in 50 ms; timer 2 every 20 ms\n");

	printf("Waiting for the first expiry:\n");
	t0 = now_ms();
	n = collect(kfd, ev, 4, 1, 10000);
	CHECK(n >= 1 && ev[0].type == KEVENT_TYPE_TIMER && ev[0].id == 2 &&
	      ev[0].ret_data >= 1, "expected timer 2 first");
	/* A slow machine may already have the one-shot too. */
	seen_once = n == 2 && ev[1].id == 1 && ev[1].ret_data == 1;

	printf("Not collecting for 200 ms; then:\n");
	sleep_ms(200);
	n = collect(kfd, ev, 4, seen_once ? 1 : 2, 10000);
	CHECK(n == (seen_once ? 1 : 2), "expected %d timers, got %d",
	      seen_once ? 1 : 2, n);
	periodic = &ev[0];
	if (n == 2) {
		CHECK(ev[0].id == 1 || ev[1].id == 1, "the one-shot is missing");
		if (ev[0].id == 1)
			periodic = &ev[1];
	}
	CHECK(periodic->id == 2 && periodic->ret_data >= 5,
	      "a late reader should be told of every missed period");
	printf("  (the periodic timer counted the periods missed, %lld ms "
	       "after the first wait)\n", now_ms() - t0);

	printf("An expired one-shot timer stays registered, as a timerfd "
	       "does\n(KEVENT_REQ_ONESHOT would remove it); removing it:\n");
	err = kevent_remove_one(kfd, KEVENT_TYPE_TIMER, 1);
	printf("  %s\n", err ? strerror(-err) : "ok");
	CHECK(err == 0, "remove one-shot: %s", strerror(-err));
	err = kevent_remove_one(kfd, KEVENT_TYPE_TIMER, 2);
	CHECK(err == 0, "remove periodic: %s", strerror(-err));
	printf("Periodic timer removed; nothing more arrives:\n");
	sleep_ms(50);
	n = collect(kfd, ev, 4, 0, 0);
	CHECK(n == 0, "a removed timer fired");
	return 0;
}
#endif /* KEVENT_TYPE_TIMER */

#ifdef KEVENT_TYPE_INODE
/*
 * A directory: entries created and removed are reported, a burst as one
 * event; removing the directory itself breaks the kevent.
 */
static int demo_directory(int kfd)
{
	static struct cookie c = { "spool dir" };
	char dir[] = "/tmp/kevent-demo-XXXXXX", path[64];
	struct ukevent uk, ev[4];
	int dfd, fd, n, i, err;

	CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0, "open: %s", strerror(errno));
	kevent_set(&uk, KEVENT_TYPE_INODE, dfd, KEVENT_INODE_EVENTS, 0,
		   to_user_data(&c));
	err = kevent_ctl_one(kfd, KEVENT_CTL_ADD, &uk);
	if (err == -EOPNOTSUPP) {
		printf("KEVENT_TYPE_INODE is not in this kernel: skipped\n");
		close(dfd);
		rmdir(dir);
		return 0;
	}
	CHECK(err == 0, "add: %s", strerror(-err));
	printf("Directory %s (fd %d) watched for entries created and "
	       "removed\n", dir, dfd);

	printf("Three files are created:\n");
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/job%d", dir, i);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		CHECK(fd >= 0, "create: %s", strerror(errno));
		close(fd);
	}
	n = collect(kfd, ev, 4, 1, 10000);
	CHECK(n == 1 && ev[0].ret_data == KEVENT_INODE_CREATE,
	      "expected one CREATE event for the burst");

	printf("They are processed and removed:\n");
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/job%d", dir, i);
		CHECK(unlink(path) == 0, "unlink: %s", strerror(errno));
	}
	n = collect(kfd, ev, 4, 1, 10000);
	CHECK(n == 1 && ev[0].ret_data == KEVENT_INODE_REMOVE,
	      "expected one REMOVE event");

	printf("The directory itself is removed and closed:\n");
	CHECK(rmdir(dir) == 0, "rmdir: %s", strerror(errno));
	close(dfd);
	n = collect(kfd, ev, 4, 1, 10000);
	CHECK(n == 1 && (ev[0].ret_flags & KEVENT_RET_BROKEN),
	      "expected the kevent to come broken");
	err = kevent_remove_one(kfd, KEVENT_TYPE_INODE, dfd);
	CHECK(err == -ENOENT, "a broken kevent stays registered");
	printf("  (delivered broken once, then removed by the kernel)\n");
	return 0;
}
#endif /* KEVENT_TYPE_INODE */

#ifdef KEVENT_TYPE_SOCKET
/* A TCP listener on 127.0.0.1, port chosen by the kernel. */
static int tcp_listener(struct sockaddr_in *addr)
{
	socklen_t alen = sizeof(*addr);
	int fd;

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, alen) ||
	    listen(fd, 16) || getsockname(fd, (struct sockaddr *)addr, &alen))
		return -1;
	return fd;
}

/*
 * Sockets in their own terms: a listener reports connections to accept,
 * with the accept queue's length; a connection reports data, then its
 * peer's close.
 */
static int demo_socket(int kfd)
{
	static struct cookie lc = { "listener" }, cc = { "connection" };
	struct sockaddr_in addr;
	int lfd, cli[3], srv[3], n, i, err;
	struct ukevent ev[4];
	char buf[16];

	lfd = tcp_listener(&addr);
	CHECK(lfd >= 0, "listener: %s", strerror(errno));
	err = kevent_socket_add(kfd, lfd, KEVENT_SOCKET_ACCEPT, 0,
				to_user_data(&lc));
	if (err == -EOPNOTSUPP) {
		printf("KEVENT_TYPE_SOCKET is not in this kernel: skipped\n");
		close(lfd);
		return 0;
	}
	CHECK(err == 0, "add: %s", strerror(-err));
	printf("TCP listener on 127.0.0.1:%d watched for ACCEPT; three "
	       "clients connect:\n", ntohs(addr.sin_port));
	for (i = 0; i < 3; i++) {
		cli[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(cli[i] >= 0 && !connect(cli[i], (struct sockaddr *)&addr,
					      sizeof(addr)),
		      "connect: %s", strerror(errno));
	}
	n = collect(kfd, ev, 4, 1, 10000);
	CHECK(n == 1 && KEVENT_SOCKET_READY(ev[0].ret_data) ==
	      KEVENT_SOCKET_ACCEPT, "expected ACCEPT");
	printf("  (%u connections wait in the accept queue)\n",
	       KEVENT_SOCKET_BACKLOG(ev[0].ret_data));
	for (i = 0; i < 3; i++) {
		srv[i] = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		CHECK(srv[i] >= 0, "accept: %s", strerror(errno));
	}

	printf("The first connection is watched for RECV; its client sends "
	       "\"hi\":\n");
	CHECK(kevent_socket_add(kfd, srv[0], KEVENT_SOCKET_RECV, 0,
				to_user_data(&cc)) == 0, "add connection");
	CHECK(write(cli[0], "hi", 2) == 2, "write: %s", strerror(errno));
	n = collect(kfd, ev, 4, 1, 10000);
	CHECK(n == 1 && KEVENT_SOCKET_READY(ev[0].ret_data) ==
	      KEVENT_SOCKET_RECV, "expected RECV");
	CHECK(read(srv[0], buf, sizeof(buf)) == 2, "read");

	printf("The client closes; HUP comes though only RECV was asked:\n");
	close(cli[0]);
	n = collect(kfd, ev, 4, 1, 10000);
	CHECK(n == 1 && (KEVENT_SOCKET_READY(ev[0].ret_data) &
			 KEVENT_SOCKET_HUP), "expected HUP");
	for (i = 0; i < 3; i++) {
		close(srv[i]);
		if (i)
			close(cli[i]);
	}
	close(lfd);
	return 0;
}
#endif /* KEVENT_TYPE_SOCKET */

#ifdef KEVENT_TYPE_AIO
/*
 * Completions: the kernel receives into the application's buffer, and
 * sends a file, and says when it is done.
 */
static int demo_aio(int kfd)
{
	static struct cookie rc = { "aio recv" }, fc = { "aio sendfile" };
	static const char text[] = "kevent sent this file\n";
	char path[] = "/tmp/kevent-demo-XXXXXX", buf[64] = "";
	struct ukevent ev[4];
	int s[2], file, n, err;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) == 0,
	      "socketpair: %s", strerror(errno));
	err = kevent_aio_add(kfd, KEVENT_AIO_RECV, s[0], 0, buf, sizeof(buf),
			     to_user_data(&rc));
	if (err == -EOPNOTSUPP) {
		printf("KEVENT_TYPE_AIO is not in this kernel: skipped\n");
		close(s[0]);
		close(s[1]);
		return 0;
	}
	CHECK(err == 0, "add recv: %s", strerror(-err));
	printf("A receive of up to %zu bytes is in flight; nothing has come:\n",
	       sizeof(buf));
	CHECK(collect(kfd, ev, 4, 0, 100) == 0, "completed without data");
	printf("The peer writes \"hello\":\n");
	CHECK(write(s[1], "hello", 5) == 5, "write");
	n = collect(kfd, ev, 4, 1, 10000);
	CHECK(n == 1 && ev[0].ret_data == 5 && !memcmp(buf, "hello", 5),
	      "expected the 5 bytes in the buffer");
	printf("  (the data is in the buffer already: \"%.5s\")\n", buf);

	file = mkstemp(path);
	CHECK(file >= 0 && write(file, text, sizeof(text) - 1) ==
	      (ssize_t)sizeof(text) - 1, "file: %s", strerror(errno));
	unlink(path);
	printf("A sendfile of up to 4096 bytes of a %zu-byte file:\n",
	       sizeof(text) - 1);
	CHECK(kevent_aio_sendfile(kfd, s[0], file, 0, 4096,
				  to_user_data(&fc)) == 0, "add sendfile");
	n = collect(kfd, ev, 4, 1, 10000);
	CHECK(n == 1 && ev[0].ret_data == sizeof(text) - 1,
	      "expected the whole file, and no more");
	CHECK(read(s[1], buf, sizeof(buf)) == (ssize_t)sizeof(text) - 1 &&
	      !memcmp(buf, text, sizeof(text) - 1), "peer read");
	printf("  (the peer read it)\n");
	close(file);
	close(s[0]);
	close(s[1]);
	return 0;
}
#endif /* KEVENT_TYPE_AIO */

#ifdef KEVENT_TYPE_SIGNAL
/*
 * Signals as events: blocked, as for a signalfd, and reported with the
 * sender's pid and, for a real-time signal, the value sigqueue() gave.
 */
static int demo_signal(int kfd)
{
	static struct cookie chld = { "SIGCHLD" }, rt = { "SIGRTMIN+1" };
	union sigval val = { .sival_int = 42 };
	struct ukevent uk[2], ev[4];
	sigset_t set, old;
	pid_t child;
	int n, status;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &set, &old);
	kevent_set(&uk[0], KEVENT_TYPE_SIGNAL, SIGCHLD, KEVENT_SIGNAL_RECEIVED,
		   0, to_user_data(&chld));
	kevent_set(&uk[1], KEVENT_TYPE_SIGNAL, SIGRTMIN + 1,
		   KEVENT_SIGNAL_RECEIVED, 0, to_user_data(&rt));
	n = kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk, 0);
	if (n == 2 && uk[0].ret_error == -EOPNOTSUPP) {
		printf("KEVENT_TYPE_SIGNAL is not in this kernel: skipped\n");
		sigprocmask(SIG_SETMASK, &old, NULL);
		return 0;
	}
	CHECK(n == 2 && !uk[0].ret_error && !uk[1].ret_error, "add signals");

	printf("A child exits; then we sigqueue() ourselves SIGRTMIN+1 with 42\n");
	child = fork();
	if (!child)
		_exit(7);
	n = collect(kfd, ev, 4, 1, 5000);
	CHECK(n == 1 && KEVENT_SIGNAL_PID(ev[0].ret_data) == child &&
	      KEVENT_SIGNAL_CODE(ev[0].ret_data) == CLD_EXITED,
	      "expected SIGCHLD from the child, CLD_EXITED");
	printf("  (pid %d, CLD_EXITED: reaped with waitpid())\n",
	       KEVENT_SIGNAL_PID(ev[0].ret_data));
	CHECK(waitpid(child, &status, 0) == child && WEXITSTATUS(status) == 7,
	      "waitpid");
	CHECK(sigqueue(getpid(), SIGRTMIN + 1, val) == 0, "sigqueue");
	n = collect(kfd, ev, 4, 1, 5000);
	CHECK(n == 1 && KEVENT_SIGNAL_VALUE(ev[0].ret_data) == 42,
	      "expected the value 42");
	printf("  (value %d, and the signal was dequeued, as a signalfd does)\n",
	       (int)KEVENT_SIGNAL_VALUE(ev[0].ret_data));

	CHECK(kevent_remove_one(kfd, KEVENT_TYPE_SIGNAL, SIGCHLD) == 0, "rm");
	CHECK(kevent_remove_one(kfd, KEVENT_TYPE_SIGNAL, SIGRTMIN + 1) == 0,
	      "rm");
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}
#endif /* KEVENT_TYPE_SIGNAL */

#ifdef KEVENT_RING_POST
/*
 * A posted ring: the kernel writes events into the mapped ring as they
 * happen, so reading them takes no system call at all.
 */
static int demo_posted_ring(int kfd)
{
	static struct cookie c = { "posted" };
	struct kevent_ring *r;
	struct ukevent ev;
	int fd, i, n = 0;

	(void)kfd;
	fd = kevent_init(8, KEVENT_CLOEXEC | KEVENT_RING_POST);
	if (fd < 0 && errno == EINVAL) {
		printf("KEVENT_RING_POST is not in this kernel: skipped\n");
		return 0;
	}
	CHECK(fd >= 0, "kevent_init(8, KEVENT_RING_POST): %s", strerror(errno));
	r = kevent_ring_map(fd, 8);
	CHECK(r, "mmap: %s", strerror(errno));
	CHECK(kevent_add_one(fd, KEVENT_TYPE_USER, 5, KEVENT_USER_TRIGGER, 0,
			     to_user_data(&c)) == 0, "add");
	printf("Trigger user kevent 5 three times, then read the ring\n");
	for (i = 0; i < 3; i++)
		CHECK(kevent_trigger_one(fd, 5) == 0, "trigger");
	/* Posted by the first trigger; the next two merged into its slot. */
	while (kevent_ring_claim(r, &ev)) {
		print_event(&ev);
		n++;
	}
	CHECK(n == 1 && ev.ret_data == 1, "expected one slot, count 1");
	printf("Ring empty: kevent_wait() posts what was merged meanwhile\n");
	CHECK(kevent_wait(fd, 1, NULL) == 1, "kevent_wait");
	CHECK(kevent_ring_claim(r, &ev) && ev.ret_data == 2,
	      "expected the two merged triggers");
	print_event(&ev);
	munmap(r, KEVENT_RING_SIZE(8));
	close(fd);
	return 0;
}
#endif /* KEVENT_RING_POST */

/* ------------------------------------------------------------------ */
/* Driver                                                              */
/* ------------------------------------------------------------------ */

static const struct demo {
	const char *name;
	int (*run)(int kfd);
} demos[] = {
	{ "user kevents woken by another thread", demo_user_thread_wakeup },
	{ "user kevents: triggers are counted", demo_user_coalescing },
	{ "user kevents: level- and edge-triggered", demo_user_et_lt },
	{ "user kevents: one-shot", demo_user_oneshot },
	{ "modify and remove", demo_user_modify_remove },
	{ "poll() on the instance", demo_instance_poll },
	{ "batches and per-entry errors", demo_batch_errors },
#ifdef KEVENT_TYPE_POLL
	{ "a pipe, through KEVENT_TYPE_POLL", demo_pipe },
#endif
#ifdef KEVENT_TYPE_TIMER
	{ "timers, through KEVENT_TYPE_TIMER", demo_timer },
#endif
#ifdef KEVENT_TYPE_INODE
	{ "a directory, through KEVENT_TYPE_INODE", demo_directory },
#endif
#ifdef KEVENT_TYPE_SOCKET
	{ "sockets, through KEVENT_TYPE_SOCKET", demo_socket },
#endif
#ifdef KEVENT_TYPE_AIO
	{ "socket I/O done by the kernel, through KEVENT_TYPE_AIO", demo_aio },
#endif
#ifdef KEVENT_TYPE_SIGNAL
	{ "signals, through KEVENT_TYPE_SIGNAL", demo_signal },
#endif
#ifdef KEVENT_RING_POST
	{ "a posted ring: events without a system call", demo_posted_ring },
#endif
};

int main(void)
{
	unsigned int i, failed = 0;
	int kfd, n;
	struct ukevent ev[8];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("kevent demo\n");

	kfd = kevent_init(0, KEVENT_CLOEXEC);
	if (kfd < 0) {
		printf("kevent_init: %s%s\n", strerror(errno),
		       errno == ENOSYS ? " (kernel without kevent)" : "");
		return 1;
	}
	printf("kevent_init() = fd %d\n", kfd);

	for (i = 0; i < ARRAY_SIZE(demos); i++) {
		printf("\n== %s ==\n", demos[i].name);
		if (demos[i].run(kfd)) {
			failed++;
			/* Start the next demo from a clean instance. */
			close(kfd);
			kfd = kevent_init(0, KEVENT_CLOEXEC);
			if (kfd < 0) {
				printf("kevent_init: %s\n", strerror(errno));
				return 1;
			}
			continue;
		}
		/* Every demo cleans up after itself: nothing may be left. */
		n = kevent_get_events(kfd, 0, 8, ev, NULL);
		if (n != 0) {
			printf("  FAILED: %d stray events after the demo\n", n);
			failed++;
		}
	}
	close(kfd);

	printf("\nkevent demo: %u of %zu demos failed\n", failed,
	       ARRAY_SIZE(demos));
	printf(failed ? "KEVENT DEMO FAILED\n" : "KEVENT DEMO OK\n");
	return failed ? 1 : 0;
}

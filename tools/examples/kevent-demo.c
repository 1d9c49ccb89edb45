// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-demo: a tour of kevent, on libkevent.
 *
 * Runs a series of small demonstrations, one function per event source
 * and feature, printing what it does and what the kernel reports. Each
 * demonstration checks the results it gets; the program exits 0 if all of
 * them are as expected and 1 otherwise, so it doubles as a smoke test
 * inside a QEMU guest.
 *
 * Build, with libkevent installed (make -C tools/lib/kevent install):
 *
 *   gcc -Wall -O2 -o kevent-demo tools/examples/kevent-demo.c -lpthread \
 *       $(pkg-config --cflags --libs libkevent)
 *
 * To add a source: write one
 * "static int demo_<source>(struct kevent_queue *q)" function that
 * returns 0 on success and -1 on an unexpected result (use CHECK()), and
 * add it to demos[] at the end of the file.
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

#include <kevent/kevent.h>

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
	case KEVENT_TYPE_POLL:
		return "poll";
	case KEVENT_TYPE_TIMER:
		return "timer";
	case KEVENT_TYPE_INODE:
		return "inode";
	case KEVENT_TYPE_SOCKET:
		return "socket";
	case KEVENT_TYPE_AIO:
		return "aio";
	case KEVENT_TYPE_SIGNAL:
		return "signal";
	default:
		return "?";
	}
}

static void print_event(const struct ukevent *ev)
{
	char data[64];

	if (ev->type == KEVENT_TYPE_POLL)
		snprintf(data, sizeof(data), "revents=%#" PRIx64 "%s%s",
			 (uint64_t)ev->ret_data,
			 ev->ret_data & POLLIN ? " (POLLIN)" : "",
			 ev->ret_data & POLLHUP ? " (POLLHUP)" : "");
	else if (ev->type == KEVENT_TYPE_SOCKET)
		snprintf(data, sizeof(data), "ready=%s%s%s%s%s backlog=%u",
			 ev->ret_data & KEVENT_SOCKET_RECV ? " RECV" : "",
			 ev->ret_data & KEVENT_SOCKET_SEND ? " SEND" : "",
			 ev->ret_data & KEVENT_SOCKET_ACCEPT ? " ACCEPT" : "",
			 ev->ret_data & KEVENT_SOCKET_HUP ? " HUP" : "",
			 ev->ret_data & KEVENT_SOCKET_ERROR ? " ERROR" : "",
			 KEVENT_SOCKET_BACKLOG(ev->ret_data));
	else if (ev->type == KEVENT_TYPE_AIO)
		snprintf(data, sizeof(data), "bytes=%" PRIu64 " error=%d",
			 (uint64_t)ev->ret_data, ev->ret_error);
	else
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
 * The demos' entries, each carried out on its own with
 * kevent_queue_ctl1(): its result, or the call's error (-errno).
 */
static int user_add(struct kevent_queue *q, uint64_t id, uint16_t req_flags,
		    struct cookie *c)
{
	struct ukevent uk;

	kevent_prep_user(&uk, id, req_flags, to_user_data(c));
	return kevent_queue_ctl1(q, KEVENT_CTL_ADD, &uk);
}

static int trigger(struct kevent_queue *q, uint64_t id)
{
	struct ukevent uk;

	kevent_prep_key(&uk, KEVENT_TYPE_USER, id);
	return kevent_queue_ctl1(q, KEVENT_CTL_TRIGGER, &uk);
}

static int remove_key(struct kevent_queue *q, uint16_t type, uint64_t id)
{
	struct ukevent uk;

	kevent_prep_key(&uk, type, id);
	return kevent_queue_ctl1(q, KEVENT_CTL_REMOVE, &uk);
}

/*
 * Collect events for up to @ms milliseconds (0: only what is ready now)
 * into @ev, printing each one. Returns how many, or -1.
 */
static int collect(struct kevent_queue *q, struct ukevent *ev,
		   unsigned int max, unsigned int min, long ms)
{
	struct __kernel_timespec to = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000,
	};
	struct kevent_wait_args wa;
	int n, i;

	kevent_wait_args_set(&wa, &to, NULL);
	n = kevent_get_events(q->fd, min, max, ev, &wa);
	if (n < 0) {
		printf("  kevent_get_events: %s\n", strerror(-n));
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
	struct kevent_queue *q;
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
		err = trigger(s->q, s->shots[i].id);
		if (err && !s->error)
			s->error = err;
	}
	return NULL;
}

static int shooter_start(struct shooter *s, struct kevent_queue *q,
			 const struct shot *shots, int nr)
{
	s->q = q;
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
static int demo_user_thread_wakeup(struct kevent_queue *q)
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
		err = user_add(q, i + 1, 0, &c[i]);
		CHECK(err == 0, "add id %d: %s", i + 1, strerror(-err));
	}

	printf("A thread fires 2, 1, 3, 100 ms apart; main thread waits\n");
	CHECK(shooter_start(&s, q, shots, 3) == 0, "pthread_create");
	t0 = now_ms();
	while (got < 3) {
		n = collect(q, ev + got, 8 - got, 1, 10000);
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
		CHECK(remove_key(q, KEVENT_TYPE_USER, i + 1) == 0,
		      "remove id %d", i + 1);
	return 0;
}

/* Triggers that come before delivery are counted in one event. */
static int demo_user_coalescing(struct kevent_queue *q)
{
	static struct cookie c = { "counter" };
	struct ukevent ev[4];
	int i, n;

	CHECK(user_add(q, 7, 0, &c) == 0, "add");
	printf("Triggering kevent 7 five times before collecting\n");
	for (i = 0; i < 5; i++)
		CHECK(trigger(q, 7) == 0, "trigger");
	n = collect(q, ev, 4, 0, 0);
	CHECK(n == 1, "%d events, expected one", n);
	CHECK(ev[0].ret_data == 5, "ret_data %" PRIu64 ", expected 5",
	      (uint64_t)ev[0].ret_data);
	printf("Collecting again: the count was consumed\n");
	n = collect(q, ev, 4, 0, 0);
	CHECK(n == 0, "%d events, expected none", n);
	CHECK(remove_key(q, KEVENT_TYPE_USER, 7) == 0, "remove");
	return 0;
}

/*
 * Level- and edge-triggered user kevents. A user kevent's event is its
 * trigger count, which delivery consumes, so both kinds are delivered
 * once per burst of triggers. (For a source with a lasting state, such as
 * a readable pipe, a level-triggered kevent is delivered again for as long
 * as the state lasts, an edge-triggered one only once per change.)
 */
static int demo_user_et_lt(struct kevent_queue *q)
{
	static struct cookie lt = { "level" }, et = { "edge" };
	struct ukevent ev[4];
	int n, round;

	CHECK(user_add(q, 10, 0, &lt) == 0, "add LT");
	CHECK(user_add(q, 11, KEVENT_REQ_ET, &et) == 0, "add ET");

	for (round = 1; round <= 2; round++) {
		printf("Round %d: trigger the level kevent 10 and the edge kevent 11\n",
		       round);
		CHECK(trigger(q, 10) == 0, "trigger 10");
		CHECK(trigger(q, 11) == 0, "trigger 11");
		n = collect(q, ev, 4, 0, 0);
		CHECK(n == 2, "%d events, expected 2", n);
		CHECK(ev[0].id == 10 && ev[1].id == 11, "wrong order");
		CHECK(ev[1].req_flags == KEVENT_REQ_ET, "ET flag not reported");
		printf("  collecting again, nothing new happened:\n");
		n = collect(q, ev, 4, 0, 0);
		CHECK(n == 0, "%d events, expected none", n);
	}

	CHECK(remove_key(q, KEVENT_TYPE_USER, 10) == 0, "remove 10");
	CHECK(remove_key(q, KEVENT_TYPE_USER, 11) == 0, "remove 11");
	return 0;
}

/* A one-shot kevent is removed by its first delivery. */
static int demo_user_oneshot(struct kevent_queue *q)
{
	static struct cookie c = { "once" };
	struct ukevent ev[4];
	int n, err;

	printf("Registering one-shot kevent 20\n");
	CHECK(user_add(q, 20, KEVENT_REQ_ONESHOT, &c) == 0, "add");
	CHECK(trigger(q, 20) == 0, "trigger");
	n = collect(q, ev, 4, 0, 0);
	CHECK(n == 1 && ev[0].id == 20, "expected kevent 20");

	err = trigger(q, 20);
	printf("Triggering it again: %s\n", err ? strerror(-err) : "ok");
	CHECK(err == -ENOENT, "expected ENOENT, it should be gone");
	err = remove_key(q, KEVENT_TYPE_USER, 20);
	CHECK(err == -ENOENT, "remove: expected ENOENT");
	printf("Registering it anew: ");
	err = user_add(q, 20, KEVENT_REQ_ONESHOT, &c);
	printf("%s\n", err ? strerror(-err) : "ok");
	CHECK(err == 0, "re-add");
	CHECK(remove_key(q, KEVENT_TYPE_USER, 20) == 0, "remove");
	return 0;
}

/* MODIFY swaps the cookie; REMOVE drops an undelivered event. */
static int demo_user_modify_remove(struct kevent_queue *q)
{
	static struct cookie old = { "old" }, new = { "new" };
	struct ukevent uk, ev[4];
	int n;

	CHECK(user_add(q, 30, 0, &old) == 0, "add");
	CHECK(trigger(q, 30) == 0, "trigger");
	printf("Kevent 30 triggered with cookie \"old\"; modify it to \"new\"\n");
	kevent_prep_user(&uk, 30, 0, to_user_data(&new));
	CHECK(kevent_queue_ctl1(q, KEVENT_CTL_MODIFY, &uk) == 0, "modify");
	n = collect(q, ev, 4, 0, 0);
	CHECK(n == 1 && ev[0].user_data == to_user_data(&new),
	      "expected one event with the new cookie");

	printf("Trigger kevent 30, then remove it before collecting\n");
	CHECK(trigger(q, 30) == 0, "trigger");
	CHECK(remove_key(q, KEVENT_TYPE_USER, 30) == 0, "remove");
	n = collect(q, ev, 4, 0, 0);
	CHECK(n == 0, "a removed kevent was delivered");
	return 0;
}

/* The instance fd works with poll(), so it can sit in another event loop. */
static int demo_instance_poll(struct kevent_queue *q)
{
	struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
	static const struct shot shots[] = { { 40, 150 } };
	struct ukevent ev[2];
	struct shooter s;
	int n;

	CHECK(user_add(q, 40, 0, NULL) == 0, "add");
	n = poll(&pfd, 1, 0);
	printf("poll() with nothing ready: %d\n", n);
	CHECK(n == 0, "the fd is readable with nothing ready");

	printf("poll() while a thread fires kevent 40 in 150 ms\n");
	CHECK(shooter_start(&s, q, shots, 1) == 0, "pthread_create");
	n = poll(&pfd, 1, 10000);
	CHECK(shooter_join(&s) == 0, "trigger");
	printf("  poll() returned %d, revents=%#x\n", n, pfd.revents);
	CHECK(n == 1 && (pfd.revents & POLLIN), "expected POLLIN");
	n = collect(q, ev, 2, 0, 0);
	CHECK(n == 1 && ev[0].id == 40, "expected kevent 40");
	CHECK(poll(&pfd, 1, 0) == 0, "still readable after collecting");
	CHECK(remove_key(q, KEVENT_TYPE_USER, 40) == 0, "remove");
	return 0;
}

/*
 * A batch: entries carried out in order, each with its command; errors
 * come back per entry, the call reports how many it carried out.
 */
static int demo_batch_errors(struct kevent_queue *q)
{
	struct kevent_change changes[4];
	struct kevent_batch b;
	struct ukevent ev;
	int n, i, err;

	printf("One batch of four: add, bad event mask, duplicate, trigger\n");
	kevent_batch_init(&b, changes, 4);
	kevent_prep_user(kevent_batch_add(&b, KEVENT_CTL_ADD), 50, 0, 0);
	kevent_prep(kevent_batch_add(&b, KEVENT_CTL_ADD), KEVENT_TYPE_USER, 51,
		    0, 0, 0);
	kevent_prep_user(kevent_batch_add(&b, KEVENT_CTL_ADD), 50, 0, 0);
	kevent_prep_key(kevent_batch_add(&b, KEVENT_CTL_TRIGGER),
			KEVENT_TYPE_USER, 50);
	n = kevent_batch_ctl(q, &b);
	printf("  kevent_batch_ctl() = %d\n", n);
	CHECK(n == 4, "expected 4 entries carried out");
	for (i = 0; i < 4; i++) {
		err = kevent_batch_result(&b, i);
		printf("  entry %d: %s\n", i, err ? strerror(-err) : "ok");
	}
	CHECK(kevent_batch_result(&b, 0) == 0, "entry 0");
	CHECK(kevent_batch_result(&b, 1) == -EINVAL, "entry 1");
	CHECK(kevent_batch_result(&b, 2) == -EEXIST, "entry 2");
	CHECK(kevent_batch_result(&b, 3) == 0, "entry 3");
	CHECK(collect(q, &ev, 1, 0, 0) == 1 && ev.id == 50,
	      "the trigger's event");
	CHECK(remove_key(q, KEVENT_TYPE_USER, 50) == 0, "remove");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Demonstrations: KEVENT_TYPE_POLL (files)                            */
/* ------------------------------------------------------------------ */

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
static int demo_pipe(struct kevent_queue *q)
{
	static struct cookie c = { "pipe" };
	struct ukevent uk, ev[4];
	struct writer w;
	char buf[16];
	int p[2], n, err;

	CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
	kevent_prep_poll(&uk, p[0], POLLIN, 0, to_user_data(&c));
	err = kevent_queue_ctl1(q, KEVENT_CTL_ADD, &uk);
	if (err == -EOPNOTSUPP) {
		printf("KEVENT_TYPE_POLL is not in this kernel: skipped\n");
		close(p[0]);
		close(p[1]);
		return 0;
	}
	CHECK(err == 0, "add: %s", strerror(-err));
	printf("Pipe read end (fd %d) registered for POLLIN\n", p[0]);
	n = collect(q, ev, 4, 0, 0);
	CHECK(n == 0, "an empty pipe was reported readable");

	printf("A thread writes into the pipe in 100 ms; main thread waits\n");
	w.fd = p[1];
	w.delay_ms = 100;
	CHECK(pthread_create(&w.thread, NULL, writer_main, &w) == 0,
	      "pthread_create");
	n = collect(q, ev, 4, 1, 10000);
	pthread_join(w.thread, NULL);
	CHECK(n == 1 && ev[0].id == (uint64_t)p[0] && (ev[0].ret_data & POLLIN),
	      "expected POLLIN on fd %d", p[0]);

	printf("Not read yet, so still reported (level-triggered):\n");
	n = collect(q, ev, 4, 0, 0);
	CHECK(n == 1 && (ev[0].ret_data & POLLIN), "expected POLLIN again");
	CHECK(read(p[0], buf, sizeof(buf)) == 5, "read");
	printf("Data read; collecting again:\n");
	n = collect(q, ev, 4, 0, 0);
	CHECK(n == 0, "a drained pipe was reported readable");

	printf("The writer closes its end:\n");
	close(p[1]);
	n = collect(q, ev, 4, 1, 10000);
	CHECK(n == 1 && (ev[0].ret_data & POLLHUP), "expected POLLHUP");

	close(p[0]);
	err = remove_key(q, KEVENT_TYPE_POLL, p[0]);
	printf("Read end closed; removing its kevent: %s\n",
	       err ? strerror(-err) : "ok");
	CHECK(err == -ENOENT, "closing the fd should have removed the kevent");
	return 0;
}

/*
 * Timers: a one-shot and a periodic one in the same instance as
 * everything else. A late reader is told how many periods went by.
 */
static int demo_timer(struct kevent_queue *q)
{
	static struct cookie once = { "one-shot" }, tick = { "every 20 ms" };
	struct ukevent uk, ev[4], *periodic;
	bool seen_once;
	long long t0;
	int n, err;

	kevent_prep_timer(&uk, 1, 50 * 1000000ULL, 0, 0, 0, to_user_data(&once));
	err = kevent_queue_ctl1(q, KEVENT_CTL_ADD, &uk);
	if (err == -EOPNOTSUPP) {
		printf("KEVENT_TYPE_TIMER is not in this kernel: skipped\n");
		return 0;
	}
	CHECK(err == 0, "add one-shot: %s", strerror(-err));
	kevent_prep_timer(&uk, 2, 20 * 1000000ULL, 20 * 1000000ULL, 0, 0,
			  to_user_data(&tick));
	err = kevent_queue_ctl1(q, KEVENT_CTL_ADD, &uk);
	CHECK(err == 0, "add periodic: %s", strerror(-err));
	printf("Timer 1 fires once in 50 ms; timer 2 every 20 ms\n");

	printf("Waiting for the first expiry:\n");
	t0 = now_ms();
	n = collect(q, ev, 4, 1, 10000);
	CHECK(n >= 1 && ev[0].type == KEVENT_TYPE_TIMER && ev[0].id == 2 &&
	      ev[0].ret_data >= 1, "expected timer 2 first");
	/* A slow machine may already have the one-shot too. */
	seen_once = n == 2 && ev[1].id == 1 && ev[1].ret_data == 1;

	printf("Not collecting for 200 ms; then:\n");
	sleep_ms(200);
	n = collect(q, ev, 4, seen_once ? 1 : 2, 10000);
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
	err = remove_key(q, KEVENT_TYPE_TIMER, 1);
	printf("  %s\n", err ? strerror(-err) : "ok");
	CHECK(err == 0, "remove one-shot: %s", strerror(-err));
	err = remove_key(q, KEVENT_TYPE_TIMER, 2);
	CHECK(err == 0, "remove periodic: %s", strerror(-err));
	printf("Periodic timer removed; nothing more arrives:\n");
	sleep_ms(50);
	n = collect(q, ev, 4, 0, 0);
	CHECK(n == 0, "a removed timer fired");
	return 0;
}

/*
 * A directory: entries created and removed are reported, a burst as one
 * event; removing the directory itself breaks the kevent.
 */
static int demo_directory(struct kevent_queue *q)
{
	static struct cookie c = { "spool dir" };
	char dir[] = "/tmp/kevent-demo-XXXXXX", path[64];
	struct ukevent uk, ev[4];
	int dfd, fd, n, i, err;

	CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0, "open: %s", strerror(errno));
	kevent_prep_inode(&uk, dfd, KEVENT_INODE_EVENTS, 0, to_user_data(&c));
	err = kevent_queue_ctl1(q, KEVENT_CTL_ADD, &uk);
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
	n = collect(q, ev, 4, 1, 10000);
	CHECK(n == 1 && ev[0].ret_data == KEVENT_INODE_CREATE,
	      "expected one CREATE event for the burst");

	printf("They are processed and removed:\n");
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/job%d", dir, i);
		CHECK(unlink(path) == 0, "unlink: %s", strerror(errno));
	}
	n = collect(q, ev, 4, 1, 10000);
	CHECK(n == 1 && ev[0].ret_data == KEVENT_INODE_REMOVE,
	      "expected one REMOVE event");

	printf("The directory itself is removed and closed:\n");
	CHECK(rmdir(dir) == 0, "rmdir: %s", strerror(errno));
	close(dfd);
	n = collect(q, ev, 4, 1, 10000);
	CHECK(n == 1 && (ev[0].ret_flags & KEVENT_RET_BROKEN),
	      "expected the kevent to come broken");
	err = remove_key(q, KEVENT_TYPE_INODE, dfd);
	CHECK(err == -ENOENT, "a broken kevent stays registered");
	printf("  (delivered broken once, then removed by the kernel)\n");
	return 0;
}

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
static int demo_socket(struct kevent_queue *q)
{
	static struct cookie lc = { "listener" }, cc = { "connection" };
	struct sockaddr_in addr;
	int lfd, cli[3], srv[3], n, i, err;
	struct ukevent uk, ev[4];
	char buf[16];

	lfd = tcp_listener(&addr);
	CHECK(lfd >= 0, "listener: %s", strerror(errno));
	kevent_prep_socket(&uk, lfd, KEVENT_SOCKET_ACCEPT, 0, to_user_data(&lc));
	err = kevent_queue_ctl1(q, KEVENT_CTL_ADD, &uk);
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
	n = collect(q, ev, 4, 1, 10000);
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
	kevent_prep_socket(&uk, srv[0], KEVENT_SOCKET_RECV, 0, to_user_data(&cc));
	CHECK(kevent_queue_ctl1(q, KEVENT_CTL_ADD, &uk) == 0, "add connection");
	CHECK(write(cli[0], "hi", 2) == 2, "write: %s", strerror(errno));
	n = collect(q, ev, 4, 1, 10000);
	CHECK(n == 1 && KEVENT_SOCKET_READY(ev[0].ret_data) ==
	      KEVENT_SOCKET_RECV, "expected RECV");
	CHECK(read(srv[0], buf, sizeof(buf)) == 2, "read");

	printf("The client closes; HUP comes though only RECV was asked:\n");
	close(cli[0]);
	n = collect(q, ev, 4, 1, 10000);
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

/*
 * Completions: the kernel receives into the application's buffer, and
 * sends a file, and says when it is done.
 */
static int demo_aio(struct kevent_queue *q)
{
	static struct cookie rc = { "aio recv" }, fc = { "aio sendfile" };
	static const char text[] = "kevent sent this file\n";
	char path[] = "/tmp/kevent-demo-XXXXXX", buf[64] = "";
	struct ukevent uk, ev[4];
	int s[2], file, n, err;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) == 0,
	      "socketpair: %s", strerror(errno));
	kevent_prep_recv(&uk, s[0], 0, buf, sizeof(buf), to_user_data(&rc));
	err = kevent_queue_ctl1(q, KEVENT_CTL_ADD, &uk);
	if (err == -EOPNOTSUPP) {
		printf("KEVENT_TYPE_AIO is not in this kernel: skipped\n");
		close(s[0]);
		close(s[1]);
		return 0;
	}
	CHECK(err == 0, "add recv: %s", strerror(-err));
	printf("A receive of up to %zu bytes is in flight; nothing has come:\n",
	       sizeof(buf));
	CHECK(collect(q, ev, 4, 0, 100) == 0, "completed without data");
	printf("The peer writes \"hello\":\n");
	CHECK(write(s[1], "hello", 5) == 5, "write");
	n = collect(q, ev, 4, 1, 10000);
	CHECK(n == 1 && ev[0].ret_data == 5 && !memcmp(buf, "hello", 5),
	      "expected the 5 bytes in the buffer");
	printf("  (the data is in the buffer already: \"%.5s\")\n", buf);

	file = mkstemp(path);
	CHECK(file >= 0 && write(file, text, sizeof(text) - 1) ==
	      (ssize_t)sizeof(text) - 1, "file: %s", strerror(errno));
	unlink(path);
	printf("A sendfile of up to 4096 bytes of a %zu-byte file:\n",
	       sizeof(text) - 1);
	kevent_prep_sendfile(&uk, s[0], file, 0, 4096, 0, to_user_data(&fc));
	CHECK(kevent_queue_ctl1(q, KEVENT_CTL_ADD, &uk) == 0, "add sendfile");
	n = collect(q, ev, 4, 1, 10000);
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

/*
 * Signals as events: blocked, as for a signalfd, and reported with the
 * sender's pid and, for a real-time signal, the value sigqueue() gave.
 */
static int demo_signal(struct kevent_queue *q)
{
	static struct cookie chld = { "SIGCHLD" }, rt = { "SIGRTMIN+1" };
	union sigval val = { .sival_int = 42 };
	struct kevent_change changes[2];
	struct kevent_batch b;
	struct ukevent ev[4];
	sigset_t set, old;
	pid_t child;
	int n, status;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &set, &old);
	kevent_batch_init(&b, changes, 2);
	kevent_prep_signal(kevent_batch_add(&b, KEVENT_CTL_ADD), SIGCHLD, 0,
			   to_user_data(&chld));
	kevent_prep_signal(kevent_batch_add(&b, KEVENT_CTL_ADD), SIGRTMIN + 1,
			   0, to_user_data(&rt));
	n = kevent_batch_ctl(q, &b);
	if (n == 2 && kevent_batch_result(&b, 0) == -EOPNOTSUPP) {
		printf("KEVENT_TYPE_SIGNAL is not in this kernel: skipped\n");
		sigprocmask(SIG_SETMASK, &old, NULL);
		return 0;
	}
	CHECK(n == 2 && !kevent_batch_result(&b, 0) &&
	      !kevent_batch_result(&b, 1), "add signals");

	printf("A child exits; then we sigqueue() ourselves SIGRTMIN+1 with 42\n");
	child = fork();
	if (!child)
		_exit(7);
	n = collect(q, ev, 4, 1, 5000);
	CHECK(n == 1 && KEVENT_SIGNAL_PID(ev[0].ret_data) == child &&
	      KEVENT_SIGNAL_CODE(ev[0].ret_data) == CLD_EXITED,
	      "expected SIGCHLD from the child, CLD_EXITED");
	printf("  (pid %d, CLD_EXITED: reaped with waitpid())\n",
	       KEVENT_SIGNAL_PID(ev[0].ret_data));
	CHECK(waitpid(child, &status, 0) == child && WEXITSTATUS(status) == 7,
	      "waitpid");
	CHECK(sigqueue(getpid(), SIGRTMIN + 1, val) == 0, "sigqueue");
	n = collect(q, ev, 4, 1, 5000);
	CHECK(n == 1 && KEVENT_SIGNAL_VALUE(ev[0].ret_data) == 42,
	      "expected the value 42");
	printf("  (value %d, and the signal was dequeued, as a signalfd does)\n",
	       (int)KEVENT_SIGNAL_VALUE(ev[0].ret_data));

	CHECK(remove_key(q, KEVENT_TYPE_SIGNAL, SIGCHLD) == 0, "rm");
	CHECK(remove_key(q, KEVENT_TYPE_SIGNAL, SIGRTMIN + 1) == 0,
	      "rm");
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

/*
 * A posted ring: the kernel writes events into the mapped ring as they
 * happen, so reading them takes no system call at all.
 */
static int demo_posted_ring(struct kevent_queue *unused)
{
	static struct cookie c = { "posted" };
	struct kevent_queue rq;
	struct ukevent *ev;
	int i, n = 0, err;

	(void)unused;
	err = kevent_queue_init(&rq, 8, KEVENT_CLOEXEC | KEVENT_RING_POST);
	if (err == -EINVAL) {
		printf("KEVENT_RING_POST is not in this kernel: skipped\n");
		return 0;
	}
	CHECK(!err, "kevent_queue_init(8, KEVENT_RING_POST): %s", strerror(-err));
	CHECK(user_add(&rq, 5, 0, &c) == 0, "add");
	printf("Trigger user kevent 5 three times, then read the ring\n");
	for (i = 0; i < 3; i++)
		CHECK(trigger(&rq, 5) == 0, "trigger");
	/* Posted by the first trigger; the next two merged into its slot. */
	while ((ev = kevent_ring_peek(&rq))) {
		print_event(ev);
		CHECK(ev->ret_data == 1, "expected count 1");
		kevent_ring_advance(&rq, 1);
		n++;
	}
	CHECK(n == 1, "expected one slot");
	printf("Ring empty: kevent_wait() posts what was merged meanwhile\n");
	CHECK(kevent_queue_wait(&rq, 1, NULL) == 1, "kevent_wait");
	ev = kevent_ring_peek(&rq);
	CHECK(ev && ev->ret_data == 2, "expected the two merged triggers");
	print_event(ev);
	kevent_ring_advance(&rq, 1);
	kevent_queue_exit(&rq);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Driver                                                              */
/* ------------------------------------------------------------------ */

static const struct demo {
	const char *name;
	int (*run)(struct kevent_queue *q);
} demos[] = {
	{ "user kevents woken by another thread", demo_user_thread_wakeup },
	{ "user kevents: triggers are counted", demo_user_coalescing },
	{ "user kevents: level- and edge-triggered", demo_user_et_lt },
	{ "user kevents: one-shot", demo_user_oneshot },
	{ "modify and remove", demo_user_modify_remove },
	{ "poll() on the instance", demo_instance_poll },
	{ "batches and per-entry errors", demo_batch_errors },
	{ "a pipe, through KEVENT_TYPE_POLL", demo_pipe },
	{ "timers, through KEVENT_TYPE_TIMER", demo_timer },
	{ "a directory, through KEVENT_TYPE_INODE", demo_directory },
	{ "sockets, through KEVENT_TYPE_SOCKET", demo_socket },
	{ "socket I/O done by the kernel, through KEVENT_TYPE_AIO", demo_aio },
	{ "signals, through KEVENT_TYPE_SIGNAL", demo_signal },
	{ "a posted ring: events without a system call", demo_posted_ring },
};

int main(void)
{
	unsigned int i, failed = 0;
	struct kevent_queue q;
	struct ukevent ev[8];
	int n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("kevent demo (libkevent %s)\n", LIBKEVENT_VERSION);

	if (kevent_probe()) {
		printf("kernel without kevent\n");
		return 1;
	}
	n = kevent_queue_init(&q, 0, KEVENT_CLOEXEC);
	if (n) {
		printf("kevent_queue_init: %s\n", strerror(-n));
		return 1;
	}
	printf("kevent_queue_init(): instance fd %d\n", q.fd);

	for (i = 0; i < ARRAY_SIZE(demos); i++) {
		printf("\n== %s ==\n", demos[i].name);
		if (demos[i].run(&q)) {
			failed++;
			/* Start the next demo from a clean instance. */
			kevent_queue_exit(&q);
			n = kevent_queue_init(&q, 0, KEVENT_CLOEXEC);
			if (n) {
				printf("kevent_queue_init: %s\n", strerror(-n));
				return 1;
			}
			continue;
		}
		/* Every demo cleans up after itself: nothing may be left. */
		n = kevent_get_events(q.fd, 0, 8, ev, NULL);
		if (n != 0) {
			printf("  FAILED: %d stray events after the demo\n", n);
			failed++;
		}
	}
	kevent_queue_exit(&q);

	printf("\nkevent demo: %u of %zu demos failed\n", failed,
	       ARRAY_SIZE(demos));
	printf(failed ? "KEVENT DEMO FAILED\n" : "KEVENT DEMO OK\n");
	return failed ? 1 : 0;
}

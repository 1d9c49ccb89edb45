// SPDX-License-Identifier: GPL-2.0
/*
 * registrations: what one registration costs, in time and in kernel
 * memory, with epoll and with kevent (KEVENT_TYPE_POLL), at N of them.
 *
 * N eventfds are opened (the cheapest files with a wait queue: a pipe
 * costs five times the memory, and a million of them do not fit the test
 * machine) and every one is registered for POLLIN, edge-triggered: with
 * epoll, one epoll_ctl() per descriptor; with kevent, one kevent_ctl() per
 * batch of B entries (a back end per batch size). Measured per
 * registration: the time of the registering calls, and the kernel memory
 * they took, as the growth of the slab ("Slab:" in /proc/meminfo) over
 * them: both back ends allocate from the slab only (epoll: an epitem, an
 * eppoll_entry and, per file, an epitems_head; kevent: one object, its
 * first wait-queue entry inside). The instance is closed before the next
 * back end runs; repetitions interleave the back ends, each rotated to a
 * new place, and the first repetition is a warm-up, not counted.
 *
 * Settings (environment, as kevent_bench.c's):
 *   bench_reg=0                registrations per run, a list (0: skip)
 *   bench_reg_batch=64,65536   kevent's batch sizes, a back end each
 *   bench_reg_reps=3           repetitions counted
 * The guest's limits are raised to fit, as root: fs.nr_open,
 * fs.epoll.max_user_watches, user.max_kevents and RLIMIT_NOFILE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <kevent/kevent.h>

#include "bench.h"

#define REG_MAX_LIST	8
#define REG_MAX_REPS	16
#define REG_MAX_BE	(1 + REG_MAX_LIST)

struct reg_run {
	double ns;		/* per registration */
	double bytes;		/* slab growth per registration */
};

/* Kernel slab memory in use, in bytes. */
static long long slab_bytes(void)
{
	char line[256];
	long long kb;

	if (!read_file_line("/proc/meminfo", "Slab:", line, sizeof(line)) ||
	    sscanf(line, "%lld", &kb) != 1)
		fail("no Slab: in /proc/meminfo");
	return kb * 1024;
}

static void write_limit(const char *path, long long value)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%lld\n", value) < 0 || fclose(f))
		fail("%s = %lld: %s", path, value, strerror(errno));
}

/* @n eventfds, in @fds. */
static void open_eventfds(int *fds, int n)
{
	struct rlimit rl = { n + 64, n + 64 };
	int i;

	write_limit("/proc/sys/fs/nr_open", n + 64 > 1048576 ? n + 64 : 1048576);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fail("RLIMIT_NOFILE %d: %s", n + 64, strerror(errno));
	for (i = 0; i < n; i++) {
		fds[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (fds[i] < 0)
			fail("eventfd %d: %s", i, strerror(errno));
	}
}

static void close_fds(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

/* Register @fds with a new epoll instance; returns it. */
static int reg_epoll(const int *fds, int n)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	int ep = epoll_create1(EPOLL_CLOEXEC), i;

	if (ep < 0)
		fail("epoll_create1: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		ev.data.u64 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev))
			fail("epoll_ctl(ADD) %d: %s", i, strerror(errno));
	}
	return ep;
}

/*
 * Register @fds with a new kevent instance, @batch entries per call from
 * @uk (prepared: the call writes only ret_error); returns it.
 */
static int reg_kevent(struct ukevent *uk, int n, int batch)
{
	int kfd = kevent_init(0, KEVENT_CLOEXEC), i, k, done, ret;

	if (kfd < 0)
		fail("kevent_init: %s", strerror(-kfd));
	for (done = 0; done < n; done += k) {
		k = n - done < batch ? n - done : batch;
		ret = kevent_ctl(kfd, KEVENT_CTL_ADD, k, uk + done, 0);
		if (ret != k)
			fail("kevent_ctl(ADD) at %d: %s", done,
			     ret < 0 ? strerror(-ret) : "short");
	}
	for (i = 0; i < n; i++)
		if (uk[i].ret_error)
			fail("kevent_ctl(ADD) entry %d: %s", i,
			     strerror(-uk[i].ret_error));
	return kfd;
}

/* One registering run of back end @b (0: epoll, else kevent/batch[b-1]). */
static struct reg_run reg_once(int b, const int *batch, const int *fds,
			       struct ukevent *uk, int n)
{
	struct reg_run r;
	long long before, after;
	char what[64];
	uint64_t t0, t1;
	int fd;

	if (b)
		snprintf(what, sizeof(what), "registrations N=%d kevent/%d", n,
			 batch[b - 1]);
	else
		snprintf(what, sizeof(what), "registrations N=%d epoll", n);
	bench_step(what);
	usleep(50000);		/* RCU callbacks of the last teardown */
	before = slab_bytes();
	t0 = now_ns();
	fd = b ? reg_kevent(uk, n, batch[b - 1]) : reg_epoll(fds, n);
	t1 = now_ns();
	after = slab_bytes();
	close(fd);
	r.ns = (double)(t1 - t0) / n;
	r.bytes = (double)(after - before) / n;
	return r;
}

static void reg_table(int n, const int *batch, int nr_be, int reps)
{
	static struct reg_run run[REG_MAX_BE][REG_MAX_REPS + 1];
	double v[REG_MAX_REPS];
	struct ukevent *uk;
	char name[32];
	int *fds, b, r, i;

	fds = malloc(n * sizeof(*fds));
	uk = calloc(n, sizeof(*uk));
	if (!fds || !uk)
		fail("malloc for %d registrations", n);
	bench_step("registrations: opening eventfds");
	open_eventfds(fds, n);
	for (i = 0; i < n; i++)
		kevent_prep_poll(&uk[i], fds[i], POLLIN, KEVENT_REQ_ET, i);
	write_limit("/proc/sys/fs/epoll/max_user_watches", 2LL * n + 1024);
	write_limit("/proc/sys/user/max_kevents", 2LL * n + 1024);

	/* Repetition 0 warms up; each starts with the next back end. */
	for (r = 0; r <= reps; r++)
		for (i = 0; i < nr_be; i++) {
			b = (r + i) % nr_be;
			run[b][r] = reg_once(b, batch, fds, uk, n);
		}

	printf("\nregistrations: N=%d eventfds, POLLIN edge-triggered, "
	       "%d reps (+1 warm-up)\n", n, reps);
	printf("  %-14s %24s %24s %24s %8s\n", "back end", "setup ns/reg",
	       "setup speed vs epoll", "slab bytes/reg", "sys/reg");
	for (b = 0; b < nr_be; b++) {
		if (b)
			snprintf(name, sizeof(name), "kevent/%d", batch[b - 1]);
		else
			snprintf(name, sizeof(name), "epoll");
		printf("  %-14s", name);
		for (r = 0; r < reps; r++)
			v[r] = run[b][r + 1].ns;
		print_quart(quartiles(v, reps), "%.0f [%.0f-%.0f]", 25);
		for (r = 0; r < reps; r++)
			v[r] = run[0][r + 1].ns / run[b][r + 1].ns;
		print_quart(quartiles(v, reps), "%.2fx [%.2fx-%.2fx]", 25);
		for (r = 0; r < reps; r++)
			v[r] = run[b][r + 1].bytes;
		print_quart(quartiles(v, reps), "%.0f [%.0f-%.0f]", 25);
		printf(" %8.4f\n", b ? 1.0 / batch[b - 1] : 1.0);
	}
	close_fds(fds, n);
	free(uk);
	free(fds);
}

void bench_registrations(void)
{
	int ns[REG_MAX_LIST], batch[REG_MAX_LIST], nr_n, nr_b, reps, i;
	const char *s = getenv("bench_reg");

	/* Unset or "0": the scenario is skipped. */
	if (!s || !*s || !strcmp(s, "0"))
		return;
	nr_n = parse_list("bench_reg", "", ns, REG_MAX_LIST);
	nr_b = parse_list("bench_reg_batch", "64,65536", batch, REG_MAX_LIST);
	for (i = 0; i < nr_b; i++)
		if (batch[i] > 65536)
			fail("bench_reg_batch: at most 65536 (KEVENT_CTL_MAX_BATCH)");
	reps = parse_int("bench_reg_reps", 3);
	if (reps < 1 || reps > REG_MAX_REPS)
		fail("bench_reg_reps: 1 to %d", REG_MAX_REPS);
	for (i = 0; i < nr_n; i++)
		reg_table(ns[i], batch, 1 + nr_b, reps);
}

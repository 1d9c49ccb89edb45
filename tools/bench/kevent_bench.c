// SPDX-License-Identifier: GPL-2.0
/*
 * kevent_bench: kevent against epoll, io_uring and poll(), in one boot.
 *
 * idle+active: N pipes are registered with a back end. Each round writes
 *   one byte into M of them, chosen at random, then waits through the
 *   back end until all M were reported, reading each pipe as it is
 *   reported. One thread does it all, so the number of CPUs does not
 *   matter: this is the cost of the event path (wakeup callback, queueing,
 *   collecting, copying out), not of scheduling. Measured: time per event
 *   over whole rounds (the writes and reads are included: they are the
 *   "none" row, the floor under every back end), split into the writes
 *   (where the wakeup callbacks run) and the rest, system calls per event,
 *   and the setup cost per registration. Checked: each written pipe is
 *   reported exactly once per round and holds exactly the byte written,
 *   no other pipe is reported, and nothing is left to report at the end.
 *
 * ping-pong: two processes, a pipe each way, one byte bouncing; each side
 *   waits through the back end ("none": a plain blocking read()).
 *   Measured: time and system calls per round trip, both sides counted.
 *   On one CPU the two sides alternate on it: each round trip is two
 *   wakeups and two context switches. With two CPUs or more it runs
 *   twice: both sides pinned to CPU 0, then to CPUs 0 and 1.
 *
 * timers: T periodic timers, all of the same period P, their phases spread
 *   evenly over one period, run for a fixed time: kevent's own timers
 *   (KEVENT_TYPE_TIMER, collected by kevent_get_events() in batches)
 *   against one timerfd per timer, watched by epoll (the usual way), by
 *   kevent (KEVENT_TYPE_POLL) and by io_uring (multishot poll), each
 *   reported timerfd read(). A timer costs CPU time only when it is
 *   handled, so the measure is this process's CPU time (getrusage, user
 *   and system) per expiration, and system calls per expiration. The
 *   timer interrupts that come while the process sleeps are not in it;
 *   a kernel with tick-based CPU accounting cannot tell their cost (its
 *   /proc/stat samples on the very ticks that run the timers). Checked:
 *   every report names a timer and, but for io_uring's (TIMER_EMPTY_OK),
 *   at least one expiration; every timer due in the first half of the
 *   run was reported during it; and after the run, no timer was reported
 *   more expirations than were due, nor fewer than were due a quarter of
 *   a run earlier.
 *
 * latency: one thread blocks in the back end's wait on a pipe; another
 *   waits until it is asleep, pauses a random 20 to 200 us, reads
 *   CLOCK_MONOTONIC and writes the time into the pipe; the waiter reads
 *   the clock when its wait returns. R rounds, split over the
 *   repetitions, pooled: p50, p90, p99 and maximum, and how many rounds
 *   the waiter really slept (a voluntary context switch during the
 *   wait). Like ping-pong, on one CPU and then on two.
 *
 * Each configuration runs every back end once to warm up, then REPS times
 * interleaved: a repetition runs all back ends, in an order that rotates
 * from one repetition to the next, with the same pipes written. Reported:
 * median and interquartile range over the repetitions; ratios to epoll are
 * taken within each repetition, then summarised the same way.
 *
 * Settings come from the environment, so that the kernel command line can
 * give them (the kernel passes unknown "name=value" words to init, and
 * init to its children):
 *   bench_n=100,1000,10000  pipes registered (idle+active)
 *   bench_m=1,10,100        pipes written per round (at most 256)
 *   bench_reps=7            repetitions
 *   bench_ms=250            duration of one idle+active run, milliseconds
 *   bench_pp=2000           round trips of one ping-pong run (0: skip)
 *   bench_be=a,b,...        back ends to run (default: all); a timer back
 *                           end runs when the one it is built on does
 *   bench_timers=1,100,1000 timers of the timers scenario (0: skip it)
 *   bench_timer_period_us=1000  their period, at least 100
 *   bench_timer_ms=500      duration of one timers run, milliseconds
 *   bench_lat_rounds=2000   wakeups measured per back end (0: skip)
 *   bench_reg=...           registrations: see registrations.c
 *   bench_tcp=S1,S2,S3      TCP server scenarios: see tcp_bench.c
 *
 * Exit status: 0, or 1 if a back end failed or reported a wrong event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct sys_count sys_count;

#define MAX_LIST	16
#define MAX_REPS	64
#define MAX_BACKENDS	16

static struct {
	int n[MAX_LIST], nr_n;
	int m[MAX_LIST], nr_m;
	int reps;
	int run_ms;
	int pp_iters;
	int t[MAX_LIST], nr_t;		/* timers */
	int timer_period_us;
	int timer_ms;
	int lat_rounds;
	bool profile;			/* bench_profile=1 */
	bool run[MAX_BACKENDS];
	bool missing[MAX_BACKENDS];	/* asked for, but not in this kernel */
	bool tm_run[MAX_BACKENDS];	/* timer_backends[] */
	bool tm_missing[MAX_BACKENDS];
} cfg;

void fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* xorshift64*: the same pipes are written for every back end. */
static uint64_t rng_state;

static uint32_t rng_next(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return (*state * 0x2545f4914f6cdd1dull) >> 32;
}

static uint32_t rng(void)
{
	return rng_next(&rng_state);
}

/* Let deferred kernel work (RCU callbacks, workers) run between runs. */
static void settle(void)
{
	usleep(20000);
}

/* ------------------------------------------------------------------ */
/* Watchdog: a back end that loses an event would block for ever.      */
/* ------------------------------------------------------------------ */

#define WATCHDOG_S 60
#define STR(x) #x
#define XSTR(x) STR(x)

static volatile unsigned long progress;
static char doing[128] = "starting";	/* what is running, for the message */

static void write_err(const char *s)
{
	ssize_t ret = write(2, s, strlen(s));

	(void)ret;	/* nothing to do if it fails */
}

/* A scenario of another file (registrations.c) says what it starts. */
void bench_step(const char *what)
{
	snprintf(doing, sizeof(doing), "%s", what);
	progress++;
}

static void watchdog(int sig)
{
	static unsigned long seen = -1;

	(void)sig;
	if (progress != seen) {
		seen = progress;
		return;
	}
	/* Only async-signal-safe calls here. */
	write_err("FAIL: no progress for " XSTR(WATCHDOG_S) " s (an event was lost?): ");
	write_err(doing);
	write_err("\n");
	_exit(1);
}

static void watchdog_start(void)
{
	struct sigaction sa = { .sa_handler = watchdog, .sa_flags = SA_RESTART };
	struct itimerval it = {
		.it_interval = { .tv_sec = WATCHDOG_S },
		.it_value = { .tv_sec = WATCHDOG_S },
	};

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */

/* One run of one back end. */
struct sample {
	double ns;		/* per event, or per round trip */
	double write_ns;	/* of which in write() (wakeup callbacks) */
	double sys;		/* wait and ctl system calls, likewise */
	double io;		/* read and write system calls, likewise */
	double setup_ns;	/* per registration (idle+active) */
	double setup_sys;	/* system calls per registration */
	/* timers: ns, sys and io are per expiration, ns of CPU time */
	double load;		/* CPU time / run time */
	double batch;		/* expirations per report */
	double due;		/* expirations reported / due in the run */
	uint64_t events;	/* idle+active: reported in the run */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Quantile @p of the @n sorted values @s, interpolating linearly. */
static double quantile(const double *s, int n, double p)
{
	double x = (n - 1) * p;
	int i = (int)x;

	return i + 1 < n ? s[i] + (x - i) * (s[i + 1] - s[i]) : s[i];
}

/* Quartiles of at most MAX_REPS values; NaN values are left out. */
struct quart quartiles(const double *v, int n)
{
	double s[MAX_REPS];
	struct quart q;
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (!isnan(v[i]))
			s[k++] = v[i];
	if (!k)
		return (struct quart){ NAN, NAN, NAN };
	qsort(s, k, sizeof(*s), cmp_double);
	q.q1 = quantile(s, k, 0.25);
	q.med = quantile(s, k, 0.5);
	q.q3 = quantile(s, k, 0.75);
	return q;
}

/* The index of the back end called @name in @tab, or -1. */
static int index_in(const struct backend *tab, int nr, const char *name)
{
	int i;

	for (i = 0; name && i < nr; i++)
		if (!strcmp(tab[i].name, name))
			return i;
	return -1;
}

static int backend_index(const char *name)
{
	return index_in(backends, nr_backends, name);
}

/*
 * Per-repetition ratio of back end @base's time to back end @b's, as a
 * speed: base ns / own ns, above 1 when @b is faster.
 */
static struct quart ratio_to(struct sample s[][MAX_REPS], int b, int base,
			     int reps, double (*metric)(const struct sample *))
{
	double r[MAX_REPS];
	int i;

	for (i = 0; i < reps; i++)
		r[i] = metric(&s[base][i]) / metric(&s[b][i]);
	return quartiles(r, reps);
}

static struct quart speed_vs_base(struct sample s[][MAX_REPS], int b, int reps,
				  double (*metric)(const struct sample *))
{
	int base = backend_index(backends[b].base);

	if (base < 0)
		base = b;	/* epoll itself: 1.00 by definition */
	if (!cfg.run[base])
		return (struct quart){ NAN, NAN, NAN };
	return ratio_to(s, b, base, reps, metric);
}

/* Median over the repetitions of ns/event above the "none" row's. */
static double over_floor(struct sample s[][MAX_REPS], int b, int reps)
{
	int none = backend_index("none");
	double v[MAX_REPS];
	int i;

	if (none < 0 || !cfg.run[none])
		return NAN;
	for (i = 0; i < reps; i++)
		v[i] = s[b][i].ns - s[none][i].ns;
	return quartiles(v, reps).med;
}

static double metric_ns(const struct sample *s) { return s->ns; }
static double metric_write(const struct sample *s) { return s->write_ns; }
static double metric_rest(const struct sample *s) { return s->ns - s->write_ns; }
static double metric_sys(const struct sample *s) { return s->sys; }
static double metric_io(const struct sample *s) { return s->io; }
static double metric_setup(const struct sample *s) { return s->setup_ns; }
static double metric_setup_sys(const struct sample *s) { return s->setup_sys; }

/* "1234 [1200-1300]" with a width that keeps columns aligned. */
void print_quart(struct quart q, const char *fmt, int width)
{
	char buf[96];

	if (isnan(q.med)) {
		printf("%*s", width, "-");
		return;
	}
	snprintf(buf, sizeof(buf), fmt, q.med, q.q1, q.q3);
	printf("%*s", width, buf);
}

/* The per-back-end table of one configuration. */
/* A back end's @metric over the repetitions. */
static struct quart stat_of(struct sample s[][MAX_REPS], int b, int reps,
			    double (*metric)(const struct sample *))
{
	double v[MAX_REPS];
	int i;

	for (i = 0; i < reps; i++)
		v[i] = metric(&s[b][i]);
	return quartiles(v, reps);
}

/* The per-back-end table of one configuration. */
static void print_table(struct sample s[][MAX_REPS], int reps, bool setup,
			const char *unit)
{
	int b;

	printf("  %-12s %24s", "back end", unit);
	if (setup)
		printf(" %7s %9s", "write", "wait+read");
	printf(" %6s %5s", "sys", "io");
	if (setup)
		printf(" %20s %7s", "setup ns/reg", "sys/reg");
	printf(" %21s", "speed vs epoll");
	if (setup)
		printf(" %18s", "setup vs epoll");
	printf("\n");
	for (b = 0; b < nr_backends; b++) {
		if (!cfg.run[b])
			continue;
		printf("  %-12s ", backends[b].name);
		print_quart(stat_of(s, b, reps, metric_ns), "%.0f [%.0f-%.0f]", 24);
		if (setup)
			printf(" %7.0f %9.0f", stat_of(s, b, reps, metric_write).med,
			       stat_of(s, b, reps, metric_rest).med);
		printf(" %6.2f %5.2f", stat_of(s, b, reps, metric_sys).med,
		       stat_of(s, b, reps, metric_io).med);
		if (setup) {
			printf(" ");
			print_quart(stat_of(s, b, reps, metric_setup),
				    "%.0f [%.0f-%.0f]", 20);
			printf(" %7.4f", stat_of(s, b, reps, metric_setup_sys).med);
		}
		printf(" ");
		print_quart(speed_vs_base(s, b, reps, metric_ns),
			    "%.2fx [%.2f-%.2f]", 21);
		/* poll() and none register nothing worth comparing. */
		if (setup && strcmp(backends[b].name, "poll") &&
		    strcmp(backends[b].name, "none")) {
			printf(" ");
			print_quart(speed_vs_base(s, b, reps, metric_setup),
				    "%.2fx [%.2f-%.2f]", 18);
		}
		printf("\n");
	}
}

/* Each back end's speed ratio in each configuration, for the summary. */
static struct quart summary[MAX_LIST][MAX_LIST][MAX_BACKENDS];
/* Its ns/event above the "none" row's, the cost of the back end itself. */
static double summary_over[MAX_LIST][MAX_LIST][MAX_BACKENDS];
static struct quart summary_setup[MAX_LIST][MAX_BACKENDS];

static void print_ratio_lines(struct sample s[][MAX_REPS], int reps)
{
	int b;

	for (b = 0; b < nr_backends; b++) {
		struct quart q;

		if (!cfg.run[b] || !backends[b].base)
			continue;
		q = speed_vs_base(s, b, reps, metric_ns);
		if (isnan(q.med))
			continue;
		printf("  %s/%s = %.2fx [IQR %.2f-%.2f]\n", backends[b].name,
		       backends[b].base, q.med, q.q1, q.q3);
	}
}

/* ------------------------------------------------------------------ */
/* idle+active                                                         */
/* ------------------------------------------------------------------ */

struct pipes {
	int n;
	int *rd, *wr;
	int *perm;		/* pipe numbers, shuffled as they are chosen */
	uint32_t *written;	/* round stamp of the last write */
	uint32_t *seen;		/* round stamp of the last report */
	uint32_t stamp;		/* never reused, so stale stamps never match */
};

static void pipes_open(struct pipes *p, int n)
{
	int i, fds[2];

	memset(p, 0, sizeof(*p));
	p->n = n;
	p->rd = calloc(n, sizeof(int));
	p->wr = calloc(n, sizeof(int));
	p->perm = calloc(n, sizeof(int));
	p->written = calloc(n, sizeof(uint32_t));
	p->seen = calloc(n, sizeof(uint32_t));
	if (!p->rd || !p->wr || !p->perm || !p->written || !p->seen)
		fail("out of memory for %d pipes", n);
	for (i = 0; i < n; i++) {
		if (pipe2(fds, O_NONBLOCK | O_CLOEXEC))
			fail("pipe %d of %d: %s", i, n, strerror(errno));
		p->rd[i] = fds[0];
		p->wr[i] = fds[1];
		progress++;
	}
}

static void pipes_close(struct pipes *p)
{
	int i;

	for (i = 0; i < p->n; i++) {
		close(p->rd[i]);
		close(p->wr[i]);
	}
	free(p->rd);
	free(p->wr);
	free(p->perm);
	free(p->written);
	free(p->seen);
}

/* Make @m distinct random pipes readable; their numbers go to @chosen. */
static void write_round(struct pipes *p, int m, int *chosen)
{
	int j;

	for (j = 0; j < m; j++) {
		int k = j + rng() % (p->n - j);
		int t = p->perm[j];

		p->perm[j] = p->perm[k];
		p->perm[k] = t;
		chosen[j] = p->perm[j];
		p->written[chosen[j]] = p->stamp;
		if (COUNTED(io, write(p->wr[chosen[j]], "x", 1)) != 1)
			fail("write to pipe %d: %s", chosen[j], strerror(errno));
	}
}

/* A reported pipe: check that it was due, then drain it. */
static void take_event(const struct backend *be, struct pipes *p, int c)
{
	char buf[64];
	ssize_t r;

	if (c < 0 || c >= p->n)
		fail("%s: cookie %d out of range", be->name, c);
	if (p->written[c] != p->stamp)
		fail("%s: pipe %d reported but not written this round",
		     be->name, c);
	if (p->seen[c] == p->stamp)
		fail("%s: pipe %d reported twice in one round", be->name, c);
	p->seen[c] = p->stamp;
	r = COUNTED(io, read(p->rd[c], buf, sizeof(buf)));
	if (r != 1)
		fail("%s: pipe %d: read returned %zd (%s), not the 1 byte written",
		     be->name, c, r, r < 0 ? strerror(errno) : "short");
}

static void run_active(const struct backend *be, struct pipes *p, int m,
		       uint64_t seed, uint64_t run_ns, struct sample *out)
{
	struct be_state s = { .be = be, .fds = p->rd, .nfds = p->n, .fd = -1 };
	int cookies[MAX_EVENTS], chosen[MAX_EVENTS];
	uint64_t t0, t1, t, write_ns = 0, rounds = 0;
	int i, n, got;

	for (i = 0; i < p->n; i++)
		p->perm[i] = i;
	rng_state = seed;

	memset(&sys_count, 0, sizeof(sys_count));
	t0 = now_ns();
	if (be->setup(&s))
		fail("%s: setup with %d pipes", be->name, p->n);
	t1 = now_ns();
	out->setup_ns = (double)(t1 - t0) / p->n;
	out->setup_sys = (double)(sys_count.wait + sys_count.ctl) / p->n;

	memset(&sys_count, 0, sizeof(sys_count));
	t = t0 = now_ns();
	do {
		/*
		 * The writes run the back end's wakeup callbacks (and, for
		 * io_uring, its task work on the way back to user space):
		 * timed apart from the rest of the round.
		 */
		p->stamp++;
		write_round(p, m, chosen);
		t1 = now_ns();
		write_ns += t1 - t;
		s.hint = chosen;
		s.nhint = m;
		for (got = 0; got < m; got += n) {
			n = be->wait(&s, cookies, MAX_EVENTS, true);
			if (n < 0)
				fail("%s: wait", be->name);
			for (i = 0; i < n; i++)
				take_event(be, p, cookies[i]);
		}
		rounds++;
		progress++;
		t = now_ns();
	} while (t - t0 < run_ns);

	out->events = rounds * m;
	out->ns = (double)(t - t0) / (rounds * m);
	out->write_ns = (double)write_ns / (rounds * m);
	out->sys = (double)(sys_count.wait + sys_count.ctl) / (rounds * m);
	out->io = (double)sys_count.io / (rounds * m);

	/* Everything was drained: nothing may be reported any more. */
	s.nhint = 0;
	n = be->wait(&s, cookies, MAX_EVENTS, false);
	if (n < 0)
		fail("%s: final wait", be->name);
	if (n > 0)
		fail("%s: %d events after the last round (pipe %d first)",
		     be->name, n, cookies[0]);
	be_close(&s);
	settle();
}

/*
 * The profile runs twice per back end. Each traced call costs the tracer
 * a fixed amount, which lands in the times of its callers, so a back end
 * made of more traced functions looks dearer than it is. The first pass
 * traces only each back end's entry points (its wait system call, the
 * write and read system calls and its wakeup callback: three or four
 * calls per event for every back end), so that its times compare across
 * back ends; the second traces what those call, to say where the time of
 * one back end goes.
 */
#define PROFILE_SYSCALLS \
	"__x64_sys_kevent_get_events __x64_sys_kevent_wait " \
	"__x64_sys_epoll_wait __x64_sys_io_uring_enter __x64_sys_write " \
	"__x64_sys_read "

static const char profile_entry_filter[] =
	PROFILE_SYSCALLS "kevent_poll_wake ep_poll_callback io_poll_wake";

static const char profile_detail_filter[] =
	PROFILE_SYSCALLS "kevent_* ep_* __wake_up* pipe_poll pipe_read "
	"pipe_write _copy_to_user mutex_lock mutex_unlock "
	"_raw_spin_lock_irq _raw_spin_lock_irqsave io_poll_* io_cqring_wait";

static void bench_profile_pass(struct pipes *p, const char *what,
			       const char *filter, int top)
{
	struct sample junk;
	int b;

	printf("\nprofile, %s: N=%d pipes, M=%d written per round, %d ms per back end\n",
	       what, cfg.n[0], cfg.m[0], cfg.run_ms);
	if (profile_open(filter))
		return;
	for (b = 0; b < nr_backends; b++) {
		if (!cfg.run[b])
			continue;
		snprintf(doing, sizeof(doing), "profile %s", backends[b].name);
		profile_start();
		run_active(&backends[b], p, cfg.m[0], 7, cfg.run_ms * 1000000ull,
			   &junk);
		profile_stop_print(backends[b].name, junk.events, junk.ns, top);
	}
}

/*
 * Profiled runs at the first N and M, after the timed runs (the profiler
 * slows what it traces).
 */
static void bench_profile(void)
{
	struct pipes p;

	pipes_open(&p, cfg.n[0]);
	bench_profile_pass(&p, "entry points", profile_entry_filter, 8);
	bench_profile_pass(&p, "detail", profile_detail_filter, 32);
	pipes_close(&p);
}

static void bench_active(struct pipes *p, int ni, int mi)
{
	static struct sample s[MAX_BACKENDS][MAX_REPS];
	int n = cfg.n[ni], m = cfg.m[mi], rep, k, b;
	uint64_t run_ns = cfg.run_ms * 1000000ull;

	/* Warm up: caches, slabs, the pipes' buffers; not recorded. */
	for (b = 0; b < nr_backends; b++) {
		struct sample junk;

		if (!cfg.run[b])
			continue;
		snprintf(doing, sizeof(doing), "idle+active N=%d M=%d %s warm-up",
			 n, m, backends[b].name);
		run_active(&backends[b], p, m, 42, run_ns / 4, &junk);
	}
	for (rep = 0; rep < cfg.reps; rep++) {
		for (k = 0; k < nr_backends; k++) {
			b = (k + rep) % nr_backends;
			if (!cfg.run[b])
				continue;
			snprintf(doing, sizeof(doing), "idle+active N=%d M=%d %s rep %d",
				 n, m, backends[b].name, rep);
			run_active(&backends[b], p, m, 1000 + rep, run_ns,
				   &s[b][rep]);
		}
	}

	printf("\nidle+active: N=%d pipes, M=%d written per round "
	       "(%d reps x %d ms, median [IQR])\n", n, m, cfg.reps, cfg.run_ms);
	print_table(s, cfg.reps, true, "ns/event");
	print_ratio_lines(s, cfg.reps);
	for (b = 0; b < nr_backends; b++) {
		if (!cfg.run[b])
			continue;
		summary[ni][mi][b] = speed_vs_base(s, b, cfg.reps, metric_ns);
		summary_over[ni][mi][b] = over_floor(s, b, cfg.reps);
		/* Setup does not depend on M: keep the first M's. */
		if (isnan(summary_setup[ni][b].med))
			summary_setup[ni][b] = speed_vs_base(s, b, cfg.reps,
							     metric_setup);
	}
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* ping-pong                                                           */
/* ------------------------------------------------------------------ */

/*
 * Wait through the back end until its one fd is reported, then read @len
 * bytes from it into @buf. With @woke, store when the wait returned
 * ("none" has no wait of its own: when its blocking read returned).
 */
static void pp_take(const struct backend *be, struct be_state *s, int rd,
		    void *buf, size_t len, uint64_t *woke)
{
	static const int zero;
	int cookie, n;
	ssize_t r;

	do {
		s->hint = &zero;
		s->nhint = 1;
		n = be->wait(s, &cookie, 1, true);
		if (n < 0)
			fail("%s: ping-pong wait", be->name);
	} while (n == 0);
	if (woke)
		*woke = now_ns();
	if (cookie != 0)
		fail("%s: ping-pong: cookie %d, not 0", be->name, cookie);
	r = COUNTED(io, read(rd, buf, len));
	if (r != (ssize_t)len)
		fail("%s: ping-pong read: %zd of %zu bytes (%s)", be->name, r,
		     len, r < 0 ? strerror(errno) : "short");
	if (woke && !strcmp(be->name, "none"))
		*woke = now_ns();
}

/*
 * One side: @iters + 1 round trips, the first one a warm-up that is not
 * counted. The parent (@serve false) sends first. Returns the time of the
 * counted round trips.
 */
static uint64_t pp_side(const struct backend *be, int rd, int wr, int iters,
			bool serve)
{
	struct be_state s = { .be = be, .fds = &rd, .nfds = 1, .fd = -1 };
	uint64_t t0 = 0;
	char c;
	int i;

	if (be->setup(&s))
		fail("%s: ping-pong setup", be->name);
	for (i = 0; i <= iters; i++) {
		if (i == 1) {
			memset(&sys_count, 0, sizeof(sys_count));
			t0 = now_ns();
		}
		if (!serve && COUNTED(io, write(wr, "p", 1)) != 1)
			fail("ping-pong write: %s", strerror(errno));
		pp_take(be, &s, rd, &c, 1, NULL);
		if (serve && COUNTED(io, write(wr, "p", 1)) != 1)
			fail("ping-pong write: %s", strerror(errno));
		progress++;
	}
	t0 = now_ns() - t0;
	be_close(&s);
	return t0;
}

/*
 * Where the two sides run: with two CPUs or more, once both on CPU 0 and
 * once on CPUs 0 and 1 (-1: wherever the scheduler puts them).
 */
struct pp_mode {
	const char *name;
	int cpu[2];		/* parent, child */
};

static const struct pp_mode pp_one = { "one CPU", { -1, -1 } };
static const struct pp_mode pp_same = { "both on CPU 0", { 0, 0 } };
static const struct pp_mode pp_two = { "CPUs 0 and 1", { 0, 1 } };

static void pin(int cpu)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	if (cpu >= 0)
		CPU_SET(cpu, &set);
	else
		for (i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	if (sched_setaffinity(0, sizeof(set), &set) && cpu >= 0)
		fail("sched_setaffinity(CPU %d): %s", cpu, strerror(errno));
}

static void run_pingpong(const struct backend *be, const struct pp_mode *mode,
			 int iters, struct sample *out)
{
	struct sys_count child;
	int ping[2], pong[2], status;
	uint64_t ns;
	pid_t pid;

	/* Blocking pipes: "none" reads without waiting first. */
	if (pipe2(ping, O_CLOEXEC) || pipe2(pong, O_CLOEXEC))
		fail("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (!pid) {
		pin(mode->cpu[1]);
		close(ping[1]);
		close(pong[0]);
		pp_side(be, ping[0], pong[1], iters, true);
		/* The child's count travels back on the pong pipe. */
		if (write(pong[1], &sys_count, sizeof(sys_count)) !=
		    sizeof(sys_count))
			_exit(1);
		_exit(0);
	}
	pin(mode->cpu[0]);
	close(ping[0]);
	close(pong[1]);
	ns = pp_side(be, pong[0], ping[1], iters, false);
	pin(-1);
	if (read(pong[0], &child, sizeof(child)) != sizeof(child))
		fail("%s: ping-pong: no count from the other side", be->name);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail("%s: ping-pong: the other side failed", be->name);
	close(ping[1]);
	close(pong[0]);

	out->ns = (double)ns / iters;
	out->sys = (double)(sys_count.wait + sys_count.ctl + child.wait +
			    child.ctl) / iters;
	out->io = (double)(sys_count.io + child.io) / iters;
	settle();
}

static void bench_pingpong(const struct pp_mode *mode)
{
	static struct sample s[MAX_BACKENDS][MAX_REPS];
	int rep, k, b;

	for (b = 0; b < nr_backends; b++) {
		struct sample junk;

		if (!cfg.run[b])
			continue;
		snprintf(doing, sizeof(doing), "ping-pong (%s) %s warm-up",
			 mode->name, backends[b].name);
		run_pingpong(&backends[b], mode, cfg.pp_iters / 10 + 1, &junk);
	}
	for (rep = 0; rep < cfg.reps; rep++) {
		for (k = 0; k < nr_backends; k++) {
			b = (k + rep) % nr_backends;
			if (!cfg.run[b])
				continue;
			snprintf(doing, sizeof(doing), "ping-pong (%s) %s rep %d",
				 mode->name, backends[b].name, rep);
			run_pingpong(&backends[b], mode, cfg.pp_iters, &s[b][rep]);
		}
	}
	printf("\nping-pong, %s: 2 processes, 1 pipe each way, %d round trips "
	       "(%d reps, median [IQR]);\n  none = blocking read(); sys and io: "
	       "both sides\n", mode->name, cfg.pp_iters, cfg.reps);
	print_table(s, cfg.reps, false, "ns/round trip");
	print_ratio_lines(s, cfg.reps);
}

/* ------------------------------------------------------------------ */
/* timers                                                              */
/* ------------------------------------------------------------------ */

/* KEVENT_TIMER_MIN_PERIOD: kevent refuses shorter periods. */
#define TIMER_MIN_PERIOD_US 100

/*
 * The timers' resolution (clock_getres()): without high-resolution timers
 * a tick. hrtimer_forward() raises a shorter period to it, for timerfds
 * and kevents alike: they then expire once per resolution, not per period.
 */
static uint64_t timer_res_ns;

/*
 * It changes once after the boot: high-resolution timers come on only
 * when a clocksource good enough for them is (tsc, after its calibration
 * is refined, seconds after the boot), so each timers run reads it again.
 */
static uint64_t read_timer_res(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC, &res))
		fail("clock_getres: %s", strerror(errno));
	return res.tv_sec * 1000000000ull + res.tv_nsec;
}

static uint64_t timer_period_eff(const struct be_state *s)
{
	return s->period_ns > timer_res_ns ? s->period_ns : timer_res_ns;
}

/* Expirations of timer @i due by @t: at first, first + P, ... up to @t. */
static uint64_t timer_due(const struct be_state *s, int i, uint64_t t)
{
	uint64_t first = timer_first(s, i);

	return t < first ? 0 : (t - first) / timer_period_eff(s) + 1;
}

static uint64_t timers_due(const struct be_state *s, uint64_t t)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < s->nfds; i++)
		sum += timer_due(s, i, t);
	return sum;
}

/* CPU time of this process, user and system, in ns. */
static uint64_t cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		fail("getrusage: %s", strerror(errno));
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

/*
 * One wait: add what it reports to @got, the expirations reported per
 * timer, and mark the timers in @seen (if not NULL). Stores the number of
 * reports in @nr and returns the expirations.
 */
static uint64_t tm_collect(const struct backend *be, struct be_state *s,
			   uint64_t *got, bool *seen, bool block, int *nr)
{
	int cookies[MAX_EVENTS], i, n;
	uint64_t data[MAX_EVENTS], sum = 0;

	s->data = data;
	n = be->wait(s, cookies, MAX_EVENTS, block);
	if (n < 0)
		fail("%s: wait", be->name);
	for (i = 0; i < n; i++) {
		int c = cookies[i];

		if (c < 0 || c >= s->nfds)
			fail("%s: cookie %d out of range", be->name, c);
		if (!data[i] && !(be->flags & TIMER_EMPTY_OK))
			fail("%s: timer %d reported without an expiration",
			     be->name, c);
		got[c] += data[i];
		if (seen)
			seen[c] = true;
		sum += data[i];
	}
	*nr = n;
	return sum;
}

/*
 * After a run from @t0 to @t1: no timer may have been starved, and each
 * must have been reported its expirations, no more, no fewer. The kernel
 * counts an expiration only when the timer's interrupt comes, up to a
 * tick late, and the guest may stall meanwhile: "no fewer" allows a lag
 * of a quarter of the run, 50 ms at least (a back end that loses a
 * quarter of the expirations of a long run still fails); "no more" is
 * exact.
 */
static void tm_check(const struct backend *be, struct be_state *s,
		     uint64_t *got, const bool *seen, uint64_t t0, uint64_t t1)
{
	uint64_t mid = t0 + (t1 - t0) / 2, lag = (t1 - t0) / 4, t;
	int i, n, calls;

	for (i = 0; i < s->nfds; i++)
		if (!seen[i] && timer_due(s, i, mid) > timer_due(s, i, t0))
			fail("%s: timer %d of %d expired in the first half of the run but was not reported in it",
			     be->name, i, s->nfds);

	/*
	 * Take what is ready, until a wait leaves nothing behind (returns
	 * fewer than it could): then everything counted before it is in
	 * @got. Timers that keep expiring are not chased for ever.
	 */
	for (calls = 0; calls <= s->nfds / MAX_EVENTS + 2; calls++) {
		tm_collect(be, s, got, NULL, false, &n);
		if (n < MAX_EVENTS)
			break;
	}
	/* Not less than a few ticks and a guest stall, on short runs. */
	if (lag < 2 * timer_period_eff(s))
		lag = 2 * timer_period_eff(s);
	if (lag < 50000000)
		lag = 50000000;
	t = now_ns();
	for (i = 0; i < s->nfds; i++) {
		if (got[i] > timer_due(s, i, t))
			fail("%s: timer %d: %llu expirations reported, only %llu due",
			     be->name, i, (unsigned long long)got[i],
			     (unsigned long long)timer_due(s, i, t));
		if (got[i] < timer_due(s, i, t - lag))
			fail("%s: timer %d: %llu expirations reported, %llu were due %llu ms ago (lost?)",
			     be->name, i, (unsigned long long)got[i],
			     (unsigned long long)timer_due(s, i, t - lag),
			     (unsigned long long)lag / 1000000);
	}
}

static void run_timers(const struct backend *be, int ntimers, uint64_t run_ns,
		       struct sample *out)
{
	struct be_state s = { .be = be, .nfds = ntimers, .fd = -1,
			      .period_ns = cfg.timer_period_us * 1000ull };
	uint64_t *got = calloc(ntimers, sizeof(*got));
	bool *seen = calloc(ntimers, sizeof(*seen));
	uint64_t t0, t, cpu0, exps = 0, reports = 0;
	int i, n;

	if (!got || !seen)
		fail("out of memory for %d timers", ntimers);
	timer_res_ns = read_timer_res();
	/* A period ahead: most first expiries come after the setup. */
	s.start_ns = now_ns() + s.period_ns;
	if (be->setup(&s))
		fail("%s: setup with %d timers", be->name, ntimers);
	/*
	 * Whatever expired during the setup is not the run's: take it
	 * first, untimed, but do not chase timers that keep expiring.
	 */
	for (i = 0; i <= ntimers / MAX_EVENTS + 1; i++) {
		tm_collect(be, &s, got, NULL, false, &n);
		if (n < MAX_EVENTS)
			break;
	}

	memset(&sys_count, 0, sizeof(sys_count));
	cpu0 = cpu_ns();
	t = t0 = now_ns();
	do {
		exps += tm_collect(be, &s, got, seen, true, &n);
		reports += n;
		progress++;
		t = now_ns();
	} while (t - t0 < run_ns);
	out->ns = cpu_ns() - cpu0;
	if (!exps)
		fail("%s: no expiration in %llu ms", be->name,
		     (unsigned long long)run_ns / 1000000);
	out->load = out->ns / (t - t0);
	out->ns /= exps;
	out->sys = (double)(sys_count.wait + sys_count.ctl) / exps;
	out->io = (double)sys_count.io / exps;
	out->batch = (double)exps / reports;
	out->due = (double)exps / (timers_due(&s, t) - timers_due(&s, t0));

	if (read_timer_res() != timer_res_ns)
		fail("%s: the timer resolution changed during the run (high-resolution timers came on): run again",
		     be->name);
	tm_check(be, &s, got, seen, t0, t);
	be_close(&s);
	free(got);
	free(seen);
	settle();
}

static double metric_batch(const struct sample *s) { return s->batch; }
static double metric_load(const struct sample *s) { return s->load; }
static double metric_report(const struct sample *s) { return s->ns * s->batch; }

/*
 * A process busy all the time cannot keep up: its timers expire several
 * times per report, and its CPU time per expiration is the run's length
 * divided by the expirations, whatever the back end. Then only the cost
 * per report compares the back ends.
 */
#define TM_SATURATED 0.9
static double metric_due(const struct sample *s) { return s->due; }

/* Speed relative to timerfd+epoll: its CPU time / the back end's. */
static struct quart tm_speed(struct sample s[][MAX_REPS], int b, int reps)
{
	int base = index_in(timer_backends, nr_timer_backends,
			    timer_backends[b].base);

	if (base < 0)
		base = b;
	if (!cfg.tm_run[base])
		return (struct quart){ NAN, NAN, NAN };
	return ratio_to(s, b, base, reps, metric_ns);
}

static void print_timer_table(struct sample s[][MAX_REPS], int reps)
{
	int b;

	bool saturated = false;

	printf("  %-16s %24s %9s %5s %6s %6s %7s %7s %21s\n", "back end",
	       "CPU ns/expiration", "ns/report", "load", "sys", "io",
	       "exp/rep", "got/due", "speed vs timerfd");
	for (b = 0; b < nr_timer_backends; b++) {
		double load;

		if (!cfg.tm_run[b])
			continue;
		load = stat_of(s, b, reps, metric_load).med;
		saturated |= load >= TM_SATURATED;
		printf("  %-16s ", timer_backends[b].name);
		print_quart(stat_of(s, b, reps, metric_ns), "%.0f [%.0f-%.0f]", 24);
		printf(" %9.0f %4.0f%% %6.3f %6.3f %7.2f %7.3f ",
		       stat_of(s, b, reps, metric_report).med, 100 * load,
		       stat_of(s, b, reps, metric_sys).med,
		       stat_of(s, b, reps, metric_io).med,
		       stat_of(s, b, reps, metric_batch).med,
		       stat_of(s, b, reps, metric_due).med);
		print_quart(tm_speed(s, b, reps), "%.2fx [%.2f-%.2f]", 21);
		printf("\n");
	}
	for (b = 0; b < nr_timer_backends; b++) {
		struct quart q;

		if (!cfg.tm_run[b] || !timer_backends[b].base)
			continue;
		q = tm_speed(s, b, reps);
		if (!isnan(q.med))
			printf("  %s/%s = %.2fx [IQR %.2f-%.2f]\n",
			       timer_backends[b].name, timer_backends[b].base,
			       q.med, q.q1, q.q3);
	}
	if (saturated)
		printf("  SATURATED: a load of %.0f%% or more: the process could "
		       "not keep up, CPU per\n  expiration is the same for all; "
		       "compare ns/report, or use fewer timers\n",
		       100 * TM_SATURATED);
}

static struct quart summary_tm[MAX_LIST][MAX_BACKENDS];
static bool summary_tm_saturated[MAX_LIST][MAX_BACKENDS];

static void bench_timers(int ti)
{
	static struct sample s[MAX_BACKENDS][MAX_REPS];
	uint64_t run_ns = cfg.timer_ms * 1000000ull;
	int t = cfg.t[ti], rep, k, b;

	for (b = 0; b < nr_timer_backends; b++) {
		struct sample junk;

		if (!cfg.tm_run[b])
			continue;
		snprintf(doing, sizeof(doing), "timers T=%d %s warm-up", t,
			 timer_backends[b].name);
		run_timers(&timer_backends[b], t, run_ns / 4, &junk);
	}
	for (rep = 0; rep < cfg.reps; rep++) {
		for (k = 0; k < nr_timer_backends; k++) {
			b = (k + rep) % nr_timer_backends;
			if (!cfg.tm_run[b])
				continue;
			snprintf(doing, sizeof(doing), "timers T=%d %s rep %d",
				 t, timer_backends[b].name, rep);
			run_timers(&timer_backends[b], t, run_ns, &s[b][rep]);
		}
	}
	printf("\ntimers: T=%d periodic timers, period %d us, phases spread "
	       "over it (%d reps x %d ms,\n  median [IQR]); per expiration: "
	       "CPU = this process's user+sys time (getrusage),\n  sys = "
	       "wait+ctl calls, io = read()s; ns/report = CPU per report; load "
	       "=\n  CPU / run time; exp/rep = expirations per report; "
	       "got/due = expirations\n  reported / due during the run\n",
	       t, cfg.timer_period_us, cfg.reps, cfg.timer_ms);
	if (timer_res_ns > cfg.timer_period_us * 1000ull)
		printf("  (timer resolution %llu us: the timers expire every "
		       "%llu us, not every %d)\n",
		       (unsigned long long)timer_res_ns / 1000,
		       (unsigned long long)timer_res_ns / 1000,
		       cfg.timer_period_us);
	print_timer_table(s, cfg.reps);
	for (b = 0; b < nr_timer_backends; b++) {
		int base = index_in(timer_backends, nr_timer_backends,
				    timer_backends[b].base);

		if (!cfg.tm_run[b])
			continue;
		summary_tm[ti][b] = tm_speed(s, b, cfg.reps);
		summary_tm_saturated[ti][b] =
			stat_of(s, b, cfg.reps, metric_load).med >= TM_SATURATED ||
			(base >= 0 && cfg.tm_run[base] &&
			 stat_of(s, base, cfg.reps, metric_load).med >= TM_SATURATED);
	}
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* latency                                                             */
/* ------------------------------------------------------------------ */

/* What the writer sends: the round, and when it was written. */
struct lat_msg {
	uint64_t round;
	uint64_t sent_ns;
};

/* The writer thread's side of one run. */
struct lat_writer {
	int cpu;
	int go;			/* read: the waiter is about to wait */
	int data;		/* write: the lat_msg the waiter waits for */
	int stat;		/* the waiter's /proc/.../stat, open */
	int rounds;
	uint64_t seed;
};

/* Is the thread whose /proc stat file is open on @fd asleep? */
static bool asleep(int fd)
{
	char buf[512], *p;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		fail("latency: reading the waiter's /proc stat: %s",
		     n < 0 ? strerror(errno) : "empty");
	buf[n] = 0;
	/* "tid (comm) S ...", and comm may hold a ")". */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D');
}

/* Busy-wait: without high-resolution timers a sleep takes a jiffy. */
static void spin_ns(uint64_t ns)
{
	uint64_t t0 = now_ns();

	while (now_ns() - t0 < ns)
		;
}

static void *lat_write(void *arg)
{
	struct lat_writer *w = arg;
	uint64_t seed = w->seed;
	int i;

	pin(w->cpu);
	for (i = 0; i < w->rounds; i++) {
		struct lat_msg m = { .round = i };
		char c;

		if (read(w->go, &c, 1) != 1)
			fail("latency: reading go: %s", strerror(errno));
		/*
		 * Wake a sleeper, not a thread on its way to sleep: let it
		 * get there (on one CPU it needs ours), then give it a
		 * little more, varying, so that the wakeup does not always
		 * come at the same point after it.
		 */
		while (!asleep(w->stat))
			sched_yield();
		spin_ns(20000 + rng_next(&seed) % 180000);
		m.sent_ns = now_ns();
		if (write(w->data, &m, sizeof(m)) != sizeof(m))
			fail("latency: write: %s", strerror(errno));
	}
	return NULL;
}

/* Voluntary context switches of the calling thread: its sleeps. */
static long thread_sleeps(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		fail("getrusage: %s", strerror(errno));
	return ru.ru_nvcsw;
}

/*
 * @rounds wakeups of this thread, on mode->cpu[1], waiting through @be,
 * by a writer thread on mode->cpu[0]. Stores the latencies in @lat (ns)
 * and returns in how many rounds this thread really slept.
 */
static int run_latency(const struct backend *be, const struct pp_mode *mode,
		       int rounds, uint64_t seed, double *lat)
{
	struct lat_writer w = { .cpu = mode->cpu[0], .rounds = rounds,
				.seed = seed };
	struct be_state s = { .be = be, .nfds = 1, .fd = -1 };
	int go[2], data[2], i, n, cookie, slept = 0;
	char path[64];
	pthread_t thread;
	long sleeps;

	/* Blocking pipes: "none" waits in read(). */
	if (pipe2(go, O_CLOEXEC) || pipe2(data, O_CLOEXEC))
		fail("pipe: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", gettid());
	w.stat = open(path, O_RDONLY | O_CLOEXEC);
	if (w.stat < 0)
		fail("%s: %s", path, strerror(errno));
	w.go = go[0];
	w.data = data[1];
	s.fds = &data[0];
	pin(mode->cpu[1]);
	if (be->setup(&s))
		fail("%s: latency setup", be->name);
	errno = pthread_create(&thread, NULL, lat_write, &w);
	if (errno)
		fail("pthread_create: %s", strerror(errno));

	sleeps = thread_sleeps();
	for (i = 0; i < rounds; i++) {
		struct lat_msg m;
		uint64_t woke;
		long now;

		if (write(go[1], "g", 1) != 1)
			fail("latency: writing go: %s", strerror(errno));
		pp_take(be, &s, data[0], &m, sizeof(m), &woke);
		if (m.round != (uint64_t)i)
			fail("%s: latency: round %d got the message of round %llu",
			     be->name, i, (unsigned long long)m.round);
		if (woke < m.sent_ns)
			fail("%s: latency: woke %llu ns before the write",
			     be->name, (unsigned long long)(m.sent_ns - woke));
		lat[i] = woke - m.sent_ns;
		now = thread_sleeps();
		slept += now != sleeps;
		sleeps = now;
		progress++;
	}
	errno = pthread_join(thread, NULL);
	if (errno)
		fail("pthread_join: %s", strerror(errno));
	/* Everything was read: nothing may be reported any more. */
	s.nhint = 0;
	n = be->wait(&s, &cookie, 1, false);
	if (n < 0)
		fail("%s: latency: final wait", be->name);
	if (n > 0)
		fail("%s: latency: an event after the last round", be->name);
	be_close(&s);
	pin(-1);
	close(go[0]);
	close(go[1]);
	close(data[0]);
	close(data[1]);
	close(w.stat);
	settle();
	return slept;
}

/* p50 and p99 of each back end, relative to epoll, for the summary. */
static double summary_lat[2][2][MAX_BACKENDS];
static const char *summary_lat_mode[2];

static void bench_latency(const struct pp_mode *mode, int mi)
{
	static const double pcts[] = { 0.5, 0.9, 0.99 };
	int per = (cfg.lat_rounds + cfg.reps - 1) / cfg.reps;
	int total = per * cfg.reps, slept[MAX_BACKENDS] = { 0 };
	double *lat[MAX_BACKENDS] = { NULL }, p[MAX_BACKENDS][2];
	int rep, k, b, i;

	for (b = 0; b < nr_backends; b++) {
		if (!cfg.run[b])
			continue;
		lat[b] = malloc(total * sizeof(double));
		if (!lat[b])
			fail("out of memory for %d latencies", total);
		snprintf(doing, sizeof(doing), "latency (%s) %s warm-up",
			 mode->name, backends[b].name);
		run_latency(&backends[b], mode, per / 4 + 1, 7, lat[b]);
	}
	for (rep = 0; rep < cfg.reps; rep++) {
		for (k = 0; k < nr_backends; k++) {
			b = (k + rep) % nr_backends;
			if (!cfg.run[b])
				continue;
			snprintf(doing, sizeof(doing), "latency (%s) %s rep %d",
				 mode->name, backends[b].name, rep);
			slept[b] += run_latency(&backends[b], mode, per,
						1000 + rep, lat[b] + rep * per);
		}
	}

	printf("\nlatency, %s: a thread asleep in the wait, woken by a write() "
	       "from another;\n  %d rounds pooled over %d reps; microseconds "
	       "from the write to the wait's return\n  (none: to the blocking "
	       "read's); slept = rounds the waiter really slept;\n  vs epoll = "
	       "epoll's latency / this one's (> 1.00x: lower)\n",
	       mode->name, total, cfg.reps);
	printf("  %-12s %9s %9s %9s %9s %6s %12s %12s\n", "back end", "p50",
	       "p90", "p99", "max", "slept", "p50 vs epoll", "p99 vs epoll");
	for (b = 0; b < nr_backends; b++) {
		if (!cfg.run[b])
			continue;
		qsort(lat[b], total, sizeof(double), cmp_double);
		p[b][0] = quantile(lat[b], total, 0.5);
		p[b][1] = quantile(lat[b], total, 0.99);
	}
	for (b = 0; b < nr_backends; b++) {
		int base = backend_index(backends[b].base);

		if (!cfg.run[b])
			continue;
		if (base < 0)
			base = b;
		printf("  %-12s", backends[b].name);
		for (i = 0; i < 3; i++)
			printf(" %9.1f", quantile(lat[b], total, pcts[i]) / 1000);
		printf(" %9.1f %5.1f%%", lat[b][total - 1] / 1000,
		       100.0 * slept[b] / total);
		for (i = 0; i < 2; i++) {
			double r = cfg.run[base] ? p[base][i] / p[b][i] : NAN;

			summary_lat[mi][i][b] = r;
			if (isnan(r))
				printf(" %12s", "-");
			else
				printf(" %11.2fx", r);
		}
		printf("\n");
	}
	summary_lat_mode[mi] = mode->name;
	for (b = 0; b < nr_backends; b++)
		free(lat[b]);
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Summary, settings, system                                           */
/* ------------------------------------------------------------------ */

/* The header of a summary matrix: one column per (N, M). */
static void print_matrix_head(void)
{
	int ni, mi;

	printf("  %-12s %-9s", "back end", "vs");
	for (ni = 0; ni < cfg.nr_n; ni++)
		for (mi = 0; mi < cfg.nr_m; mi++)
			if (cfg.m[mi] <= cfg.n[ni]) {
				char h[32];

				snprintf(h, sizeof(h), "%d/%d", cfg.n[ni], cfg.m[mi]);
				printf(" %9s", h);
			}
	printf("   (N/M)\n");
}

static void print_summary_timers(void)
{
	int ti, b;

	if (!cfg.nr_t)
		return;
	printf("\nSUMMARY timers: CPU time per expiration relative to "
	       "timerfd+epoll\n  (its CPU ns / the back end's, median of "
	       "per-rep ratios; > 1.00x: cheaper;\n  *: saturated, see the "
	       "table)\n");
	printf("  %-16s", "back end");
	for (ti = 0; ti < cfg.nr_t; ti++)
		printf("   T=%-6d", cfg.t[ti]);
	printf("\n");
	for (b = 0; b < nr_timer_backends; b++) {
		if (!cfg.tm_run[b] || !timer_backends[b].base)
			continue;
		printf("  %-16s", timer_backends[b].name);
		for (ti = 0; ti < cfg.nr_t; ti++) {
			if (isnan(summary_tm[ti][b].med))
				printf(" %9s", "-");
			else
				printf(" %7.2fx%c", summary_tm[ti][b].med,
				       summary_tm_saturated[ti][b] ? '*' : ' ');
		}
		printf("\n");
	}
}

static void print_summary_latency(void)
{
	int mi, i, b;

	if (!summary_lat_mode[0])
		return;
	printf("\nSUMMARY latency: p50 and p99 wakeup latency relative to "
	       "epoll\n  (epoll's / the back end's; > 1.00x: lower "
	       "latency)\n");
	printf("  %-12s %-9s", "back end", "vs");
	for (mi = 0; mi < 2 && summary_lat_mode[mi]; mi++)
		for (i = 0; i < 2; i++)
			printf(" %3s %-13.13s", i ? "p99" : "p50",
			       summary_lat_mode[mi]);
	printf("\n");
	for (b = 0; b < nr_backends; b++) {
		if (!cfg.run[b] || !backends[b].base)
			continue;
		printf("  %-12s %-9s", backends[b].name, backends[b].base);
		for (mi = 0; mi < 2 && summary_lat_mode[mi]; mi++)
			for (i = 0; i < 2; i++) {
				if (isnan(summary_lat[mi][i][b]))
					printf(" %17s", "-");
				else
					printf(" %16.2fx", summary_lat[mi][i][b]);
			}
		printf("\n");
	}
}

static void print_summary(void)
{
	int ni, mi, b;

	printf("\nSUMMARY idle+active: speed relative to epoll with the same "
	       "triggering\n  (epoll ns/event / back end ns/event, median of "
	       "per-rep ratios; > 1.00x: faster than epoll)\n");
	print_matrix_head();
	for (b = 0; b < nr_backends; b++) {
		if (!cfg.run[b] || !backends[b].base)
			continue;
		printf("  %-12s %-9s", backends[b].name, backends[b].base);
		for (ni = 0; ni < cfg.nr_n; ni++)
			for (mi = 0; mi < cfg.nr_m; mi++)
				if (cfg.m[mi] <= cfg.n[ni]) {
					if (isnan(summary[ni][mi][b].med))
						printf(" %9s", "-");
					else
						printf(" %8.2fx", summary[ni][mi][b].med);
				}
		printf("\n");
	}

	printf("\nSUMMARY idle+active: the back end's own cost, ns/event above "
	       "the \"none\" row\n  (median of per-rep differences; the "
	       "write and read system calls taken out)\n");
	print_matrix_head();
	for (b = 0; b < nr_backends; b++) {
		if (!cfg.run[b] || !strcmp(backends[b].name, "none"))
			continue;
		printf("  %-12s %-9s", backends[b].name, "");
		for (ni = 0; ni < cfg.nr_n; ni++)
			for (mi = 0; mi < cfg.nr_m; mi++)
				if (cfg.m[mi] <= cfg.n[ni]) {
					if (isnan(summary_over[ni][mi][b]))
						printf(" %9s", "-");
					else
						printf(" %9.0f", summary_over[ni][mi][b]);
				}
		printf("\n");
	}

	printf("\nSUMMARY setup: registration speed relative to epoll "
	       "(epoll ns/reg / back end ns/reg)\n");
	printf("  %-12s %-9s", "back end", "vs");
	for (ni = 0; ni < cfg.nr_n; ni++)
		printf("   N=%-6d", cfg.n[ni]);
	printf("\n");
	for (b = 0; b < nr_backends; b++) {
		if (!cfg.run[b] || !backends[b].base ||
		    !strcmp(backends[b].name, "poll") ||
		    !strcmp(backends[b].name, "none"))
			continue;
		printf("  %-12s %-9s", backends[b].name, backends[b].base);
		for (ni = 0; ni < cfg.nr_n; ni++) {
			if (isnan(summary_setup[ni][b].med))
				printf(" %9s", "-");
			else
				printf(" %8.2fx", summary_setup[ni][b].med);
		}
		printf("\n");
	}
	print_summary_timers();
	print_summary_latency();
}

/* Parse "a,b,c" into @v; returns the count. */
int parse_list(const char *name, const char *def, int *v, int max)
{
	const char *s = getenv(name);
	char *end;
	int n = 0;

	if (!s || !*s)
		s = def;
	while (*s) {
		if (n == max)
			fail("%s: more than %d values", name, max);
		v[n] = strtol(s, &end, 10);
		if (end == s || v[n] <= 0)
			fail("%s: bad list \"%s\"", name, getenv(name));
		n++;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

int parse_int(const char *name, int def)
{
	const char *s = getenv(name);

	return s && *s ? atoi(s) : def;
}

/*
 * Which timer back ends run: those whose poll back end runs. And the
 * timers' resolution.
 */
static void configure_timers(void)
{
	int i;

	timer_res_ns = read_timer_res();

	for (i = 0; i < nr_timer_backends; i++) {
		const struct backend *tb = &timer_backends[i];
		int on = backend_index(tb->on);

		if (i >= MAX_BACKENDS)
			fail("more than %d timer back ends", MAX_BACKENDS);
		cfg.tm_run[i] = on >= 0 && cfg.run[on];
		if (cfg.tm_run[i] && tb->probe && !tb->probe(tb)) {
			cfg.tm_run[i] = false;
			cfg.tm_missing[i] = true;
		}
	}
}

static void configure(void)
{
	const char *only = getenv("bench_be");
	struct rlimit rl;
	int i, max_n = 0;

	cfg.nr_n = parse_list("bench_n", "100,1000,10000", cfg.n, MAX_LIST);
	cfg.nr_m = parse_list("bench_m", "1,10,100", cfg.m, MAX_LIST);
	cfg.reps = parse_int("bench_reps", 7);
	cfg.run_ms = parse_int("bench_ms", 250);
	cfg.pp_iters = parse_int("bench_pp", 2000);
	/* "bench_timers=0" skips the timers. */
	if (!getenv("bench_timers") || strcmp(getenv("bench_timers"), "0"))
		cfg.nr_t = parse_list("bench_timers", "1,100,1000", cfg.t,
				      MAX_LIST);
	cfg.timer_period_us = parse_int("bench_timer_period_us", 1000);
	cfg.timer_ms = parse_int("bench_timer_ms", 500);
	cfg.lat_rounds = parse_int("bench_lat_rounds", 2000);
	cfg.profile = parse_int("bench_profile", 0) > 0;
	if (cfg.timer_period_us < TIMER_MIN_PERIOD_US)
		fail("bench_timer_period_us: at least %d", TIMER_MIN_PERIOD_US);
	/* Ten periods at least, so that every timer is seen in a run. */
	if ((long long)cfg.timer_ms * 1000 < 10LL * cfg.timer_period_us)
		fail("bench_timer_ms: at least 10 periods");
	if (cfg.lat_rounds < 0)
		fail("bench_lat_rounds: 0 or more");
	if (cfg.reps < 1 || cfg.reps > MAX_REPS)
		fail("bench_reps: 1 to %d", MAX_REPS);
	if (nr_backends > MAX_BACKENDS)
		fail("more than %d back ends", MAX_BACKENDS);
	for (i = 0; i < cfg.nr_m; i++)
		if (cfg.m[i] > MAX_EVENTS)
			fail("bench_m: at most %d", MAX_EVENTS);
	for (i = 0; i < nr_backends; i++) {
		const char *name = backends[i].name, *p = only;
		size_t len = strlen(name);

		/* Is @name one of the comma-separated words of bench_be? */
		cfg.run[i] = !only;
		while (p && (p = strstr(p, name))) {
			if ((p == only || p[-1] == ',') &&
			    (p[len] == ',' || !p[len]))
				cfg.run[i] = true;
			p += len;
		}
		if (cfg.run[i] && backends[i].probe &&
		    !backends[i].probe(&backends[i])) {
			cfg.run[i] = false;
			cfg.missing[i] = true;
		}
	}
	configure_timers();
	for (i = 0; i < cfg.nr_n; i++)
		if (2 * cfg.n[i] > max_n)
			max_n = 2 * cfg.n[i];
	for (i = 0; i < cfg.nr_t; i++)
		if (cfg.t[i] > max_n)
			max_n = cfg.t[i];

	/* Two fds per pipe, one per timerfd, and some to spare. */
	rl.rlim_cur = rl.rlim_max = max_n + 64;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fail("RLIMIT_NOFILE %lu: %s", (unsigned long)rl.rlim_cur,
		     strerror(errno));
}

/*
 * Read into @line the first line of @path that starts with @key, without
 * @key and the newline. Returns false if there is none.
 */
bool read_file_line(const char *path, const char *key, char *line,
		    int size)
{
	FILE *f = fopen(path, "r");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, size, f)) {
		if (strncmp(line, key, strlen(key)))
			continue;
		line[strcspn(line, "\n")] = 0;
		memmove(line, line + strlen(key), strlen(line + strlen(key)) + 1);
		found = true;
	}
	fclose(f);
	return found;
}

static void print_file_line(const char *label, const char *path,
			    const char *key)
{
	char line[512];

	if (read_file_line(path, key, line, sizeof(line)))
		printf("  %-14s %s\n", label, line);
}

#define CLOCKSOURCE "/sys/devices/system/clocksource/clocksource0/current_clocksource"

/*
 * Soon after boot the kernel replaces "tsc-early" with the calibrated
 * "tsc"; under TCG that can take seconds. Do not time across the switch.
 */
static void wait_for_clocksource(void)
{
	char cs[64];
	int i;

	for (i = 0; i < 300; i++) {
		if (!read_file_line(CLOCKSOURCE, "", cs, sizeof(cs)) ||
		    strcmp(cs, "tsc-early"))
			return;
		usleep(100000);
	}
}

static void print_system(void)
{
	static const char *const vulns[] = {
		"meltdown", "spectre_v1", "spectre_v2", "retbleed",
		"spec_store_bypass", "mds",
	};
	struct utsname u;
	uint64_t t0;
	int i;

	uname(&u);
	printf("kevent_bench: kevent vs epoll, io_uring and poll(), one boot\n");
	printf("  %-14s %s %s %s\n", "kernel", u.release, u.version, u.machine);
	printf("  %-14s %ld online\n", "CPUs", sysconf(_SC_NPROCESSORS_ONLN));
	print_file_line("CPU model", "/proc/cpuinfo", "model name\t: ");
	print_file_line("clocksource", CLOCKSOURCE, "");
	for (i = 0; i < (int)(sizeof(vulns) / sizeof(vulns[0])); i++) {
		char path[128];

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/vulnerabilities/%s", vulns[i]);
		print_file_line(vulns[i], path, "");
	}
	t0 = now_ns();
	for (i = 0; i < 1000; i++)
		getppid();
	printf("  %-14s %.0f ns (getppid, for scale)\n", "system call",
	       (now_ns() - t0) / 1000.0);
	printf("  %-14s N=", "settings");
	for (i = 0; i < cfg.nr_n; i++)
		printf("%s%d", i ? "," : "", cfg.n[i]);
	printf(" M=");
	for (i = 0; i < cfg.nr_m; i++)
		printf("%s%d", i ? "," : "", cfg.m[i]);
	printf(" reps=%d run=%d ms ping-pong=%d\n", cfg.reps, cfg.run_ms,
	       cfg.pp_iters);
	printf("  %-14s timers=", "");
	for (i = 0; i < cfg.nr_t; i++)
		printf("%s%d", i ? "," : "", cfg.t[i]);
	printf("%s period=%d us run=%d ms latency=%d rounds\n",
	       cfg.nr_t ? "" : "none", cfg.timer_period_us, cfg.timer_ms,
	       cfg.lat_rounds);
	printf("  %-14s %llu ns (clock_getres, CLOCK_MONOTONIC)\n",
	       "timer res.", (unsigned long long)timer_res_ns);
	for (i = 0; i < nr_backends; i++)
		if (cfg.missing[i])
			printf("  %-14s %s: not supported by this kernel\n",
			       "skipped", backends[i].name);
	for (i = 0; i < nr_timer_backends; i++)
		if (cfg.tm_missing[i])
			printf("  %-14s %s: not supported by this kernel\n",
			       "skipped", timer_backends[i].name);
	printf("\n"
"NOTE: under QEMU TCG (no KVM) absolute times are meaningless: every\n"
"instruction is emulated, system calls and page-table switches cost far more\n"
"than on hardware. Compare RATIOS within this run, and system-call counts.\n"
"\n"
"  ns/event  time per reported event over whole rounds: write + wait +\n"
"            read; \"none\" is write + read alone, the floor of every row\n"
"  sys       wait and ctl system calls per event (or per round trip)\n"
"  io        read and write system calls per event (or per round trip)\n"
"  setup     time / system calls per registered fd, instance included\n"
"  speed vs epoll  epoll's time / this back end's, per repetition;\n"
"            > 1.00x is faster. kevent-LT, poll, none: vs epoll-LT;\n"
"            kevent-ET, kevent-ring, kevent-post, io_uring: vs epoll-ET.\n"
"            kevent-ring: kevent-ET through the mapped ring (kevent_wait)\n"
"            kevent-post: kevent-ET through a posted ring (KEVENT_RING_POST:\n"
"            the wakeup writes the ring; kevent_wait only when it is empty)\n"
"            io_uring-dt: IORING_SETUP_DEFER_TASKRUN|SINGLE_ISSUER\n"
"  timers    CPU time per timer expiration: kevent-timer (KEVENT_TYPE_TIMER)\n"
"            and timerfds watched by epoll, kevent or io_uring; speed vs\n"
"            timerfd+epoll. Without high-resolution timers they expire on\n"
"            ticks, several periods at a time (see exp/rep).\n"
"  latency   percentiles of the wakeup of a thread asleep in the wait.\n");
}

int main(void)
{
	int ni, mi, ti, b;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (ni = 0; ni < MAX_LIST; ni++)
		for (b = 0; b < MAX_BACKENDS; b++)
			summary_setup[ni][b].med = summary_tm[ni][b].med = NAN;
	configure();
	wait_for_clocksource();
	print_system();
	watchdog_start();

	for (ni = 0; ni < cfg.nr_n; ni++) {
		struct pipes p;

		snprintf(doing, sizeof(doing), "opening %d pipes", cfg.n[ni]);
		pipes_open(&p, cfg.n[ni]);
		for (mi = 0; mi < cfg.nr_m; mi++)
			if (cfg.m[mi] <= cfg.n[ni])
				bench_active(&p, ni, mi);
		pipes_close(&p);
	}
	if (cfg.pp_iters > 0) {
		if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
			bench_pingpong(&pp_one);
		} else {
			bench_pingpong(&pp_same);
			bench_pingpong(&pp_two);
		}
	}
	for (ti = 0; ti < cfg.nr_t; ti++)
		bench_timers(ti);
	if (cfg.lat_rounds > 0) {
		if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
			bench_latency(&pp_one, 0);
		} else {
			bench_latency(&pp_same, 0);
			bench_latency(&pp_two, 1);
		}
	}
	print_summary();
	bench_registrations();
	bench_tcp();
	if (cfg.profile)
		bench_profile();
	printf("\nkevent_bench: all events checked, no mismatch\n");
	return 0;
}

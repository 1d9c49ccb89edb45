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
 *   bench_be=a,b,...        back ends to run (default: all)
 *
 * Exit status: 0, or 1 if a back end failed or reported a wrong event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <math.h>
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
	bool run[MAX_BACKENDS];
	bool missing[MAX_BACKENDS];	/* asked for, but not in this kernel */
} cfg;

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* xorshift64*: the same pipes are written for every back end. */
static uint64_t rng_state;

static uint32_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (rng_state * 0x2545f4914f6cdd1dull) >> 32;
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
};

struct quart {
	double q1, med, q3;
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

/* Quartiles; NaN values are left out. */
static struct quart quartiles(const double *v, int n)
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

static int backend_index(const char *name)
{
	int i;

	for (i = 0; name && i < nr_backends; i++)
		if (!strcmp(backends[i].name, name))
			return i;
	return -1;
}

/*
 * Per-repetition ratio of a back end's time to its base's, as a speed:
 * base ns / own ns, above 1 when the back end is faster.
 */
static struct quart speed_vs_base(struct sample s[][MAX_REPS], int b, int reps,
				  double (*metric)(const struct sample *))
{
	int base = backend_index(backends[b].base);
	double r[MAX_REPS];
	int i;

	if (base < 0)
		base = b;	/* epoll itself: 1.00 by definition */
	if (!cfg.run[base])
		return (struct quart){ NAN, NAN, NAN };
	for (i = 0; i < reps; i++)
		r[i] = metric(&s[base][i]) / metric(&s[b][i]);
	return quartiles(r, reps);
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
static void print_quart(struct quart q, const char *fmt, int width)
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

/* Wait through the back end until its one fd is reported, then read it. */
static void pp_take(const struct backend *be, struct be_state *s, int rd)
{
	static const int zero;
	int cookie, n;
	char c;

	do {
		s->hint = &zero;
		s->nhint = 1;
		n = be->wait(s, &cookie, 1, true);
		if (n < 0)
			fail("%s: ping-pong wait", be->name);
	} while (n == 0);
	if (cookie != 0)
		fail("%s: ping-pong: cookie %d, not 0", be->name, cookie);
	if (COUNTED(io, read(rd, &c, 1)) != 1)
		fail("%s: ping-pong read: %s", be->name, strerror(errno));
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
		pp_take(be, &s, rd);
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
}

/* Parse "a,b,c" into @v; returns the count. */
static int parse_list(const char *name, const char *def, int *v, int max)
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

static int parse_int(const char *name, int def)
{
	const char *s = getenv(name);

	return s && *s ? atoi(s) : def;
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
	for (i = 0; i < cfg.nr_n; i++)
		if (cfg.n[i] > max_n)
			max_n = cfg.n[i];

	/* Two fds per pipe, and some to spare. */
	rl.rlim_cur = rl.rlim_max = 2 * max_n + 64;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fail("RLIMIT_NOFILE %lu: %s", (unsigned long)rl.rlim_cur,
		     strerror(errno));
}

/*
 * Read into @line the first line of @path that starts with @key, without
 * @key and the newline. Returns false if there is none.
 */
static bool read_file_line(const char *path, const char *key, char *line,
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
	for (i = 0; i < nr_backends; i++)
		if (cfg.missing[i])
			printf("  %-14s %s: not supported by this kernel\n",
			       "skipped", backends[i].name);
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
"            kevent-ET, kevent-ring, io_uring: vs epoll-ET.\n"
"            kevent-ring: kevent-ET through the mapped ring (kevent_wait)\n"
"            io_uring-dt: IORING_SETUP_DEFER_TASKRUN|SINGLE_ISSUER\n");
}

int main(void)
{
	int ni, mi, b;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (ni = 0; ni < MAX_LIST; ni++)
		for (b = 0; b < MAX_BACKENDS; b++)
			summary_setup[ni][b].med = NAN;
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
		static const struct pp_mode one = { "one CPU", { -1, -1 } };
		static const struct pp_mode same = { "both on CPU 0", { 0, 0 } };
		static const struct pp_mode two = { "CPUs 0 and 1", { 0, 1 } };

		if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
			bench_pingpong(&one);
		} else {
			bench_pingpong(&same);
			bench_pingpong(&two);
		}
	}
	print_summary();
	printf("\nkevent_bench: all events checked, no mismatch\n");
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent_bench: the interface between the harness (kevent_bench.c) and the
 * event back ends (backends.c).
 *
 * A back end watches a set of file descriptors for POLLIN and reports the
 * ready ones as "cookies": the index of the descriptor in the set it was
 * given. Everything the back ends have in common (choosing, writing and
 * draining pipes, checking what was reported, timing, statistics) is in
 * the harness; a back end is only what its API needs.
 */
#ifndef KEVENT_BENCH_H
#define KEVENT_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <kevent/kevent.h>

/*
 * System calls made, by purpose. Every system call of the timed parts goes
 * through COUNTED(), so "system calls per event" is counted, not guessed.
 */
struct sys_count {
	unsigned long wait;	/* collecting events (and io_uring submits) */
	unsigned long ctl;	/* making instances and registering */
	unsigned long io;	/* read() and write() on the pipes */
};
extern struct sys_count sys_count;

#define COUNTED(kind, call) (sys_count.kind++, (call))

/* Events one wait may return; the largest M per round must fit. */
#define MAX_EVENTS 256

struct uring;

/* One instance of a back end, watching @fds. */
struct be_state {
	const struct backend *be;
	const int *fds;		/* watched for POLLIN; cookie i is fds[i] */
	int nfds;
	int fd;			/* kevent, epoll or io_uring fd, or -1 */
	void *buf;		/* event buffer, or poll()'s pollfd array */
	struct uring *ring;	/* io_uring only */
	struct kevent_queue kq;	/* kevent's mapped ring (fd: s->fd) */
	/*
	 * The cookies the harness made ready since the last wait. Only the
	 * "none" back end looks at them: it stands for the work that is the
	 * same for every back end (writes and reads), without any waiting.
	 */
	const int *hint;
	int nhint;
	/* Timer back ends (timer_backends[]) only: */
	uint64_t start_ns;	/* CLOCK_MONOTONIC; see timer_first() */
	uint64_t period_ns;	/* of every timer */
	uint64_t *data;		/* wait() stores cookies[i]'s expirations here */
	int *tfds;		/* timerfds, watched by... */
	struct be_state *inner;	/* ...this instance of a poll back end */
};

struct backend {
	const char *name;
	const char *base;	/* the epoll variant its ratio is taken to */
	unsigned int flags;	/* the back end's own: KEVENT_REQ_ET, ... */
	/*
	 * Timer back ends: the back end of backends[] they are built on
	 * (timerfds are watched through it). They run when it runs.
	 */
	const char *on;
	/* Does this kernel have it? Optional; without it, it does. */
	bool (*probe)(const struct backend *be);
	/* Make an instance and register every fd; 0 or -1 (message printed). */
	int (*setup)(struct be_state *s);
	/*
	 * Store up to @max ready cookies in @cookies and return how many,
	 * or -1 (message printed). @block: wait until at least one is
	 * ready; else return at once, possibly with none. A signal may end
	 * a blocking wait with none.
	 */
	int (*wait)(struct be_state *s, int *cookies, int max, bool block);
	/* Free what is not s->fd or s->buf, which be_close() handles; optional. */
	void (*teardown)(struct be_state *s);
};

extern const struct backend backends[];
extern const int nr_backends;

/*
 * Timer back ends: setup() arms s->nfds periodic timers of s->period_ns
 * each, timer i first expiring at timer_first(s, i); wait() reports
 * cookie i for timer i with, in s->data[], how many times it expired since
 * it was last reported. The phases are spread evenly over one period, as
 * independent timers would be, and every back end arms its timers the
 * same way, at absolute times: what they are given to do is the same.
 */
extern const struct backend timer_backends[];
extern const int nr_timer_backends;

/*
 * Timer back end flag: a report may find nothing to read (s->data[i] is
 * 0). io_uring's multishot poll posts one completion per wakeup, and two
 * can be queued before the timerfd is read.
 */
#define TIMER_EMPTY_OK	0x80000000u

static inline uint64_t timer_first(const struct be_state *s, int i)
{
	return s->start_ns + s->period_ns * i / s->nfds;
}

/* The harness's (kevent_bench.c). */
void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...);
uint64_t now_ns(void);
/* Tell the watchdog that @what starts: it makes progress. */
void bench_step(const char *what);

struct quart {
	double q1, med, q3;
};

struct quart quartiles(const double *v, int n);
/* "1234 [1200-1300]": @fmt takes the median, Q1 and Q3; right-aligned. */
void print_quart(struct quart q, const char *fmt, int width);
/* The bench_* settings: "a,b,c" into @v (at most @max, each > 0), an int. */
int parse_list(const char *name, const char *def, int *v, int max);
int parse_int(const char *name, int def);
/* The first line of @path that starts with @key, without it; false if none. */
bool read_file_line(const char *path, const char *key, char *line, int size);

/* registrations.c: the registrations scenario, if bench_reg asks for it. */
void bench_registrations(void);

/* tcp_bench.c: the TCP server scenarios, if bench_tcp asks for them. */
void bench_tcp(void);

/* Tear down any back end's instance. */
void be_close(struct be_state *s);

/* Print "back end: what: strerror(errno)"; returns -1. */
int be_fail(const struct be_state *s, const char *what);

/*
 * profile.c: ftrace's function profiler over the kernel functions named
 * by @filter (globs, space-separated). profile_open() returns -1, saying
 * why, on a kernel without it; it may be called again with another
 * filter. profile_stop_print() prints the @top functions by time per
 * event, and the run's @ns per event, tracer included.
 */
int profile_open(const char *filter);
void profile_start(void);
void profile_stop_print(const char *label, unsigned long long events,
			double ns, int top);
/* The same, counting CPU @cpu's calls only (-1: all CPUs). */
void profile_stop_print_cpu(const char *label, unsigned long long events,
			    double ns, int top, int cpu);

#endif /* KEVENT_BENCH_H */

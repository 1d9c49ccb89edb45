// SPDX-License-Identifier: GPL-2.0
/*
 * memcached-load: a closed-loop load generator for memcached's text
 * protocol, for the memcached benchmark of tools/libevent.sh: C
 * connections, each with one request in flight (a client that waits for
 * each reply, as most do), nine gets to a set, of K keys with values of V
 * bytes stored first. Every reply is checked byte for byte against the
 * one due (a get of key k returns k's value, which no set changes); the
 * first wrong one ends the run with status 1, naming the connection, the
 * request and what came. After W seconds of warm-up it measures for T
 * seconds (CLOCK_MONOTONIC, which counts instructions under QEMU's
 * -icount) and prints one line:
 *
 *   memcached-load: conns C requests R seconds S server_ns N user_ticks U
 *   sys_ticks K p50_us P p99_us Q dispatches D waits W ... io I syscalls Y
 *
 * server_ns: the CPU time the server (-p PID, all its threads) used in
 * the interval, from its process CPU clock; user_ticks, sys_ticks: how
 * the kernel split it between user space and the kernel (/proc/PID/stat,
 * in clock ticks: sampled, so a share, not a count); p50/p99: the latency of a
 * request, from its write to the last byte of its reply; then the
 * interval's deltas of the counters tools/libevent/ctlcount.c keeps in
 * the shared file -l FILE (the server runs under it), and their system
 * calls. With two CPUs or more the client runs on CPU 1 and the server's
 * threads on CPU 0, so that each wakeup crosses CPUs the same way on
 * every backend. With -f, ftrace's function profiler (a kernel with
 * kunit/profile.config; the caller sets set_ftrace_filter) runs during
 * the interval, and each traced function follows, per CPU:
 *
 *   memcached-profile: cpuN FUNCTION calls/request ns/request
 *
 * (children included; the wakeup callbacks of the server's events run in
 * the client's sends, on CPU 1, so they are in no server_ns.)
 *
 *   memcached-load -c CONNS -t SECONDS [-w SECONDS] [-p PID] [-l FILE]
 *                  [-k KEYS] [-v BYTES] [-P PORT] [-f]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "ctlcount.h"
#include "procstat.h"

#define TRACEFS		"/sys/kernel/tracing"
#define SET_EVERY	10		/* one request in ten is a set */
#define HIST_US		1000000		/* latency buckets of 1 us, to 1 s */

struct conn {
	int fd;
	unsigned long sent;		/* requests sent on it */
	struct timespec start;		/* of the request in flight */
	size_t want, got;		/* reply bytes due, received */
	char expect[4096];		/* the reply due */
	char in[4096];
};

static int nconns, keys = 1000, value_len = 100, port = 11211;
static unsigned long requests;	/* completed in the interval */
static unsigned int hist[HIST_US + 1];
static unsigned long next_key = 88172645463325252UL;	/* xorshift */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("memcached-load: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned int random_key(void)
{
	next_key ^= next_key << 13;
	next_key ^= next_key >> 7;
	next_key ^= next_key << 17;
	return next_key % keys;
}

/* Key k's value: the same bytes on every run. */
static void value_of(unsigned int k, char *buf)
{
	int i;

	for (i = 0; i < value_len; i++)
		buf[i] = 'a' + (k + i) % 26;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EAGAIN)
			die("the server's socket buffer is full: a request was not sent");
		if (n <= 0)
			die("write: %s", n < 0 ? strerror(errno) : "0 bytes");
		buf += n;
		len -= n;
	}
}

/* A set request for key k into buf; its length. */
static size_t set_request(unsigned int k, char *buf)
{
	size_t n = sprintf(buf, "set key:%u 0 0 %d\r\n", k, value_len);

	value_of(k, buf + n);
	memcpy(buf + n + value_len, "\r\n", 2);
	return n + value_len + 2;
}

static void send_request(struct conn *c)
{
	char req[4096];
	unsigned int k = random_key();
	size_t n;

	if (++c->sent % SET_EVERY == 0) {
		n = set_request(k, req);
		c->want = sprintf(c->expect, "STORED\r\n");
	} else {
		n = sprintf(req, "get key:%u\r\n", k);
		c->want = sprintf(c->expect, "VALUE key:%u 0 %d\r\n", k, value_len);
		value_of(k, c->expect + c->want);
		c->want += value_len;
		c->want += sprintf(c->expect + c->want, "\r\nEND\r\n");
	}
	c->got = 0;
	clock_gettime(CLOCK_MONOTONIC, &c->start);
	write_all(c->fd, req, n);
}

/* Reads what the socket has; 1 when the reply is complete (and right). */
static int receive(struct conn *c)
{
	ssize_t n = read(c->fd, c->in + c->got, sizeof(c->in) - c->got);

	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		die("request %lu on fd %d: %s", c->sent, c->fd,
		    n < 0 ? strerror(errno) : "closed by the server");
	c->got += n;
	if (c->got > c->want || memcmp(c->in, c->expect, c->got))
		die("request %lu on fd %d: got \"%.*s\", expected \"%.*s\"",
		    c->sent, c->fd, (int)c->got, c->in, (int)c->want, c->expect);
	return c->got == c->want;
}

static void record(struct conn *c)
{
	struct timespec ts;
	long us;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	us = (ts.tv_sec - c->start.tv_sec) * 1000000 +
	     (ts.tv_nsec - c->start.tv_nsec) / 1000;
	hist[us < HIST_US ? us : HIST_US]++;
	requests++;
}

static double percentile(double p)
{
	unsigned long want = (unsigned long)(requests * p), seen = 0;
	int us;

	for (us = 0; us <= HIST_US; us++) {
		seen += hist[us];
		if (seen > want)
			return us;
	}
	return HIST_US;
}

static int connect_one(void)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect to 127.0.0.1:%d: %s", port, strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Every key stored, one set after another, on a connection of its own. */
static void preload(void)
{
	char req[4096], in[16];
	int fd = connect_one();
	unsigned int k;

	for (k = 0; k < (unsigned int)keys; k++) {
		write_all(fd, req, set_request(k, req));
		if (read(fd, in, 8) != 8 || memcmp(in, "STORED\r\n", 8))
			die("preloading key:%u: no STORED", k);
	}
	close(fd);
}

/* With two CPUs or more: the client on CPU 1, the server on CPU 0. */
static void place(int server)
{
	char path[64];
	cpu_set_t set;
	struct dirent *d;
	DIR *dir;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity: %s", strerror(errno));
	if (!server)
		return;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	snprintf(path, sizeof(path), "/proc/%d/task", server);
	dir = opendir(path);
	if (!dir)
		die("%s: %s", path, strerror(errno));
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' &&
		    sched_setaffinity(atoi(d->d_name), sizeof(set), &set))
			die("placing the server's thread %s: %s", d->d_name,
			    strerror(errno));
	closedir(dir);
}

static unsigned long long server_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		die("the server's CPU clock: %s", strerror(errno));
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The server's user and system CPU time, in clock ticks (all threads). */
static void server_ticks(int pid, unsigned long long *user,
			 unsigned long long *sys)
{
	int ppid;

	if (proc_stat_read(pid, &ppid, user, sys))
		die("/proc/%d/stat: cannot read utime and stime", pid);
}

static void profile_enable(const char *on)
{
	int fd = open(TRACEFS "/function_profile_enabled", O_WRONLY);

	if (fd < 0 || write(fd, on, 1) != 1)
		die("the function profiler: %s", strerror(errno));
	close(fd);
}

/* Every traced function's calls and time per request, per CPU. */
static void profile_print(void)
{
	char path[300], line[512], name[96], unit[8];
	unsigned long hits;
	double us;
	FILE *fp;
	int cpu;

	for (cpu = 0; ; cpu++) {
		snprintf(path, sizeof(path), TRACEFS "/trace_stat/function%d", cpu);
		fp = fopen(path, "r");
		if (!fp)
			break;
		while (fgets(line, sizeof(line), fp))
			if (sscanf(line, " %95s %lu %lf %7s", name, &hits, &us, unit) == 4 &&
			    !strcmp(unit, "us"))	/* not a header line */
				printf("memcached-profile: cpu%d %s %.3f %.0f\n", cpu,
				       name, (double)hits / requests,
				       us * 1000 / requests);
		fclose(fp);
	}
}

/* What the interval's figures are differences of. */
struct sample {
	unsigned long long ns, user, sys;	/* the server's CPU time */
	unsigned long counters[CC_NR];		/* ctlcount.so's */
};

static void take_sample(struct sample *s, int server, clockid_t clock,
			const unsigned long *counters)
{
	if (server) {
		s->ns = server_ns(clock);
		server_ticks(server, &s->user, &s->sys);
	}
	if (counters)
		memcpy(s->counters, counters, sizeof(s->counters));
}

int main(int argc, char **argv)
{
	static const char *const names[CC_NR] = CTLCOUNT_NAMES;
	struct sample before = { 0 }, after = { 0 };
	const unsigned long *counters = NULL;
	double warmup = 1, seconds = 0, t0, t1 = 0, end;
	struct epoll_event evs[256];
	clockid_t clock = 0;
	struct rlimit rl;
	struct conn *conns;
	int server = 0, opt, epfd, i, measuring = 0, profile = 0;

	while ((opt = getopt(argc, argv, "c:t:w:p:l:k:v:P:f")) != -1) {
		switch (opt) {
		case 'c': nconns = atoi(optarg); break;
		case 't': seconds = atof(optarg); break;
		case 'w': warmup = atof(optarg); break;
		case 'p': server = atoi(optarg); break;
		case 'k': keys = atoi(optarg); break;
		case 'v': value_len = atoi(optarg); break;
		case 'P': port = atoi(optarg); break;
		case 'f': profile = 1; break;
		case 'l': {
			int fd = open(optarg, O_RDONLY);

			if (fd < 0)
				die("%s: %s", optarg, strerror(errno));
			counters = mmap(NULL, sizeof(before.counters), PROT_READ,
					MAP_SHARED, fd, 0);
			if (counters == MAP_FAILED)
				die("%s: %s", optarg, strerror(errno));
			close(fd);
			break;
		}
		default:
			die("usage: memcached-load -c CONNS -t SECONDS [-w SECONDS] [-p PID] [-l FILE] [-k KEYS] [-v BYTES] [-P PORT] [-f]");
		}
	}
	if (nconns < 1 || seconds <= 0 || keys < 1 || value_len < 1 ||
	    value_len > 2048)
		die("need -c >= 1, -t > 0, -k >= 1 and -v of 1 to 2048");
	if (server && clock_getcpuclockid(server, &clock))
		die("no CPU clock for process %d", server);
	/* A thousand connections need more than the default 1024 fds. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)nconns + 64) {
		rl.rlim_cur = rl.rlim_max = nconns + 64;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			die("RLIMIT_NOFILE of %d: %s", nconns + 64, strerror(errno));
	}
	place(server);
	preload();

	conns = calloc(nconns, sizeof(*conns));
	epfd = epoll_create1(0);
	if (!conns || epfd < 0)
		die("setting up: %s", strerror(errno));
	for (i = 0; i < nconns; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &conns[i] };

		conns[i].fd = connect_one();
		fcntl(conns[i].fd, F_SETFL, O_NONBLOCK);
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, conns[i].fd, &ev))
			die("epoll_ctl: %s", strerror(errno));
	}
	for (i = 0; i < nconns; i++)
		send_request(&conns[i]);

	t0 = now();
	end = t0 + warmup;
	for (;;) {
		int n = epoll_wait(epfd, evs, 256, 100);
		double t;

		if (n < 0 && errno != EINTR)
			die("epoll_wait: %s", strerror(errno));
		for (i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;

			if (receive(c)) {
				if (measuring)
					record(c);
				send_request(c);
			}
		}
		t = now();
		if (t < end)
			continue;
		if (measuring) {
			if (profile)
				profile_enable("0");
			t1 = t;
			take_sample(&after, server, clock, counters);
			break;
		}
		/* The warm-up is over: the interval starts. */
		measuring = 1;
		t0 = t;
		end = t + seconds;
		take_sample(&before, server, clock, counters);
		if (profile) {
			/* Enabling resets the counts. */
			profile_enable("0");
			profile_enable("1");
		}
	}
	if (!requests)
		die("no request completed in %.1f s", seconds);

	printf("memcached-load: conns %d requests %lu seconds %.3f server_ns %llu user_ticks %llu sys_ticks %llu p50_us %.0f p99_us %.0f",
	       nconns, requests, t1 - t0, after.ns - before.ns,
	       after.user - before.user, after.sys - before.sys,
	       percentile(0.50), percentile(0.99));
	for (i = 0; i < CC_NR; i++) {
		after.counters[i] -= before.counters[i];
		printf(" %s %lu", names[i], after.counters[i]);
	}
	printf(" syscalls %lu\n", ctlcount_syscalls(after.counters));
	if (profile)
		profile_print();
	for (i = 0; i < nconns; i++)
		close(conns[i].fd);
	return 0;
}

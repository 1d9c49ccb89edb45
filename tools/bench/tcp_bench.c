// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP server scenarios: a server in its own process, pinned to CPU 0,
 * its clients in another, pinned to CPU 1, over loopback TCP in the
 * guest. The figure is the server's CPU time per message (its process's
 * CPU clock over the timed part, user and system), with the system calls
 * the server makes per message, counted by the server itself.
 *
 *   S1 stream receive: C connections each stream bytes (S-byte writes);
 *      the server receives and checks every byte (a message is S bytes).
 *   S2 echo/RPC: C connections, rounds of M 64-byte requests on M of them
 *      chosen at random; each round waits for its M replies (a closed
 *      loop); the server checks each request and sends it back, the
 *      client checks each reply.
 *   S3 connection churn: K connections at a time are made, each sends
 *      one request, gets its reply and ends; the server accepts, receives,
 *      replies, sees the end and closes (a message is a connection).
 *
 * Correctness: every byte is checked against what its sender made (a
 * connection's stream names the connection and each byte's offset;
 * requests carry connection and sequence numbers); counts are exact (the
 * run ends when the server has handled exactly the messages sent); after
 * the last reply each stream must end with no byte more. Any mismatch
 * fails the benchmark.
 *
 * Each configuration runs each back end once to warm up, then REPS times
 * interleaved, the order rotated per repetition. Reported: medians and
 * interquartile ranges over the repetitions; ratios to epoll and to
 * io_uring are taken within each repetition, then summarised.
 *
 * Settings (environment, as kevent_bench.c's):
 *   bench_tcp=              scenarios to run: S1,S2,S3 (default: none)
 *   bench_tcp_be=           back ends (default: all), e.g. epoll-LT,io_uring
 *   bench_tcp_reps=5        repetitions
 *   bench_tcp_conns=1000    S2 connections, a list (M above one is skipped)
 *   bench_tcp_m=1,10,100    S2 requests per round
 *   bench_tcp_msgs=20000    S2 messages per run
 *   bench_tcp_s1_conns=4    S1 connections
 *   bench_tcp_s1_size=16384 S1 bytes per write (a multiple of 8)
 *   bench_tcp_s1_msgs=4000  S1 writes per run, all connections together
 *   bench_tcp_s3_conns=2000 S3 connections per run
 *   bench_tcp_s3_k=16       S3 connections at a time
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tcp.h"

/* The back ends, in the order of the tables; a new one is one more line. */
static const struct tcp_backend *const tcp_backends[] = {
	&tcp_epoll_lt,
	&tcp_epoll_et,
	&tcp_uring,
	&tcp_uring_tw,
	&tcp_kevent_post,
	&tcp_kevent_aio,
	&tcp_kevent_recv,
};
#define NR_BE ((int)(sizeof(tcp_backends) / sizeof(tcp_backends[0])))

#define TCP_MAX_REPS	32
#define TCP_MAX_LIST	8
#define RUN_TIMEOUT_S	50	/* one run; the harness's watchdog is 60 s */

static const char *const scn_name[] = { "S1", "S2", "S3" };

static struct {
	bool scn[TCP_NR_SCENARIOS];
	bool run[NR_BE];
	int reps;
	int conns[TCP_MAX_LIST], nr_conns, m[TCP_MAX_LIST], nr_m;
	long long msgs;
	int s1_conns, s1_size;
	long long s1_msgs;
	int s3_conns, s3_k;
	bool profile;		/* bench_profile=1: a profiled S2 run */
} tc;

/* ------------------------------------------------------------------ */
/* Shared by the server and the clients                                */
/* ------------------------------------------------------------------ */

void tcp_fill_msg(uint8_t *msg, uint32_t id, uint32_t seq)
{
	int i;

	memcpy(msg, &id, 4);
	memcpy(msg + 4, &seq, 4);
	for (i = 1; i < TCP_MSG / 8; i++) {
		uint64_t w = tcp_stream_word(id, (uint64_t)seq << 3 | i);

		memcpy(msg + 8 * i, &w, 8);
	}
}

bool tcp_check_msg(const uint8_t *msg, uint32_t id, uint32_t seq)
{
	uint8_t want[TCP_MSG];

	tcp_fill_msg(want, id, seq);
	return !memcmp(msg, want, TCP_MSG);
}

uint64_t cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Server on CPU 0, clients on CPU 1: each side has a CPU of its own. */
void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail("sched_setaffinity(%d): %s", cpu, strerror(errno));
}

/* ------------------------------------------------------------------ */
/* One run                                                             */
/* ------------------------------------------------------------------ */

static int listen_loopback(int *port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 4096) || getsockname(fd, (struct sockaddr *)&a, &len))
		fail("listening socket: %s", strerror(errno));
	*port = ntohs(a.sin_port);
	return fd;
}

/* Read @len bytes from @fd within the run's time; false on end or error. */
static bool read_result(int fd, void *buf, size_t len, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (now_ns() < deadline) {
		int n = poll(&p, 1, 1000);

		if (n < 0 && errno != EINTR)
			return false;
		if (n > 0)
			return read(fd, buf, len) == (ssize_t)len;
	}
	return false;
}

static void reap(pid_t pid, const char *who, const char *be)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail("TCP %s: the %s process failed (status %#x)", be, who, status);
}

static struct tcp_result run_one(const struct tcp_backend *be,
				 const struct tcp_run *run)
{
	struct tcp_result res;
	int go[2], rs[2], rc[2], port, lfd = listen_loopback(&port);
	uint64_t deadline = now_ns() + RUN_TIMEOUT_S * 1000000000ull;
	pid_t srv, cli;
	bool ok;

	if (pipe2(go, O_CLOEXEC) || pipe2(rs, O_CLOEXEC) || pipe2(rc, O_CLOEXEC))
		fail("pipe: %s", strerror(errno));
	fflush(stdout);
	srv = fork();
	if (srv < 0)
		fail("fork: %s", strerror(errno));
	if (!srv) {
		/* Each process holds only its ends: a death is an end of file. */
		close(go[0]);
		close(rs[0]);
		close(rc[0]);
		close(rc[1]);
		tcp_server_main(be, run, lfd, go[1], rs[1]);
	}
	close(lfd);
	cli = fork();
	if (cli < 0)
		fail("fork: %s", strerror(errno));
	if (!cli) {
		close(go[1]);
		close(rs[0]);
		close(rs[1]);
		close(rc[0]);
		tcp_client_main(run, port, go[0], rc[1]);
	}
	close(go[0]);
	close(go[1]);
	close(rs[1]);
	close(rc[1]);
	ok = read_result(rs[0], &res, sizeof(res), deadline) && res.ok &&
	     read_result(rc[0], &res.client_cpu_ns, sizeof(res.client_cpu_ns),
			 deadline);
	close(rs[0]);
	close(rc[0]);
	if (!ok) {
		int st_s = -1, st_c = -1;

		/* Ours to end: they would wait for ever on a lost message. */
		kill(srv, SIGKILL);
		kill(cli, SIGKILL);
		waitpid(srv, &st_s, 0);
		waitpid(cli, &st_c, 0);
		fprintf(stderr, "server status %#x, client status %#x\n", st_s, st_c);
		fail("TCP %s %s: no result (a process failed, or none within %d s: a message lost?)",
		     scn_name[run->scn], be->name, RUN_TIMEOUT_S);
	}
	reap(srv, "server", be->name);
	reap(cli, "client", be->name);
	return res;
}

/* ------------------------------------------------------------------ */
/* Repetitions and tables                                              */
/* ------------------------------------------------------------------ */

struct tsample {
	double cpu;		/* server CPU ns per message */
	double sys, wait, ctl, io;	/* server system calls per message */
	double client;		/* client CPU ns per message */
	double wall;		/* wall ns per message */
};

static double m_cpu(const struct tsample *t) { return t->cpu; }

static struct quart tstat(struct tsample s[][TCP_MAX_REPS], int b, int reps,
			  double (*f)(const struct tsample *))
{
	double v[TCP_MAX_REPS];
	int i;

	for (i = 0; i < reps; i++)
		v[i] = f(&s[b][i]);
	return quartiles(v, reps);
}

static double tmed(struct tsample s[][TCP_MAX_REPS], int b, int reps,
		   size_t off)
{
	double v[TCP_MAX_REPS];
	int i;

	for (i = 0; i < reps; i++)
		v[i] = *(const double *)((const char *)&s[b][i] + off);
	return quartiles(v, reps).med;
}

static int be_index(const char *name)
{
	int b;

	for (b = 0; b < NR_BE; b++)
		if (!strcmp(tcp_backends[b]->name, name))
			return b;
	return -1;
}

/* Per repetition: @base's server CPU / @b's (above 1: @b is cheaper). */
static struct quart tratio(struct tsample s[][TCP_MAX_REPS], int b,
			   const char *base_name, int reps, bool *have)
{
	int base = be_index(base_name), i;
	double v[TCP_MAX_REPS];

	if (base < 0 || !have[base])
		return (struct quart){ NAN, NAN, NAN };
	for (i = 0; i < reps; i++)
		v[i] = s[base][i].cpu / s[b][i].cpu;
	return quartiles(v, reps);
}

/* Summary rows: scenario, back end, median ratio to epoll-LT, sys/msg. */
#define MAX_ROWS 64
static struct {
	char cfg[48];
	const char *be;
	double cpu, lt, et, ur, sys;
} summary[MAX_ROWS];
static int nr_summary;

static const char *const ratio_bases[] = { "epoll-LT", "epoll-ET", "io_uring" };

static void print_tcp_table(const char *cfg, struct tsample s[][TCP_MAX_REPS],
			    bool *have, int reps)
{
	int b, j;

	printf("  %-12s %22s %6s %5s %5s %5s %8s %8s", "back end",
	       "server CPU ns/msg", "sys", "wait", "ctl", "io", "client", "wall");
	for (j = 0; j < 3; j++)
		printf(" %17s", ratio_bases[j]);
	printf("\n");
	for (b = 0; b < NR_BE; b++) {
		struct quart r[3];

		if (!have[b])
			continue;
		printf("  %-12s ", tcp_backends[b]->name);
		print_quart(tstat(s, b, reps, m_cpu), "%.0f [%.0f-%.0f]", 22);
		printf(" %6.3f %5.3f %5.3f %5.3f %8.0f %8.0f",
		       tmed(s, b, reps, offsetof(struct tsample, sys)),
		       tmed(s, b, reps, offsetof(struct tsample, wait)),
		       tmed(s, b, reps, offsetof(struct tsample, ctl)),
		       tmed(s, b, reps, offsetof(struct tsample, io)),
		       tmed(s, b, reps, offsetof(struct tsample, client)),
		       tmed(s, b, reps, offsetof(struct tsample, wall)));
		for (j = 0; j < 3; j++) {
			r[j] = tratio(s, b, ratio_bases[j], reps, have);
			printf(" ");
			print_quart(r[j], "%.2f [%.2f-%.2f]", 17);
		}
		printf("\n");
		if (nr_summary < MAX_ROWS) {
			snprintf(summary[nr_summary].cfg, sizeof(summary[0].cfg),
				 "%s", cfg);
			summary[nr_summary].be = tcp_backends[b]->name;
			summary[nr_summary].cpu = tstat(s, b, reps, m_cpu).med;
			summary[nr_summary].lt = r[0].med;
			summary[nr_summary].et = r[1].med;
			summary[nr_summary].ur = r[2].med;
			summary[nr_summary].sys = tmed(s, b, reps,
						       offsetof(struct tsample, sys));
			nr_summary++;
		}
	}
}

static struct tsample to_sample(const struct tcp_result *r)
{
	double n = r->msgs;
	struct tsample t = {
		.cpu = r->cpu_ns / n,
		.wait = r->sys.wait / n,
		.ctl = r->sys.ctl / n,
		.io = r->sys.io / n,
		.client = r->client_cpu_ns / n,
		.wall = r->wall_ns / n,
	};

	t.sys = t.wait + t.ctl + t.io;
	return t;
}

/* Every back end that serves @run's scenario, warmed up, then interleaved. */
static void bench_config(const struct tcp_run *run, const char *cfg)
{
	static struct tsample s[NR_BE][TCP_MAX_REPS];
	bool have[NR_BE] = { 0 };
	int b, i, rep;

	printf("\n%s\n", cfg);
	for (b = 0; b < NR_BE; b++)
		have[b] = tc.run[b] &&
			  (tcp_backends[b]->scenarios & 1 << run->scn);
	for (b = 0; b < NR_BE; b++) {
		if (!have[b])
			continue;
		bench_step(cfg);
		run_one(tcp_backends[b], run);
	}
	for (rep = 0; rep < tc.reps; rep++) {
		for (i = 0; i < NR_BE; i++) {
			struct tcp_result r;
			char what[128];

			b = (i + rep) % NR_BE;
			if (!have[b])
				continue;
			snprintf(what, sizeof(what), "%s: %s, repetition %d",
				 cfg, tcp_backends[b]->name, rep + 1);
			bench_step(what);
			r = run_one(tcp_backends[b], run);
			s[b][rep] = to_sample(&r);
		}
	}
	print_tcp_table(cfg, s, have, tc.reps);
}

/*
 * bench_profile=1: after the timed runs, one S2 run per back end (the
 * first connection count and M) with ftrace's function profiler on, the
 * server's CPU (0) only: where its kernel time goes, per message. Needs
 * the profiling kernel (BENCH_CONFIG=profile); the tracer's cost is in
 * every figure, so compare its rows with each other only.
 */
static const char tcp_profile_filter[] =
	"__x64_sys_* ksys_read ksys_write do_epoll_wait ep_* "
	"kevent_* __kevent_* io_* __io_* sock_recvmsg sock_sendmsg "
	"tcp_recvmsg tcp_sendmsg tcp_v4_rcv __tcp_transmit_skb "
	"schedule __wake_up* try_to_wake_up";

static void bench_tcp_profile(void)
{
	struct tcp_run run = {
		.scn = TCP_S2, .conns = tc.conns[0], .active = tc.m[0],
		.msgs = tc.msgs / tc.m[0] * tc.m[0], .rbuf = 4096,
		.seed = 0x9e3779b97f4a7c15ull,
	};
	struct tcp_result r;
	char label[96];
	int b;

	printf("\nprofile, S2 echo: %d conns, M=%d, server CPU only\n",
	       run.conns, run.active);
	if (profile_open(tcp_profile_filter))
		return;
	for (b = 0; b < NR_BE; b++) {
		if (!tc.run[b] || !(tcp_backends[b]->scenarios & 1 << TCP_S2))
			continue;
		snprintf(label, sizeof(label), "%s", tcp_backends[b]->name);
		bench_step(label);
		profile_start();
		r = run_one(tcp_backends[b], &run);
		profile_stop_print_cpu(label, run.msgs,
				       (double)r.cpu_ns / run.msgs, 40, 0);
	}
}

/* ------------------------------------------------------------------ */
/* Settings                                                            */
/* ------------------------------------------------------------------ */

static void write_sysctl(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	/* Not fatal: a run that needs it fails, saying why. */
	if (!f || fputs(value, f) < 0 || fclose(f))
		printf("  warning: %s = %s: %s\n", path, value, strerror(errno));
}

/* Is @word one of the comma-separated words of @list? */
static bool in_list(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return true;
		p += len;
	}
	return false;
}

static bool tcp_configure(void)
{
	const char *scn = getenv("bench_tcp"), *only = getenv("bench_tcp_be");
	struct rlimit rl;
	int i, b, max_conns = 0;
	bool any = false;

	for (i = 0; scn && i < TCP_NR_SCENARIOS; i++)
		any |= tc.scn[i] = in_list(scn, scn_name[i]);
	if (!any)
		return false;
	tc.reps = parse_int("bench_tcp_reps", 5);
	tc.nr_conns = parse_list("bench_tcp_conns", "1000", tc.conns,
				 TCP_MAX_LIST);
	tc.nr_m = parse_list("bench_tcp_m", "1,10,100", tc.m, TCP_MAX_LIST);
	tc.msgs = parse_int("bench_tcp_msgs", 20000);
	tc.s1_conns = parse_int("bench_tcp_s1_conns", 4);
	tc.s1_size = parse_int("bench_tcp_s1_size", 16384);
	tc.s1_msgs = parse_int("bench_tcp_s1_msgs", 4000);
	tc.s3_conns = parse_int("bench_tcp_s3_conns", 2000);
	tc.s3_k = parse_int("bench_tcp_s3_k", 16);
	tc.profile = parse_int("bench_profile", 0) > 0;
	if (tc.reps < 1 || tc.reps > TCP_MAX_REPS)
		fail("bench_tcp_reps: 1 to %d", TCP_MAX_REPS);
	if (tc.s1_size < 8 || tc.s1_size % 8 || tc.s1_conns < 1 ||
	    tc.s1_msgs < tc.s1_conns)
		fail("bench_tcp_s1_*: bad settings");
	for (i = 0; i < tc.nr_m; i++)
		if (tc.msgs < tc.m[i])
			fail("bench_tcp_m: at most bench_tcp_msgs");
	for (i = 0; i < tc.nr_conns; i++)
		if (tc.conns[i] > max_conns)
			max_conns = tc.conns[i];
	if (tc.s3_k < 1 || tc.s3_conns < tc.s3_k)
		fail("bench_tcp_s3_*: bad settings");
	for (b = 0; b < NR_BE; b++) {
		tc.run[b] = !only || !*only || in_list(only, tcp_backends[b]->name);
		if (tc.run[b] && tcp_backends[b]->probe &&
		    !tcp_backends[b]->probe()) {
			printf("  skipped        %s: not supported by this kernel\n",
			       tcp_backends[b]->name);
			tc.run[b] = false;
		}
	}

	/*
	 * Room for every connection in each process (the server's and the
	 * client's), and for the stale fds of S3; without CAP_SYS_RESOURCE
	 * (outside the guest) the hard limit must do.
	 */
	rl.rlim_cur = rl.rlim_max = 2 * max_conns + 1024;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		if (rl.rlim_max < (rlim_t)max_conns + 256 || setrlimit(RLIMIT_NOFILE, &rl))
			fail("RLIMIT_NOFILE %d: %s", 2 * max_conns + 1024,
			     strerror(errno));
	}
	write_sysctl("/proc/sys/net/core/somaxconn", "4096");
	write_sysctl("/proc/sys/net/ipv4/tcp_max_syn_backlog", "4096");
	/*
	 * S3 makes tens of thousands of connections in a few minutes; the
	 * client closes first, so TIME_WAIT is its, and it may reuse them.
	 */
	write_sysctl("/proc/sys/net/ipv4/ip_local_port_range", "1024 65535");
	write_sysctl("/proc/sys/net/ipv4/tcp_tw_reuse", "1");
	/*
	 * No TIME_WAIT sockets at all: each run would leave up to a thousand
	 * (S2's server closes first, by exiting), so that later runs would
	 * share the kernel with more sockets than earlier ones; on loopback
	 * nothing is left in flight to need them.
	 */
	write_sysctl("/proc/sys/net/ipv4/tcp_max_tw_buckets", "0");
	return true;
}

static void print_tcp_summary(void)
{
	int i;

	printf("\nTCP summary: server CPU per message, speed (epoll's CPU / the back end's,\n"
	       "median of per-repetition ratios) and server system calls per message\n");
	printf("  %-34s %-12s %10s %9s %9s %9s %8s\n", "scenario", "back end",
	       "CPU ns/msg", "epoll-LT", "epoll-ET", "io_uring", "sys/msg");
	for (i = 0; i < nr_summary; i++)
		printf("  %-34s %-12s %10.0f %8.2fx %8.2fx %8.2fx %8.3f\n",
		       summary[i].cfg, summary[i].be, summary[i].cpu,
		       summary[i].lt, summary[i].et, summary[i].ur,
		       summary[i].sys);
}

void bench_tcp(void)
{
	struct tcp_run run;
	char cfg[160];
	int i, j;

	if (!tcp_configure())
		return;
	printf("\n---- TCP servers: server in one process (CPU 0), clients in another (CPU 1),\n"
	       "loopback TCP; server CPU time (user+system, CLOCK_PROCESS_CPUTIME_ID) per\n"
	       "message; sys = the server's system calls per message (wait: epoll_wait,\n"
	       "kevent_wait, io_uring_enter; ctl: epoll_ctl, kevent_ctl, accept4, close;\n"
	       "io: read, write); client = the client process's CPU ns per message; wall =\n"
	       "elapsed ns per message; last columns: speed of the server's CPU time vs\n"
	       "epoll-LT, epoll-ET and io_uring (their CPU / this one's), median [IQR]\n"
	       "of per-repetition ratios, %d repetitions.\n", tc.reps);
	if (tc.scn[TCP_S1]) {
		run = (struct tcp_run){
			.scn = TCP_S1, .conns = tc.s1_conns, .msg_size = tc.s1_size,
			.msgs = tc.s1_msgs / tc.s1_conns * tc.s1_conns,
			.rbuf = 16384,
		};
		snprintf(cfg, sizeof(cfg), "S1 stream: %d conns, %d B writes",
			 run.conns, run.msg_size);
		printf("\n(S1: %lld writes of %d B per run; receives of %d B)",
		       run.msgs, run.msg_size, run.rbuf);
		bench_config(&run, cfg);
	}
	for (j = 0; tc.scn[TCP_S2] && j < tc.nr_conns; j++) {
		for (i = 0; i < tc.nr_m; i++) {
			if (tc.m[i] > tc.conns[j])
				continue;
			run = (struct tcp_run){
				.scn = TCP_S2, .conns = tc.conns[j], .active = tc.m[i],
				.msgs = tc.msgs / tc.m[i] * tc.m[i], .rbuf = 4096,
				.seed = 0x9e3779b97f4a7c15ull,
			};
			snprintf(cfg, sizeof(cfg), "S2 echo: %d conns, M=%d",
				 run.conns, run.active);
			printf("\n(S2: %lld requests of %d B per run, %d per round)",
			       run.msgs, TCP_MSG, run.active);
			bench_config(&run, cfg);
		}
	}
	if (tc.scn[TCP_S3]) {
		run = (struct tcp_run){
			.scn = TCP_S3, .active = tc.s3_k, .msgs = tc.s3_conns,
			.rbuf = 4096,
		};
		snprintf(cfg, sizeof(cfg), "S3 churn: %d at a time", run.active);
		printf("\n(S3: %lld connections per run, one %d B request each)",
		       run.msgs, TCP_MSG);
		bench_config(&run, cfg);
	}
	print_tcp_summary();
	if (tc.profile && tc.scn[TCP_S2])
		bench_tcp_profile();
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TCP server scenarios (tcp_bench.c): the interface between the
 * driver, the server's common part (tcp_server.c), the clients
 * (tcp_client.c) and the server back ends (tcp_epoll.c, tcp_uring.c,
 * tcp_kevent.c).
 *
 * A server back end is one function, serve(): it runs the server's event
 * loop on the connections and the listening socket it is given and calls
 * the common part for everything that is not its API: srv_begin() once
 * it is ready (the clock starts), srv_accepted() for each connection it
 * accepts, srv_input() for each run of bytes it receives (the bytes are
 * checked there, and the reply, if any, is made), srv_eof() for the end
 * of a connection's stream. It returns when srv_done() says the run's
 * work is done. Every system call it makes goes through COUNTED() (see
 * bench.h): wait (collecting events, io_uring_enter), ctl (registering,
 * accept, close) or io (read, write).
 *
 * A new back end (a kevent receive into a provided buffer ring, say) is
 * one more file with its serve() and one line in tcp_backends[] of
 * tcp_bench.c.
 */
#ifndef KEVENT_BENCH_TCP_H
#define KEVENT_BENCH_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"

enum tcp_scenario {
	TCP_S1,		/* stream receive: C connections, bytes only inbound */
	TCP_S2,		/* echo/RPC: C connections, M requests per round */
	TCP_S3,		/* churn: connect, request, reply, close */
	TCP_NR_SCENARIOS
};

#define TCP_MSG		64	/* S2 and S3 request and reply, bytes */

/* One run: what the server and the client are to do. */
struct tcp_run {
	enum tcp_scenario scn;
	int conns;		/* S1, S2: connections; S3: connections made */
	int active;		/* S2: requests per round; S3: connections at once */
	int msg_size;		/* S1: bytes per client write (a "message") */
	long long msgs;		/* messages in the run (S3: one per connection) */
	int rbuf;		/* bytes per receive, the same for every back end */
	uint64_t seed;		/* S2: which connections each round */
};

/* A connection as the server sees it; srv.conns[] is indexed by fd. */
struct conn {
	bool open;
	uint32_t gen;		/* bumped per connection on this fd */
	uint32_t id;		/* the client's number for it (from its bytes) */
	bool id_known;
	uint64_t pos;		/* bytes received */
	uint32_t seq;		/* S2: next request's sequence number */
	uint8_t in[TCP_MSG];	/* S2, S3: a request received in pieces */
	unsigned int have;
	uint8_t out[TCP_MSG];	/* the reply, stable until the next request */
};

struct srv {
	const struct tcp_run *run;
	int lfd;		/* listening socket (nonblocking) */
	const int *initial;	/* S1, S2: the accepted connections... */
	int ninitial;		/* ...all of them */
	struct conn *conns;	/* indexed by fd */
	int max_fd;		/* conns[] has max_fd entries */
	int go_fd;		/* srv_begin() writes a byte here: clients start */
	long long units;	/* S1: bytes, S2: replies, S3: closed */
	long long want;		/* units in the run */
	uint64_t cpu0, wall0, cpu1, wall1;
};

/* One run's result, from the server process to the driver. */
struct tcp_result {
	int ok;
	uint64_t cpu_ns, wall_ns;	/* timed part */
	long long msgs;
	struct sys_count sys;
	uint64_t client_cpu_ns;		/* the client's, filled in by the driver */
};

struct tcp_backend {
	const char *name;
	unsigned int scenarios;		/* 1 << TCP_S* it can serve */
	unsigned int flags;		/* its own (EPOLLET, IORING_SETUP_*) */
	bool (*probe)(void);		/* optional: does this kernel have it? */
	int (*serve)(struct srv *s, const struct tcp_backend *be);
};

/* The back ends, each in its file; tcp_bench.c lists them. */
extern const struct tcp_backend tcp_epoll_lt, tcp_epoll_et, tcp_uring,
	tcp_uring_tw, tcp_kevent_post, tcp_kevent_aio, tcp_kevent_recv;

/* tcp_server.c, for the back ends. */
void srv_begin(struct srv *s);
static inline bool srv_done(const struct srv *s) { return s->units >= s->want; }
struct conn *srv_accepted(struct srv *s, int fd);
/*
 * accept4() @backlog connections (at least one, until EAGAIN: the count
 * is the accept queue's when the event was made), each counted as ctl,
 * passed to srv_accepted() and then to @added. Returns how many.
 */
int srv_accept_backlog(struct srv *s, uint32_t backlog, const char *who,
		       void (*added)(void *arg, int fd), void *arg);
/* Check @len bytes of @c's stream; returns the reply's length, in c->out. */
size_t srv_input(struct srv *s, struct conn *c, const void *data, size_t len);
/* @c's stream ended: the caller closes the fd (and counts the call). */
void srv_eof(struct srv *s, struct conn *c);
static inline struct conn *srv_conn(struct srv *s, int fd)
{
	if (fd < 0 || fd >= s->max_fd || !s->conns[fd].open)
		fail("server: event for fd %d, which is not a connection", fd);
	return &s->conns[fd];
}

/* tcp_server.c, for the driver: the server process's main. */
void tcp_server_main(const struct tcp_backend *be, const struct tcp_run *run,
		     int lfd, int go_fd, int result_fd);
/* tcp_client.c: the client process's main; writes its CPU ns to @result_fd. */
void tcp_client_main(const struct tcp_run *run, int port, int go_fd,
		     int result_fd);

/* The bytes both sides agree on. */
static inline uint64_t tcp_stream_word(uint32_t id, uint64_t word)
{
	/* S1: word @word of connection @id's stream; offset and id in it. */
	return (uint64_t)id << 44 ^ word * 0x9e3779b97f4a7c15ull;
}
void tcp_fill_msg(uint8_t *msg, uint32_t id, uint32_t seq);
bool tcp_check_msg(const uint8_t *msg, uint32_t id, uint32_t seq);

uint64_t cpu_now_ns(void);	/* CLOCK_PROCESS_CPUTIME_ID */
void pin_to_cpu(int cpu);

#endif /* KEVENT_BENCH_TCP_H */

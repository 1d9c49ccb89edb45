// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-echo: an echo server whose one event loop waits on kevent
 * (KEVENT_TYPE_POLL, or KEVENT_TYPE_SOCKET), the same server on epoll,
 * and one on completions (KEVENT_TYPE_AIO), each driven by a load
 * generator in the same program.
 *
 *   kevent-echo [-t] [-c CLIENTS] [-n MESSAGES] [-s SIZE] [-b BACKEND]
 *
 *   BACKEND: kevent, kevent-socket, kevent-aio or epoll
 *   -t   loopback TCP (127.0.0.1) instead of AF_UNIX stream sockets
 *   -c   client processes (default 4), each with its own connection
 *   -n   messages per client (default 200), each echoed before the next
 *   -s   message size in bytes (default 64)
 *   -b   run only this back end (default: all, epoll last)
 *
 * Without -t it serves AF_UNIX and then loopback TCP. Every client checks
 * that each echo is its own message, byte for byte; the program exits 0
 * when all came back intact, 1 otherwise, also when the server saw
 * nothing for 20 s (it is run with the tests).
 * It prints messages per second for each back end, from one short run
 * each: rough, and under QEMU TCG only their ratio means anything (the
 * benchmark is tools/bench/kevent_bench).
 *
 * The server is one process and one loop: a listening socket and every
 * connection are registered with their file descriptor as cookie. It
 * reads what is there and writes it back; when a write is short it waits
 * for POLLOUT instead of POLLIN until the rest is out (KEVENT_CTL_MODIFY,
 * or EPOLL_CTL_MOD). Closing a connection removes its registration. The
 * kevent-aio server instead keeps one receive or send in flight per
 * connection and is told when it has completed (serve_aio()).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kevent.h"

#define MAX_READY	64
#define BUF_SIZE	65536
#define IDLE_MS		20000	/* the server gives up after this long idle */
#define RUN_LIMIT_S	120	/* the whole program fails after this long */

/* ------------------------------------------------------------------ */
/* The event loop's back ends: register, change, wait                  */
/* ------------------------------------------------------------------ */

struct ready {
	int fd;
	unsigned int revents;	/* poll() bits */
};

struct loop_ops {
	const char *name;
	int (*init)(void);
	/* Watch @fd for @events (POLLIN or POLLOUT); @mod: change, not add. */
	int (*watch)(int efd, int fd, unsigned int events, bool mod);
	/* Wait up to @ms for ready fds; returns how many (0: none), or -1. */
	int (*wait)(int efd, struct ready *r, int max, int ms);
	/* A server of its own, not on readiness (the others are NULL). */
	int (*serve)(int lfd, int clients);
};

static int kev_init(void)
{
	return kevent_init(0, KEVENT_CLOEXEC);
}

static int kev_watch(int efd, int fd, unsigned int events, bool mod)
{
	int err = mod ? kevent_modify_one(efd, KEVENT_TYPE_POLL, fd, events, 0, fd)
		      : kevent_add_one(efd, KEVENT_TYPE_POLL, fd, events, 0, fd);

	errno = -err;
	return err ? -1 : 0;
}

static int kev_wait(int efd, struct ready *r, int max, int ms)
{
	struct __kernel_timespec to = kevent_ms(ms);
	struct ukevent ev[MAX_READY];
	int i, n;

	n = kevent_get_events(efd, 1, max < MAX_READY ? max : MAX_READY, ev,
			      &to, NULL);
	for (i = 0; i < n; i++) {
		r[i].fd = ev[i].user_data;
		r[i].revents = ev[i].ret_data;
	}
	return n;
}

/*
 * KEVENT_TYPE_SOCKET: the socket's own events. POLLIN asks for RECV and
 * ACCEPT, so one watch call serves the listener (which reports ACCEPT)
 * and the connections (which report RECV).
 */
static int ksock_watch(int efd, int fd, unsigned int events, bool mod)
{
	uint32_t ev = 0;
	int err;

	if (events & POLLIN)
		ev |= KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT;
	if (events & POLLOUT)
		ev |= KEVENT_SOCKET_SEND;
	err = mod ? kevent_modify_one(efd, KEVENT_TYPE_SOCKET, fd, ev, 0, fd)
		  : kevent_socket_add(efd, fd, ev, 0, fd);
	errno = -err;
	return err ? -1 : 0;
}

static int ksock_wait(int efd, struct ready *r, int max, int ms)
{
	struct __kernel_timespec to = kevent_ms(ms);
	struct ukevent ev[MAX_READY];
	uint32_t ready;
	int i, n;

	n = kevent_get_events(efd, 1, max < MAX_READY ? max : MAX_READY, ev,
			      &to, NULL);
	for (i = 0; i < n; i++) {
		ready = KEVENT_SOCKET_READY(ev[i].ret_data);
		r[i].fd = ev[i].user_data;
		r[i].revents =
			(ready & (KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT) ?
			 POLLIN : 0) |
			(ready & KEVENT_SOCKET_SEND ? POLLOUT : 0) |
			(ready & KEVENT_SOCKET_HUP ? POLLHUP : 0) |
			(ready & KEVENT_SOCKET_ERROR ? POLLERR : 0);
	}
	return n;
}

static int ep_init(void)
{
	return epoll_create1(EPOLL_CLOEXEC);
}

static int ep_watch(int efd, int fd, unsigned int events, bool mod)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(efd, mod ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev);
}

static int ep_wait(int efd, struct ready *r, int max, int ms)
{
	struct epoll_event ev[MAX_READY];
	int i, n;

	n = epoll_wait(efd, ev, max < MAX_READY ? max : MAX_READY, ms);
	for (i = 0; i < n; i++) {
		r[i].fd = ev[i].data.fd;
		r[i].revents = ev[i].events;	/* EPOLLIN == POLLIN, ... */
	}
	return n;
}

static int serve_aio(int lfd, int clients);

static const struct loop_ops loops[] = {
	{ "kevent", kev_init, kev_watch, kev_wait, NULL },
	{ "kevent-socket", kev_init, ksock_watch, ksock_wait, NULL },
	{ "kevent-aio", NULL, NULL, NULL, serve_aio },
	{ "epoll", ep_init, ep_watch, ep_wait, NULL },
};
#define NR_LOOPS	((int)(sizeof(loops) / sizeof(loops[0])))
#define EPOLL_LOOP	(NR_LOOPS - 1)	/* the reference, last */

/* ------------------------------------------------------------------ */
/* The server                                                          */
/* ------------------------------------------------------------------ */

/* What a connection still has to write back. */
struct conn {
	char *buf;
	size_t off, len;
};

static struct conn *conns;	/* indexed by fd */
static int nr_conns;

static struct conn *conn_get(int fd)
{
	if (fd >= nr_conns) {
		int n = fd + 64;
		struct conn *c = realloc(conns, n * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + nr_conns, 0, (n - nr_conns) * sizeof(*c));
		conns = c;
		nr_conns = n;
	}
	if (!conns[fd].buf && !(conns[fd].buf = malloc(BUF_SIZE)))
		return NULL;
	return &conns[fd];
}

/* Write what is pending; returns 1 if all is out, 0 if not, -1. */
static int conn_flush(int fd, struct conn *c)
{
	while (c->off < c->len) {
		ssize_t n = write(fd, c->buf + c->off, c->len - c->off);

		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		c->off += n;
	}
	c->off = c->len = 0;
	return 1;
}

/* One readiness report for a connection. Returns 1 when it closed. */
static int conn_event(const struct loop_ops *ops, int efd, int fd,
		      unsigned int revents)
{
	struct conn *c = conn_get(fd);
	ssize_t n;
	int done;

	if (!c)
		return -1;
	if (c->len) {			/* waiting for POLLOUT */
		done = conn_flush(fd, c);
		if (done < 0)
			goto close;
		if (done && ops->watch(efd, fd, POLLIN, true))
			return -1;
		return 0;
	}
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	n = read(fd, c->buf, BUF_SIZE);
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		goto close;
	c->len = n;
	done = conn_flush(fd, c);
	if (done < 0)
		goto close;
	if (!done && ops->watch(efd, fd, POLLOUT, true))
		return -1;
	return 0;
close:
	/* Closing the last reference removes the registration. */
	close(fd);
	c->off = c->len = 0;
	return 1;
}

/* Serve until @clients connections have come and gone. */
static int serve(const struct loop_ops *ops, int lfd, int clients)
{
	struct ready r[MAX_READY];
	int efd, closed = 0, i, n, fd;

	efd = ops->init();
	if (efd < 0 || ops->watch(efd, lfd, POLLIN, false)) {
		perror(ops->name);
		return -1;
	}
	while (closed < clients) {
		n = ops->wait(efd, r, MAX_READY, IDLE_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n)
				perror("wait");
			else
				fprintf(stderr, "server: nothing for %d ms\n", IDLE_MS);
			break;
		}
		for (i = 0; i < n; i++) {
			if (r[i].fd != lfd) {
				int ret = conn_event(ops, efd, r[i].fd,
						     r[i].revents);

				if (ret < 0) {
					perror("connection");
					goto out;
				}
				closed += ret;
				continue;
			}
			while ((fd = accept4(lfd, NULL, NULL,
					     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
				if (ops->watch(efd, fd, POLLIN, false)) {
					perror("watch");
					goto out;
				}
			}
			if (errno != EAGAIN) {
				perror("accept");
				goto out;
			}
		}
	}
out:
	close(efd);
	return closed == clients ? 0 : -1;
}

/*
 * The same server on completions (KEVENT_TYPE_AIO): the kernel moves the
 * data, the loop only hears that it has. Each connection has one
 * operation in flight, a receive into its buffer or the send of what that
 * receive got; the listener is watched with KEVENT_TYPE_SOCKET.
 */
static int aio_event(int efd, const struct ukevent *ev)
{
	int fd = ev->user_data;
	struct conn *c = conn_get(fd);
	int err;

	if (!c)
		return -1;
	if ((ev->ret_flags & KEVENT_RET_BROKEN) ||
	    (ev->event == KEVENT_AIO_RECV && !ev->ret_data)) {
		close(fd);		/* nothing is in flight on it */
		return 1;
	}
	if (ev->event == KEVENT_AIO_RECV)
		err = kevent_aio_add(efd, KEVENT_AIO_SEND, fd, 0, c->buf,
				     ev->ret_data, fd);
	else
		err = kevent_aio_add(efd, KEVENT_AIO_RECV, fd, 0, c->buf,
				     BUF_SIZE, fd);
	errno = -err;
	return err ? -1 : 0;
}

static int aio_accept(int efd, int lfd)
{
	struct conn *c;
	int fd, err;

	while ((fd = accept4(lfd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		c = conn_get(fd);
		err = c ? kevent_aio_add(efd, KEVENT_AIO_RECV, fd, 0, c->buf,
					 BUF_SIZE, fd) : -ENOMEM;
		if (err) {
			errno = -err;
			return -1;
		}
	}
	return errno == EAGAIN ? 0 : -1;
}

static int serve_aio(int lfd, int clients)
{
	struct __kernel_timespec to = kevent_ms(IDLE_MS);
	struct ukevent ev[MAX_READY];
	int efd, closed = 0, i, n, ret;

	efd = kevent_init(0, KEVENT_CLOEXEC);
	if (efd < 0 || kevent_socket_add(efd, lfd, KEVENT_SOCKET_ACCEPT, 0, lfd)) {
		perror("kevent-aio");
		return -1;
	}
	while (closed < clients) {
		n = kevent_get_events(efd, 1, MAX_READY, ev, &to, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "server: %s\n", n ? strerror(errno) :
				"nothing for a while");
			break;
		}
		for (i = 0; i < n; i++) {
			ret = ev[i].type == KEVENT_TYPE_SOCKET ?
				aio_accept(efd, lfd) : aio_event(efd, &ev[i]);
			if (ret < 0) {
				perror("kevent-aio");
				goto out;
			}
			closed += ret;
		}
	}
out:
	close(efd);
	return closed == clients ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* The load generator                                                  */
/* ------------------------------------------------------------------ */

struct load {
	bool tcp;
	int clients, messages, size;
};

/* Message @seq of client @id: recognisable bytes, different each time. */
static void fill(char *buf, int size, int id, int seq)
{
	int i;

	for (i = 0; i < size; i++)
		buf[i] = (char)(id * 131 + seq * 7 + i);
}

static int client(const struct sockaddr *addr, socklen_t alen,
		  const struct load *l, int id)
{
	char *out = malloc(l->size), *in = malloc(l->size);
	int fd, seq, one = 1;

	if (!out || !in)
		return 1;
	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, addr, alen)) {
		perror("client: connect");
		return 1;
	}
	if (l->tcp)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (seq = 0; seq < l->messages; seq++) {
		int got = 0;

		fill(out, l->size, id, seq);
		if (write(fd, out, l->size) != l->size) {
			perror("client: write");
			return 1;
		}
		while (got < l->size) {
			ssize_t n = read(fd, in + got, l->size - got);

			if (n <= 0) {
				fprintf(stderr, "client %d: message %d: %s\n", id,
					seq, n ? strerror(errno) : "EOF");
				return 1;
			}
			got += n;
		}
		if (memcmp(in, out, l->size)) {
			fprintf(stderr, "client %d: message %d came back wrong\n",
				id, seq);
			return 1;
		}
	}
	close(fd);
	return 0;
}

/* A listening socket on a fresh address; fills @addr for the clients. */
static int listener(bool tcp, struct sockaddr_storage *addr, socklen_t *alen)
{
	int fd = socket(tcp ? AF_INET : AF_UNIX,
			SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	memset(addr, 0, sizeof(*addr));
	if (tcp) {
		struct sockaddr_in *in = (struct sockaddr_in *)addr;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*alen = sizeof(*in);	/* port 0: any free one */
	} else {
		struct sockaddr_un *un = (struct sockaddr_un *)addr;
		static int serial;

		/* Abstract name: nothing in the file system to clean up. */
		un->sun_family = AF_UNIX;
		*alen = offsetof(struct sockaddr_un, sun_path) + 1 +
			snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1,
				 "kevent-echo-%d-%d", getpid(), serial++);
	}
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, *alen) ||
	    listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)addr, alen)) {
		perror("listener");
		return -1;
	}
	return fd;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The clients of the current run, for on_alarm(). */
static pid_t *volatile client_pids;
static volatile int nr_clients;

/* One server run with its clients; returns messages per second, or -1. */
static double run(const struct loop_ops *ops, const struct load *l)
{
	struct sockaddr_storage addr;
	socklen_t alen;
	int lfd, i, started, status, failed = 0;
	pid_t *pids = calloc(l->clients, sizeof(*pids));
	double t0, t;

	client_pids = pids;
	nr_clients = 0;

	lfd = listener(l->tcp, &addr, &alen);
	if (lfd < 0 || !pids)
		return -1;
	fflush(stdout);
	t0 = now_s();
	for (started = 0; started < l->clients; started++) {
		pids[started] = fork();
		if (pids[started] < 0) {
			perror("fork");
			failed = 1;
			break;
		}
		nr_clients = started + 1;
		if (!pids[started]) {
			close(lfd);
			_exit(client((struct sockaddr *)&addr, alen, l, started));
		}
	}
	if (failed || (ops->serve ? ops->serve(lfd, l->clients)
				  : serve(ops, lfd, l->clients))) {
		/* Clients may be waiting for an echo that will not come. */
		failed = 1;
		for (i = 0; i < started; i++)
			kill(pids[i], SIGKILL);
	}
	t = now_s() - t0;
	for (i = 0; i < started; i++)
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			failed = 1;
	close(lfd);
	nr_clients = 0;
	free(pids);
	return failed ? -1 : l->clients * l->messages / t;
}

/* A stuck run must fail, and say so, rather than hang its caller. */
static void on_alarm(int sig)
{
	static const char msg[] = "echo: FAILED: time limit reached\n";
	int i;

	(void)sig;
	for (i = 0; i < nr_clients; i++)
		if (client_pids[i] > 0)
			kill(client_pids[i], SIGKILL);
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(1);
}

int main(int argc, char **argv)
{
	struct load l = { .clients = 4, .messages = 200, .size = 64 };
	const char *only = NULL;
	int opt, t, b, fail = 0;
	bool tcp_only = false;

	while ((opt = getopt(argc, argv, "tc:n:s:b:")) != -1) {
		switch (opt) {
		case 't': tcp_only = true; break;
		case 'c': l.clients = atoi(optarg); break;
		case 'n': l.messages = atoi(optarg); break;
		case 's': l.size = atoi(optarg); break;
		case 'b': only = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-t] [-c clients] [-n messages] "
				"[-s size] [-b backend]\n", argv[0]);
			return 2;
		}
	}
	if (l.clients < 1 || l.messages < 1 || l.size < 1 || l.size > BUF_SIZE) {
		fprintf(stderr, "%s: bad -c, -n or -s\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(RUN_LIMIT_S);
	printf("echo: %d clients x %d messages x %d bytes (one short run per "
	       "back end: the rates are\n  rough, and under QEMU TCG only "
	       "their ratio means anything; see tools/bench)\n",
	       l.clients, l.messages, l.size);

	for (t = tcp_only; t < 2; t++) {
		double rate[NR_LOOPS] = { 0 };

		l.tcp = t;
		for (b = 0; b < NR_LOOPS; b++) {
			if (only && strcmp(only, loops[b].name))
				continue;
			rate[b] = run(&loops[b], &l);
			if (rate[b] < 0) {
				printf("  %-13s %-7s FAILED\n", loops[b].name,
				       t ? "TCP" : "AF_UNIX");
				fail = 1;
				continue;
			}
			printf("  %-13s %-7s %8.0f messages/s\n", loops[b].name,
			       t ? "TCP" : "AF_UNIX", rate[b]);
		}
		for (b = 0; b < EPOLL_LOOP; b++)
			if (rate[b] > 0 && rate[EPOLL_LOOP] > 0)
				printf("  %s/epoll (%s) = %.2fx\n", loops[b].name,
				       t ? "TCP" : "AF_UNIX",
				       rate[b] / rate[EPOLL_LOOP]);
	}
	printf("echo: %s\n", fail ? "FAILED" : "every message came back intact");
	return fail;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The clients of the TCP scenarios: one process, on the other CPU, the
 * same for every server back end (it waits with epoll or blocking calls;
 * its cost is not the server's). It checks every reply, byte for byte,
 * and that nothing comes after the last: the server's streams must end
 * right after it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp.h"

static int tcp_connect(int port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fail("client: socket: %s", strerror(errno));
	/* Requests go out at once, as an RPC client's would. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		fail("client: connect: %s", strerror(errno));
	return fd;
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("client: write: %s", n ? strerror(errno) : "0 bytes");
		p += n;
		len -= n;
	}
}

static void read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail("client: read: %s", n ? strerror(errno) : "end of stream");
		p += n;
		len -= n;
	}
}

/* The server has exited or closed: its stream must end here, no byte more. */
static void expect_eof(int fd, uint32_t id)
{
	char c;
	ssize_t n;
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (n)
		fail("client: connection %u: %s after the last reply", id,
		     n > 0 ? "a byte" : strerror(errno));
}

/* The client's CPU time is counted from the server's go, as the server's. */
static uint64_t cpu_go;

static void wait_go(int go_fd)
{
	char go;

	if (read(go_fd, &go, 1) != 1)
		fail("client: the server did not start");
	cpu_go = cpu_now_ns();
}

/* S1: each connection streams its words, msg_size bytes per write. */
static void client_s1(const struct tcp_run *r, int port, int go_fd)
{
	long long per_conn = r->msgs / r->conns, i;
	uint64_t *buf = malloc(r->msg_size);
	int *fds = malloc(r->conns * sizeof(*fds));
	int k;

	if (!buf || !fds)
		fail("client: malloc");
	for (k = 0; k < r->conns; k++)
		fds[k] = tcp_connect(port);
	wait_go(go_fd);
	for (i = 0; i < per_conn; i++) {
		for (k = 0; k < r->conns; k++) {
			uint64_t w0 = (uint64_t)i * r->msg_size / 8;
			int j;

			for (j = 0; j < r->msg_size / 8; j++)
				buf[j] = tcp_stream_word(k, w0 + j);
			write_all(fds[k], buf, r->msg_size);
		}
	}
	for (k = 0; k < r->conns; k++)
		shutdown(fds[k], SHUT_WR);
	for (k = 0; k < r->conns; k++)
		expect_eof(fds[k], k);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/*
 * S2: rounds of M requests on M connections chosen at random, each round
 * waiting for all M replies (closed loop).
 */
static void client_s2(const struct tcp_run *r, int port, int go_fd)
{
	int *fds = malloc(r->conns * sizeof(*fds));
	int *order = malloc(r->conns * sizeof(*order));
	uint32_t *seq = calloc(r->conns, sizeof(*seq));
	unsigned int *have = calloc(r->conns, sizeof(*have));
	bool *waiting = calloc(r->conns, sizeof(*waiting));
	uint8_t (*in)[TCP_MSG] = malloc(r->conns * TCP_MSG);
	struct epoll_event ev[256];
	uint64_t rng = r->seed;
	long long round, rounds = r->msgs / r->active;
	int ep = epoll_create1(EPOLL_CLOEXEC), k;

	if (!fds || !order || !seq || !have || !waiting || !in || ep < 0)
		fail("client: malloc");
	for (k = 0; k < r->conns; k++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = k };

		fds[k] = tcp_connect(port);
		order[k] = k;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[k], &e))
			fail("client: epoll_ctl: %s", strerror(errno));
	}
	wait_go(go_fd);
	for (round = 0; round < rounds; round++) {
		int i, left = r->active;

		/* The first M of a partial shuffle: M distinct connections. */
		for (i = 0; i < r->active; i++) {
			int j = i + xorshift(&rng) % (r->conns - i), t = order[i];
			uint8_t msg[TCP_MSG];

			order[i] = order[j];
			order[j] = t;
			k = order[i];
			tcp_fill_msg(msg, k, seq[k]);
			waiting[k] = true;
			write_all(fds[k], msg, TCP_MSG);
		}
		while (left) {
			int n = epoll_wait(ep, ev, 256, -1);

			if (n < 0 && errno != EINTR)
				fail("client: epoll_wait: %s", strerror(errno));
			/* Events left over are level-triggered: they come back. */
			for (i = 0; i < n && left; i++) {
				ssize_t got;

				k = ev[i].data.u32;
				got = read(fds[k], in[k] + have[k], TCP_MSG - have[k]);
				/*
				 * In the last round the server may have sent its
				 * last reply and exited: its ends of stream can
				 * come before a reply in the batch. Checked later.
				 */
				if (!waiting[k] && !got && round == rounds - 1) {
					epoll_ctl(ep, EPOLL_CTL_DEL, fds[k], NULL);
					continue;
				}
				if (!waiting[k])
					fail("client: connection %d: a reply nobody asked for"
					     " (%zd: %s; round %lld, %d replies due)",
					     k, got, got < 0 ? strerror(errno) : "bytes",
					     round, left);
				if (got <= 0)
					fail("client: connection %d: read: %s", k,
					     got ? strerror(errno) : "end of stream");
				have[k] += got;
				if (have[k] < TCP_MSG)
					continue;
				if (!tcp_check_msg(in[k], k, seq[k]))
					fail("client: connection %d: reply %u is wrong", k, seq[k]);
				have[k] = 0;
				seq[k]++;
				waiting[k] = false;
				left--;
			}
		}
	}
	for (k = 0; k < r->conns; k++)
		expect_eof(fds[k], k);
}

/*
 * S3: K connections at a time: connect, send the request, read the
 * reply; then end each (the client closes first, so TIME_WAIT is on its
 * side, as for a browser) and read the server's end of stream.
 */
static void client_s3(const struct tcp_run *r, int port, int go_fd)
{
	int *fds = malloc(r->active * sizeof(*fds));
	long long done;
	uint32_t id = 0;

	if (!fds)
		fail("client: malloc");
	wait_go(go_fd);
	for (done = 0; done < r->msgs; done += r->active) {
		int k, n = r->msgs - done < r->active ? r->msgs - done : r->active;
		uint8_t msg[TCP_MSG];

		for (k = 0; k < n; k++) {
			fds[k] = tcp_connect(port);
			tcp_fill_msg(msg, id + k, 0);
			write_all(fds[k], msg, TCP_MSG);
		}
		for (k = 0; k < n; k++) {
			read_all(fds[k], msg, TCP_MSG);
			if (!tcp_check_msg(msg, id + k, 0))
				fail("client: connection %u: wrong reply", id + k);
			shutdown(fds[k], SHUT_WR);
		}
		for (k = 0; k < n; k++) {
			expect_eof(fds[k], id + k);
			close(fds[k]);
		}
		id += n;
	}
}

void tcp_client_main(const struct tcp_run *r, int port, int go_fd,
		     int result_fd)
{
	uint64_t t;

	pin_to_cpu(1);
	switch (r->scn) {
	case TCP_S1: client_s1(r, port, go_fd); break;
	case TCP_S2: client_s2(r, port, go_fd); break;
	default: client_s3(r, port, go_fd); break;
	}
	t = cpu_now_ns() - cpu_go;
	if (write(result_fd, &t, sizeof(t)) != sizeof(t))
		fail("client: result: %s", strerror(errno));
	exit(0);
}

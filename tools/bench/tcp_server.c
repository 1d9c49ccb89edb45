// SPDX-License-Identifier: GPL-2.0
/*
 * The server's common part: what every back end's server does the same
 * way, so that only the event API differs between them. It accepts the
 * connections of S1 and S2 before the clock starts (their set-up is not
 * what is measured), checks every byte received, makes the replies, and
 * times the run with the process's CPU clock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tcp.h"

void srv_begin(struct srv *s)
{
	char go = 'g';

	s->wall0 = now_ns();
	s->cpu0 = cpu_now_ns();
	memset(&sys_count, 0, sizeof(sys_count));
	/* Not counted: telling the clients to start is the harness's. */
	if (write(s->go_fd, &go, 1) != 1)
		fail("server: go: %s", strerror(errno));
}

struct conn *srv_accepted(struct srv *s, int fd)
{
	struct conn *c;

	if (fd >= s->max_fd)
		fail("server: fd %d past the table (%d)", fd, s->max_fd);
	c = &s->conns[fd];
	if (c->open)
		fail("server: fd %d accepted while still open", fd);
	*c = (struct conn){ .open = true, .gen = c->gen + 1 };
	return c;
}

int srv_accept_backlog(struct srv *s, uint32_t backlog, const char *who,
		       void (*added)(void *arg, int fd), void *arg)
{
	int n = 0;

	/* At least one: the count is the queue's when the event was made. */
	do {
		int fd = COUNTED(ctl, accept4(s->lfd, NULL, NULL,
					      SOCK_NONBLOCK | SOCK_CLOEXEC));

		if (fd < 0) {
			if (errno == EAGAIN)
				break;
			fail("%s server: accept4: %s", who, strerror(errno));
		}
		srv_accepted(s, fd);
		added(arg, fd);
		n++;
	} while (--backlog > 0);
	return n;
}

/*
 * S1: the stream of words tcp_stream_word(id, 0), (id, 1), ... The first
 * word names the connection. Whole aligned words are compared at once;
 * the bytes of a word split between two receives one by one.
 */
static void input_stream(struct srv *s, struct conn *c, const uint8_t *p,
			 size_t len)
{
	uint64_t pos = c->pos;
	const uint8_t *end = p + len;

	if (!c->id_known) {
		/* The first word names the connection: wait for it whole. */
		size_t take = 8 - c->have < len ? 8 - c->have : len;
		uint64_t w0;

		memcpy(c->in + c->have, p, take);
		c->have += take;
		p += take;
		if (c->have < 8)
			return;
		memcpy(&w0, c->in, 8);
		c->id = w0 >> 44;
		c->id_known = true;
		c->have = 0;
		if (w0 != tcp_stream_word(c->id, 0))
			goto bad;
		pos = c->pos = 8;
		s->units += 8;
	}
	while (p < end && (pos & 7)) {
		uint64_t w = tcp_stream_word(c->id, pos >> 3);

		if (*p != (uint8_t)(w >> (pos & 7) * 8))
			goto bad;
		p++, pos++;
	}
	while (end - p >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		if (w != tcp_stream_word(c->id, pos >> 3))
			goto bad;
		p += 8, pos += 8;
	}
	for (; p < end; p++, pos++) {
		uint64_t w = tcp_stream_word(c->id, pos >> 3);

		if (*p != (uint8_t)(w >> (pos & 7) * 8))
			goto bad;
	}
	s->units += pos - c->pos;
	c->pos = pos;
	if (c->pos > (uint64_t)s->run->msgs * s->run->msg_size / s->run->conns)
		fail("server: S1 connection %u: %llu bytes, more than sent",
		     c->id, (unsigned long long)c->pos);
	return;
bad:
	fail("server: S1 connection %u: bad byte at offset %llu", c->id,
	     (unsigned long long)pos);
}

/*
 * S2 and S3: 64-byte requests, each answered by the same 64 bytes. A
 * connection's client sends its next request only after the reply to the
 * last, so a receive holds at most one (maybe in pieces).
 */
static size_t input_request(struct srv *s, struct conn *c, const uint8_t *p,
			    size_t len)
{
	uint32_t id, seq;

	if (c->have + len > TCP_MSG)
		fail("server: %zu bytes while a reply is due (duplicate?)",
		     c->have + len);
	memcpy(c->in + c->have, p, len);
	c->have += len;
	c->pos += len;
	if (c->have < TCP_MSG)
		return 0;
	memcpy(&id, c->in, 4);
	memcpy(&seq, c->in + 4, 4);
	if (!c->id_known) {
		c->id = id;
		c->id_known = true;
	}
	if (id != c->id || seq != c->seq || !tcp_check_msg(c->in, id, seq))
		fail("server: request (%u, %u) on connection %u, %u expected",
		     id, seq, c->id, c->seq);
	c->seq++;
	c->have = 0;
	memcpy(c->out, c->in, TCP_MSG);
	if (s->run->scn == TCP_S2)
		s->units++;
	return TCP_MSG;
}

size_t srv_input(struct srv *s, struct conn *c, const void *data, size_t len)
{
	if (!len)
		fail("server: empty receive");
	if (s->run->scn == TCP_S1) {
		input_stream(s, c, data, len);
		return 0;
	}
	if (s->run->scn == TCP_S3 && c->seq)
		fail("server: S3 connection %u: a second request", c->id);
	return input_request(s, c, data, len);
}

void srv_eof(struct srv *s, struct conn *c)
{
	/* S3: a connection is done when its client has its reply and closes. */
	if (s->run->scn == TCP_S3) {
		if (c->seq != 1 || c->have)
			fail("server: S3 connection %u closed without its request",
			     c->id);
		s->units++;
	} else if (s->run->scn == TCP_S1 ? c->pos != (uint64_t)s->run->msgs *
		   s->run->msg_size / s->run->conns : !srv_done(s)) {
		/* S1: a stream may end once all its bytes are in. */
		fail("server: connection %u closed early", c->id);
	}
	c->open = false;
}

/* S1 and S2: accept every connection before the clock starts. */
static int *accept_all(int lfd, int n)
{
	int *fds = malloc(n * sizeof(*fds));
	int i;

	if (!fds)
		fail("server: malloc");
	for (i = 0; i < n; i++) {
		fds[i] = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fds[i] < 0) {
			if (errno == EAGAIN) {
				usleep(1000);
				i--;
				continue;
			}
			fail("server: accept: %s", strerror(errno));
		}
	}
	return fds;
}

void tcp_server_main(const struct tcp_backend *be, const struct tcp_run *run,
		     int lfd, int go_fd, int result_fd)
{
	struct tcp_result res = { 0 };
	struct rlimit rl;
	struct srv s = {
		.run = run, .lfd = lfd, .go_fd = go_fd,
		.want = run->scn == TCP_S1 ? run->msgs * run->msg_size :
			run->msgs,
	};
	int i;

	pin_to_cpu(0);
	getrlimit(RLIMIT_NOFILE, &rl);
	s.max_fd = rl.rlim_cur;
	s.conns = calloc(s.max_fd, sizeof(*s.conns));
	if (!s.conns)
		fail("server: malloc");
	if (run->scn != TCP_S3) {
		s.ninitial = run->conns;
		s.initial = accept_all(lfd, run->conns);
		for (i = 0; i < s.ninitial; i++)
			srv_accepted(&s, s.initial[i]);
	}
	if (be->serve(&s, be))
		fail("server %s: failed", be->name);
	s.cpu1 = cpu_now_ns();
	s.wall1 = now_ns();
	res.sys = sys_count;
	if (s.units != s.want)
		fail("server %s: %lld units handled, %lld expected", be->name,
		     s.units, s.want);
	for (i = 0; run->scn == TCP_S1 && i < s.ninitial; i++)
		if (s.conns[s.initial[i]].pos !=
		    (uint64_t)run->msgs * run->msg_size / run->conns)
			fail("server: S1 connection %u: %llu bytes",
			     s.conns[s.initial[i]].id,
			     (unsigned long long)s.conns[s.initial[i]].pos);
	res.ok = 1;
	res.cpu_ns = s.cpu1 - s.cpu0;
	res.wall_ns = s.wall1 - s.wall0;
	res.msgs = run->msgs;
	if (write(result_fd, &res, sizeof(res)) != sizeof(res))
		fail("server: result: %s", strerror(errno));
	/*
	 * Exiting closes every connection: the clients then read the end of
	 * each stream, and would see any byte sent twice before it.
	 */
	exit(0);
}

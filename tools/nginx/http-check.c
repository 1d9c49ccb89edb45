// SPDX-License-Identifier: GPL-2.0
/*
 * http-check: the client of tools/nginx/init.sh's correctness run. It
 * asks the nginx on 127.0.0.1:PORT for the files of DIR (which nginx
 * serves as its root) and checks each response: status 200, the
 * Content-Length of the file, and the body byte for byte against the file
 * read from DIR. Scenarios, each counted once:
 *
 *   keepalive    every file, three times, on one keep-alive connection
 *   close        every file on a connection of its own (Connection: close)
 *   pipelined    ten requests written at once, then the ten responses
 *   concurrent   CONNS connections open together, a request each, then
 *                another on each (keep-alive reuse)
 *   abort        a large file's response cut off by the client (reset
 *                after 64 KiB), then a request on a new connection
 *   slow         a large file read by a slow reader (small receive
 *                buffer, a pause every 64 KiB)
 *
 *   http-check PORT DIR CONNS FILE...   (the first FILE is the large one)
 *
 * Prints "http-check: SCENARIO: ok" or "http-check: SCENARIO: FAILED:
 * request N (GET /FILE): why", then "http-check: N passed, N failed";
 * exits 1 if any failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

struct file {
	const char	*name;
	char		*data;
	size_t		len;
};

static int port;
static struct file *files;
static int nfiles;
static char why[256];		/* what the last failed check said */

static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

static void load(struct file *f, const char *dir, const char *name)
{
	char path[512];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		exit(2);
	}
	f->name = name;
	f->len = st.st_size;
	f->data = malloc(f->len + 1);
	if (!f->data || read(fd, f->data, f->len) != (ssize_t)f->len) {
		perror(path);
		exit(2);
	}
	close(fd);
}

static int connect_to(int rcvbuf)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return fail("socket: %s", strerror(errno));
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return fail("connect: %s", strerror(errno));
	}
	return fd;
}

static int send_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fail("write: %s", n ? strerror(errno) : "0");
		buf += n;
		len -= n;
	}
	return 0;
}

/* The request for @f into @buf, of @size bytes: its length. */
static int request_text(char *buf, size_t size, const struct file *f,
			int keepalive)
{
	return snprintf(buf, size,
			"GET /%s HTTP/1.1\r\nHost: localhost\r\nConnection: %s\r\n\r\n",
			f->name, keepalive ? "keep-alive" : "close");
}

static int request(int fd, const struct file *f, int keepalive)
{
	char req[256];

	return send_all(fd, req, request_text(req, sizeof(req), f, keepalive));
}

/*
 * A reader of one connection's responses, buffered; @pause_every: sleep
 * 1 ms after each that many bytes of body (0: never), a slow reader.
 */
struct conn {
	int	fd;
	char	buf[65536];
	size_t	have, off;
	size_t	pause_every;
};

static int fill(struct conn *c)
{
	ssize_t n;

	if (c->off == c->have)
		c->off = c->have = 0;
	do {
		n = read(c->fd, c->buf + c->have, sizeof(c->buf) - c->have);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return fail("read: %s", strerror(errno));
	if (n == 0)
		return fail("connection closed by nginx");
	c->have += n;
	return 0;
}

/* The response to a request for @f: status, length and body checked. */
static int response(struct conn *c, const struct file *f)
{
	size_t got = 0, since = 0, n, want;
	char *end, *h;
	long long clen = -1;
	int status;

	for (;;) {
		end = memmem(c->buf + c->off, c->have - c->off, "\r\n\r\n", 4);
		if (end)
			break;
		if (c->have == sizeof(c->buf)) {
			if (!c->off)
				return fail("headers larger than %zu bytes",
					    sizeof(c->buf));
			memmove(c->buf, c->buf + c->off, c->have - c->off);
			c->have -= c->off;
			c->off = 0;
		}
		if (fill(c))
			return -1;
	}
	*end = 0;
	h = c->buf + c->off;
	if (sscanf(h, "HTTP/1.1 %d", &status) != 1 || status != 200)
		return fail("status line \"%.40s\"", h);
	for (h = strstr(h, "\r\n"); h; h = strstr(h + 2, "\r\n"))
		if (!strncasecmp(h + 2, "Content-Length:", 15))
			clen = atoll(h + 17);
	if (clen != (long long)f->len)
		return fail("Content-Length %lld, the file has %zu", clen,
			    f->len);
	c->off = end + 4 - c->buf;
	while (got < f->len) {
		if (c->off == c->have && fill(c))
			return fail("after %zu of %zu bytes: %s", got, f->len,
				    why);
		n = c->have - c->off;
		want = f->len - got;
		if (n > want)
			n = want;
		if (memcmp(c->buf + c->off, f->data + got, n))
			return fail("body differs in bytes %zu-%zu", got,
				    got + n);
		got += n;
		c->off += n;
		since += n;
		if (c->pause_every && since >= c->pause_every) {
			usleep(1000);
			since = 0;
		}
	}
	return 0;
}

/* A connection with its reader, or NULL (why says what failed). */
static struct conn *conn_open(int rcvbuf)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c) {
		fail("out of memory");
		return NULL;
	}
	c->fd = connect_to(rcvbuf);
	if (c->fd < 0) {
		free(c);
		return NULL;
	}
	return c;
}

static void conn_close(struct conn *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

/* One request for @f on @c, and its response checked. */
static int get(struct conn *c, const struct file *f, int keepalive)
{
	return request(c->fd, f, keepalive) || response(c, f);
}

static int failures, passes;
static struct timespec started;	/* of the scenario under way */

static long elapsed_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - started.tv_sec) * 1000 +
	       (now.tv_nsec - started.tv_nsec) / 1000000;
}

static void report(const char *scenario, int req, const struct file *f,
		   int ret)
{
	if (!ret) {
		printf("http-check: %s: ok (%ld ms)\n", scenario, elapsed_ms());
		passes++;
		return;
	}
	printf("http-check: %s: FAILED: request %d (GET /%s): %s (%ld ms)\n",
	       scenario, req, f ? f->name : "-", why, elapsed_ms());
	failures++;
}

#define RUN(scenario) do {					\
		clock_gettime(CLOCK_MONOTONIC, &started);	\
		scenario;					\
	} while (0)

static void keepalive(void)
{
	struct conn *c = conn_open(0);
	int i, r, req = 0;

	if (!c)
		return report("keepalive", 0, NULL, -1);
	for (r = 0; r < 3; r++)
		for (i = 0; i < nfiles; i++, req++)
			if (get(c, &files[i], 1)) {
				report("keepalive", req, &files[i], -1);
				goto out;
			}
	report("keepalive", req, NULL, 0);
out:
	conn_close(c);
}

static void each_closed(void)
{
	struct conn *c;
	int i;

	for (i = 0; i < nfiles; i++) {
		c = conn_open(0);
		if (!c || get(c, &files[i], 0))
			goto failed;
		/* nginx closes after the response */
		if (c->off != c->have || read(c->fd, c->buf, 1) != 0) {
			fail("more after the response, or no close");
			goto failed;
		}
		conn_close(c);
	}
	return report("close", i, NULL, 0);
failed:
	report("close", i, &files[i], -1);
	conn_close(c);
}

static void pipelined(void)
{
	struct conn *c = conn_open(0);
	char reqs[4096];
	size_t len = 0;
	int i, f;

	if (!c)
		return report("pipelined", 0, NULL, -1);
	/* the small files, in turn */
	for (i = 0; i < 10; i++)
		len += request_text(reqs + len, sizeof(reqs) - len,
				    &files[1 + i % (nfiles - 1)], 1);
	if (send_all(c->fd, reqs, len)) {
		report("pipelined", 0, NULL, -1);
		goto out;
	}
	for (i = 0; i < 10; i++) {
		f = 1 + i % (nfiles - 1);
		if (response(c, &files[f])) {
			report("pipelined", i, &files[f], -1);
			goto out;
		}
	}
	report("pipelined", i, NULL, 0);
out:
	conn_close(c);
}

static void concurrent(int nconns)
{
	struct conn **c = calloc(nconns, sizeof(*c));
	const struct file *f = &files[nfiles > 2 ? 2 : 1];
	int i, round;

	for (i = 0; i < nconns; i++) {
		c[i] = conn_open(0);
		if (!c[i]) {
			report("concurrent", i, f, -1);
			goto out;
		}
	}
	/* all open at once: each request while the others wait */
	for (round = 0; round < 2; round++) {
		for (i = 0; i < nconns; i++)
			if (request(c[i]->fd, f, 1)) {
				report("concurrent", round * nconns + i, f, -1);
				goto out;
			}
		for (i = 0; i < nconns; i++)
			if (response(c[i], f)) {
				report("concurrent", round * nconns + i, f, -1);
				goto out;
			}
	}
	report("concurrent", 2 * nconns, NULL, 0);
out:
	for (i = 0; i < nconns; i++)
		conn_close(c[i]);
	free(c);
}

static void aborted(void)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct conn *c = conn_open(0);
	size_t got = 0;

	if (!c || request(c->fd, &files[0], 1)) {
		report("abort", 0, &files[0], -1);
		goto out;
	}
	while (got < 65536) {
		if (fill(c)) {
			report("abort", 0, &files[0], -1);
			goto out;
		}
		got += c->have;
		c->have = c->off = 0;
	}
	/* a reset, not a close: nginx's next write fails */
	setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	conn_close(c);
	usleep(100000);
	c = conn_open(0);
	if (!c || get(c, &files[1], 1)) {
		report("abort", 1, &files[1], -1);
		goto out;
	}
	report("abort", 2, NULL, 0);
out:
	conn_close(c);
}

static void slow(void)
{
	struct conn *c = conn_open(16384);

	if (c)
		c->pause_every = 65536;
	if (!c || get(c, &files[0], 1))
		report("slow", 0, &files[0], -1);
	else
		report("slow", 1, NULL, 0);
	conn_close(c);
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	int i, nconns;

	if (argc < 6) {
		fprintf(stderr, "usage: %s PORT DIR CONNS LARGE SMALL...\n",
			argv[0]);
		return 2;
	}
	port = atoi(argv[1]);
	nconns = atoi(argv[3]);
	nfiles = argc - 4;
	files = calloc(nfiles, sizeof(*files));
	for (i = 0; i < nfiles; i++)
		load(&files[i], argv[2], argv[4 + i]);
	/* CONNS sockets and a few more */
	rl.rlim_cur = rl.rlim_max = nconns + 64;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("setrlimit");
	setvbuf(stdout, NULL, _IOLBF, 0);

	RUN(keepalive());
	RUN(each_closed());
	RUN(pipelined());
	RUN(concurrent(nconns));
	RUN(aborted());
	RUN(slow());
	printf("http-check: %d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}

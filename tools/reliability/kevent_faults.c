// SPDX-License-Identifier: GPL-2.0
/*
 * kevent_faults: a fault-injection sweep of kevent's system calls.
 *
 * The syzkaller technique: for each step of a fixed workload, and for
 * n = 1, 2, ..., the step's state is built, n is written to
 * /proc/thread-self/fail-nth, the one system call under test is made,
 * and fail-nth is read back: 0 means that the n-th allocation (failslab,
 * fail_page_alloc) or user copy (fail_usercopy) of the call failed. The
 * sweep of a step ends with the first n that the call does not reach.
 * After each call, with nothing armed, the program checks that the call
 * returned success or a documented errno (kevent.rst, uapi/linux/kevent.h),
 * that nothing is half-done (a key whose ADD failed is not registered, one
 * whose REMOVE failed still is, per-entry ret_error agrees with the return
 * value, the ring header is sane) and that every event whose producer
 * succeeded is delivered exactly once. After each step the per-user
 * registration and inode-watch counts must be back where they started
 * (the kselftests' PROBE_LIMIT trick) and no descriptor may be left open.
 *
 * Runs as root inside a test guest with CONFIG_FAULT_INJECTION_DEBUG_FS,
 * FAILSLAB, FAIL_PAGE_ALLOC and FAIL_USERCOPY; without fail-nth it runs
 * each step once without faults and reports it skipped (exit 4). The
 * kernel prints a stack trace for each fault (verbose 2), from which the
 * host counts distinct failure sites; KTAP on stdout, a summary line last.
 *
 * gcc -static -O2 -Wall -Wextra -isystem KDIR/usr/include \
 *     -I TREE/tools/testing/selftests/kevent -o kevent_faults \
 *     kevent_faults.c -lpthread
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <dirent.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "kevent_util.h"

#define MAX_N		600	/* bound of a step's sweep (the batches need ~150) */
#define BATCH		130	/* two full chunks of 64 and two entries more */
#define NSRC		20	/* sources of one step, at most */
#define RING		8	/* slots of the rings that must overflow */
#define AIO_LEN		100
#define FILE_LEN	(100 * 1024)	/* sendfile: two chunks, with progress */
#define WAIT_MS		2000	/* TCG with KASAN is slow */
/*
 * Under TCG with KASAN a step's iteration takes 0.1 to 0.6 s, more with
 * a stack trace per fault: bounds that keep the sweep under 20 minutes
 * even if some step were to wait for lost events at every n.
 */
#define STEP_BUDGET_MS	120000
#define TOTAL_BUDGET_MS	1020000
static long total_budget_ms = TOTAL_BUDGET_MS;	/* kf_budget=SECONDS */
#define TOPDIR		"/tmp/kevent-faults"
#define MAX_KEVENTS	"/proc/sys/user/max_kevents"
#define MAX_INODES	"/proc/sys/user/max_kevent_inodes"
#define PROBE_LIMIT	16

/* --- fault injection --------------------------------------------------- */

static int nth_fd = -1;		/* /proc/thread-self/fail-nth, opened once */
static bool armed_ok;		/* fail-nth exists: faults are injected */

static void write_str(const char *path, const char *val)
{
	if (access(path, F_OK) == 0 && kt_write_file(path, val))
		printf("# cannot write %s to %s\n", val, path);
}

/*
 * fail-nth ignores probability, interval and times (should_fail_ex()
 * checks it first), but the per-attribute filters still apply: by default
 * failslab and fail_page_alloc skip allocations that may sleep, that is
 * all of GFP_KERNEL, and fail_page_alloc skips order 0 and highmem.
 * verbose 2 prints a stack trace per fault; without the rate limit, each.
 */
static void configure_debugfs(void)
{
	static const char *const attrs[] = { "failslab", "fail_page_alloc",
					     "fail_usercopy" };
	char p[128];
	size_t i;

	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
#define SET(file, val) do { \
	snprintf(p, sizeof(p), "/sys/kernel/debug/%s/" file, attrs[i]); \
	write_str(p, val); } while (0)
		SET("probability", "0");
		SET("task-filter", "N");
		SET("verbose", "2");
		SET("verbose_ratelimit_interval_ms", "0");
		SET("ignore-gfp-wait", "N");
		SET("ignore-gfp-highmem", "N");
		SET("cache-filter", "N");
		SET("min-order", "0");
#undef SET
	}
}

static void arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (write(nth_fd, buf, len) != len)
		printf("# fail-nth: write %u: %m\n", n);
}

/*
 * Disarm and say whether the call got its fault. fail-nth reads 0 once
 * the fault was injected. The read's own copy to user space counts too:
 * if it was the n-th, the read fails, and the call had fewer than n.
 * The write of "0" resets fail-nth, whatever its own copy does.
 */
static bool disarm(void)
{
	char buf[16] = "";
	ssize_t r;

	/* pread: the file has no llseek, so lseek() cannot rewind it. */
	r = pread(nth_fd, buf, sizeof(buf) - 1, 0);
	if (write(nth_fd, "0", 1) != 1)
		(void)!write(nth_fd, "0", 1);
	return r > 0 && buf[0] == '0';
}

/* --- results ----------------------------------------------------------- */

static int nr_steps, nr_pass, nr_fail, nr_skip;
static int64_t sweep_start;
static long nr_faults, nr_broken, errno_seen[256], aio_errs[256];
static const char *cur_step;
static unsigned int cur_n;
static int step_broken;

static void bad(const char *fmt, ...)
{
	va_list ap;

	printf("# BROKEN %s n=%u: ", cur_step, cur_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	step_broken++;
	nr_broken++;
}

static void seen(long err)
{
	if (err < 0 && -err < 256)
		errno_seen[-err]++;
}

static bool in(long err, const int *list)
{
	for (; *list; list++)
		if (err == -*list)
			return true;
	return false;
}

/* Documented errnos of each call (kevent.rst, "Errors"). */
static const int E_INIT[] = { ENOMEM, 0 };
static const int E_CTL[] = { ENOMEM, EFAULT, 0 };
static const int E_GET[] = { ENOMEM, EFAULT, EINTR, 0 };
static const int E_MMAP[] = { ENOMEM, 0 };
static const int E_NONE[] = { 0 };
/* Of kevent_ctl() entries: the general ones and each source's own. */
static const int R_USER[] = { ENOMEM, ENOSPC, 0 };
static const int R_POLL[] = { ENOMEM, ENOSPC, EPERM, EINVAL, EBADF, ELOOP, 0 };
static const int R_INODE[] = { ENOMEM, ENOSPC, EBADF, EACCES, 0 };
static const int R_SOCK[] = { ENOMEM, ENOSPC, ENOTSOCK, EBADF, 0 };
static const int R_AIO[] = { ENOMEM, ENOSPC, EBADF, ENOTSOCK, EINVAL, EFAULT,
			     0 };

static void check_ret(const char *what, long ret, const int *allowed)
{
	if (ret >= 0)
		return;
	seen(ret);
	if (!in(ret, allowed))
		bad("%s returned undocumented %s (%ld)", what,
		    strerrorname_np(-ret), ret);
}

/* --- sources ----------------------------------------------------------- */

/*
 * One registration of a step, with the objects behind it: a descriptor
 * pair (a, b: watched end and producer end), a third descriptor c, and
 * its ukevent. fire() makes the source signal once; check() looks at a
 * delivered event; pump() moves data while waiting (a peer that reads).
 */
struct src {
	const struct srcops *ops;
	int a, b, c;
	struct ukevent uk;
	int finals;		/* final events delivered */
	int64_t since;		/* when collect() started waiting for it */
	size_t pumped;		/* bytes the peer read */
};

struct srcops {
	const char *name;
	const int *errs;	/* documented ret_error of an ADD */
	int (*make)(struct src *s, uint64_t tag);
	void (*fire)(struct src *s);
	bool (*check)(struct src *s, const struct ukevent *ev);
	void (*pump)(struct src *s);
};

static char aio_rbuf[NSRC][4096] __attribute__((aligned(4096)));
static char aio_sbuf[4096] __attribute__((aligned(4096)));
static char sink[65536];
static int listener = -1;	/* 127.0.0.1, for TCP pairs */
static int gen;			/* makes every name and tag distinct */

static int tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int one = 1;

	getsockname(listener, (struct sockaddr *)&sa, &len);
	*b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*b < 0 || connect(*b, (struct sockaddr *)&sa, len))
		return -1;
	*a = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	setsockopt(*a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return *a < 0 ? -1 : 0;
}

static int udp_pair(int *a, int *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in sb = sa;
	socklen_t len = sizeof(sa);

	*a = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	*b = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (*a < 0 || *b < 0 || bind(*a, (void *)&sa, len) ||
	    bind(*b, (void *)&sb, len) || getsockname(*a, (void *)&sa, &len) ||
	    getsockname(*b, (void *)&sb, &len) ||
	    connect(*a, (void *)&sb, len) || connect(*b, (void *)&sa, len))
		return -1;
	return 0;
}

static void fill(struct src *s, uint32_t type, uint64_t id, uint32_t event,
		 uint32_t req, uint64_t tag)
{
	memset(&s->uk, 0, sizeof(s->uk));
	s->uk.type = type;
	s->uk.id = id;
	s->uk.event = event;
	s->uk.req_flags = req;
	s->uk.user_data = tag;
}

static void write1(int fd)
{
	if (write(fd, "x", 1) != 1)
		printf("# producer write: %m\n");
}

static bool any_event(struct src *s, const struct ukevent *ev)
{
	(void)s;
	return !(ev->ret_flags & KEVENT_RET_BROKEN);
}

/* USER: fired by TRIGGER, so the instance is needed: kept in s->c. */
static int mk_user(struct src *s, uint64_t tag)
{
	fill(s, KEVENT_TYPE_USER, tag, KEVENT_USER_TRIGGER, KEVENT_REQ_ET, tag);
	return 0;
}

static void fire_user(struct src *s)
{
	if (kt_trigger(s->c, s->uk.id))
		printf("# trigger failed\n");
}

static bool chk_user(struct src *s, const struct ukevent *ev)
{
	(void)s;
	return ev->ret_data == 1;
}

static int mk_pipe(struct src *s, uint64_t tag)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return -1;
	s->a = p[0];
	s->b = p[1];
	fill(s, KEVENT_TYPE_POLL, s->a, POLLIN, KEVENT_REQ_ONESHOT, tag);
	return 0;
}

/* A FIFO open for both: its poll sleeps on two wait queues. */
static int mk_fifo(struct src *s, uint64_t tag)
{
	char path[64];

	snprintf(path, sizeof(path), TOPDIR "/fifo%d", gen++);
	if (mkfifo(path, 0600))
		return -1;
	s->a = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	unlink(path);
	s->b = dup(s->a);
	fill(s, KEVENT_TYPE_POLL, s->a, POLLIN, KEVENT_REQ_ONESHOT, tag);
	return s->a < 0 ? -1 : 0;
}

/*
 * An epoll file watching a pipe: its ADD takes its own path, through
 * epoll's loop and depth checks (epoll_nested_add()), between two holds
 * of the instance mutex.
 */
static int mk_epoll(struct src *s, uint64_t tag)
{
	struct epoll_event ee = { .events = EPOLLIN };
	int p[2];

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return -1;
	s->c = p[0];
	s->b = p[1];
	s->a = epoll_create1(EPOLL_CLOEXEC);
	if (s->a < 0 || epoll_ctl(s->a, EPOLL_CTL_ADD, s->c, &ee))
		return -1;
	fill(s, KEVENT_TYPE_POLL, s->a, POLLIN, KEVENT_REQ_ONESHOT, tag);
	return 0;
}

static int mk_eventfd(struct src *s, uint64_t tag)
{
	s->a = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	fill(s, KEVENT_TYPE_POLL, s->a, POLLIN, KEVENT_REQ_ONESHOT, tag);
	return s->a < 0 ? -1 : 0;
}

static void fire_eventfd(struct src *s)
{
	uint64_t one = 1;

	if (write(s->a, &one, 8) != 8)
		printf("# eventfd write: %m\n");
}

static void fire_b(struct src *s)
{
	write1(s->b);
}

static int mk_timer(struct src *s, uint64_t tag)
{
	fill(s, KEVENT_TYPE_TIMER, tag, KEVENT_TIMER_EXPIRED,
	     KEVENT_REQ_ONESHOT, tag);
	s->uk.args[0] = 1000000;	/* 1 ms: fires by itself */
	return 0;
}

static bool chk_count(struct src *s, const struct ukevent *ev)
{
	(void)s;
	return ev->ret_data >= 1;
}

/* INODE on a tmpfs directory of its own; fired by creating an entry. */
static int mk_inode(struct src *s, uint64_t tag)
{
	char path[64];

	snprintf(path, sizeof(path), TOPDIR "/d%d", gen++);
	if (mkdir(path, 0700))
		return -1;
	s->a = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fill(s, KEVENT_TYPE_INODE, s->a, KEVENT_INODE_CREATE,
	     KEVENT_REQ_ONESHOT, tag);
	return s->a < 0 ? -1 : 0;
}

static void fire_inode(struct src *s)
{
	int fd = openat(s->a, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	if (fd < 0)
		printf("# inode producer: %m\n");
	close(fd);
}

static bool chk_inode(struct src *s, const struct ukevent *ev)
{
	(void)s;
	return ev->ret_data & KEVENT_INODE_CREATE;
}

static int mk_sock(struct src *s, uint64_t tag, int kind)
{
	int p[2], ret;

	if (kind == 0)
		ret = tcp_pair(&s->a, &s->b);
	else if (kind == 1)
		ret = udp_pair(&s->a, &s->b);
	else if ((ret = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p)) == 0) {
		s->a = p[0];
		s->b = p[1];
	}
	fill(s, KEVENT_TYPE_SOCKET, s->a, KEVENT_SOCKET_RECV,
	     KEVENT_REQ_ONESHOT, tag);
	return ret;
}

static int mk_tcp(struct src *s, uint64_t t) { return mk_sock(s, t, 0); }
static int mk_udp(struct src *s, uint64_t t) { return mk_sock(s, t, 1); }
static int mk_unix(struct src *s, uint64_t t) { return mk_sock(s, t, 2); }

static bool chk_sock(struct src *s, const struct ukevent *ev)
{
	(void)s;
	return KEVENT_SOCKET_READY(ev->ret_data) & KEVENT_SOCKET_RECV;
}

/* A listener of its own: ACCEPT, fired by a connection. */
static int mk_listen(struct src *s, uint64_t tag)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	s->a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->a < 0 || bind(s->a, (void *)&sa, sizeof(sa)) || listen(s->a, 4))
		return -1;
	fill(s, KEVENT_TYPE_SOCKET, s->a, KEVENT_SOCKET_ACCEPT,
	     KEVENT_REQ_ONESHOT, tag);
	return 0;
}

static void fire_connect(struct src *s)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	getsockname(s->a, (void *)&sa, &len);
	s->b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (connect(s->b, (void *)&sa, len))
		printf("# connect: %m\n");
}

static bool chk_accept(struct src *s, const struct ukevent *ev)
{
	(void)s;
	return KEVENT_SOCKET_READY(ev->ret_data) & KEVENT_SOCKET_ACCEPT &&
	       KEVENT_SOCKET_BACKLOG(ev->ret_data) >= 1;
}

static int mk_signal(struct src *s, uint64_t tag)
{
	fill(s, KEVENT_TYPE_SIGNAL, SIGUSR1, KEVENT_SIGNAL_RECEIVED,
	     KEVENT_REQ_ONESHOT, tag);
	return 0;
}

static void fire_signal(struct src *s)
{
	(void)s;
	kill(getpid(), SIGUSR1);
}

static bool chk_signal(struct src *s, const struct ukevent *ev)
{
	(void)s;
	return KEVENT_SIGNAL_PID(ev->ret_data) == getpid();
}

/* AIO: buffers are static, so they are present and locked (mlockall). */
static int mk_aio(struct src *s, uint64_t tag, int kind, uint32_t op)
{
	static int slot;
	char *buf = op == KEVENT_AIO_RECV ? aio_rbuf[slot++ % NSRC] : aio_sbuf;
	int ret = kind ? mk_unix(s, tag) : mk_tcp(s, tag);

	if (op == KEVENT_AIO_RECV)	/* what a check finds must be new */
		memset(buf, 0, sizeof(aio_rbuf[0]));
	fill(s, KEVENT_TYPE_AIO, KEVENT_AIO_ID(s->a, tag & 0xffff), op,
	     KEVENT_REQ_ONESHOT, tag);
	s->uk.args[0] = (uintptr_t)buf;
	s->uk.args[1] = op == KEVENT_AIO_RECV ? sizeof(aio_rbuf[0]) : AIO_LEN;
	return ret;
}

static int mk_arecv_tcp(struct src *s, uint64_t t) { return mk_aio(s, t, 0, KEVENT_AIO_RECV); }
static int mk_arecv_unix(struct src *s, uint64_t t) { return mk_aio(s, t, 1, KEVENT_AIO_RECV); }
static int mk_asend_tcp(struct src *s, uint64_t t) { return mk_aio(s, t, 0, KEVENT_AIO_SEND); }
static int mk_asend_unix(struct src *s, uint64_t t) { return mk_aio(s, t, 1, KEVENT_AIO_SEND); }

static void fire_aio_data(struct src *s)
{
	if (send(s->b, aio_sbuf, AIO_LEN, 0) != AIO_LEN)
		printf("# aio producer: %m\n");
}

static bool chk_arecv(struct src *s, const struct ukevent *ev)
{
	const char *buf = (const char *)(uintptr_t)s->uk.args[0];

	return ev->ret_data == AIO_LEN && !memcmp(buf, aio_sbuf, AIO_LEN);
}

/* The peer reads what an AIO send or sendfile moves. */
static void pump_peer(struct src *s)
{
	ssize_t r;

	while ((r = recv(s->b, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
		s->pumped += r;
}

static bool chk_asend(struct src *s, const struct ukevent *ev)
{
	pump_peer(s);
	return ev->ret_data == AIO_LEN && s->pumped == AIO_LEN;
}

/* sendfile of a tmpfs file, 64 KiB a chunk, progress reported. */
static int mk_sendfile(struct src *s, uint64_t tag)
{
	int ret = mk_tcp(s, tag);

	s->c = open(TOPDIR "/file", O_RDONLY | O_CLOEXEC);
	fill(s, KEVENT_TYPE_AIO, KEVENT_AIO_ID(s->a, s->c), KEVENT_AIO_SENDFILE,
	     KEVENT_REQ_ONESHOT, tag);
	s->uk.args[1] = FILE_LEN;
	s->uk.arg_flags = KEVENT_AIO_PROGRESS;
	return ret || s->c < 0 ? -1 : 0;
}

static bool chk_sendfile(struct src *s, const struct ukevent *ev)
{
	/* The last bytes may still be on their way to the peer. */
	for (int i = 0; i < 100 && s->pumped < FILE_LEN; i++) {
		pump_peer(s);
		kt_sleep_ms(10);
	}
	return ev->ret_data == FILE_LEN && s->pumped == FILE_LEN;
}

static void nop(struct src *s) { (void)s; }

static const struct srcops
	S_USER = { "user", R_USER, mk_user, fire_user, chk_user, NULL },
	S_PIPE = { "poll-pipe", R_POLL, mk_pipe, fire_b, any_event, NULL },
	S_FIFO = { "poll-fifo", R_POLL, mk_fifo, fire_b, any_event, NULL },
	S_EVFD = { "poll-eventfd", R_POLL, mk_eventfd, fire_eventfd, any_event, NULL },
	S_EPOLL = { "poll-epoll", R_POLL, mk_epoll, fire_b, any_event, NULL },
	S_TIMER = { "timer", R_USER, mk_timer, nop, chk_count, NULL },
	S_INODE = { "inode", R_INODE, mk_inode, fire_inode, chk_inode, NULL },
	S_TCP = { "socket-tcp", R_SOCK, mk_tcp, fire_b, chk_sock, NULL },
	S_UDP = { "socket-udp", R_SOCK, mk_udp, fire_b, chk_sock, NULL },
	S_UNIX = { "socket-unix", R_SOCK, mk_unix, fire_b, chk_sock, NULL },
	S_LISTEN = { "socket-listen", R_SOCK, mk_listen, fire_connect, chk_accept, NULL },
	S_SIGNAL = { "signal", R_USER, mk_signal, fire_signal, chk_signal, NULL },
	S_ARECV_TCP = { "aio-recv-tcp", R_AIO, mk_arecv_tcp, fire_aio_data, chk_arecv, NULL },
	S_ARECV_UNIX = { "aio-recv-unix", R_AIO, mk_arecv_unix, fire_aio_data, chk_arecv, NULL },
	S_ASEND_TCP = { "aio-send-tcp", R_AIO, mk_asend_tcp, nop, chk_asend, pump_peer },
	S_ASEND_UNIX = { "aio-send-unix", R_AIO, mk_asend_unix, nop, chk_asend, pump_peer },
	S_SENDFILE = { "aio-sendfile", R_AIO, mk_sendfile, nop, chk_sendfile, pump_peer };

/* --- one step's state ------------------------------------------------- */

struct st {
	int kfd;
	unsigned int entries;	/* ring slots, 0 without a ring */
	bool post;
	struct kevent_ring *ring;
	uint32_t tail;		/* our consumer index */
	int nsrc;
	struct src src[NSRC];
	struct ukevent arr[BATCH];	/* a batch and its answers */
	bool reg[BATCH];		/* expected registered */
	int got[BATCH];			/* deliveries per entry */
	long ret;
};

static struct st S;		/* static: present and locked */
static struct ukevent evbuf[64];

static int st_open(struct st *st, unsigned int entries, unsigned int flags)
{
	memset(st, 0, sizeof(*st));
	st->kfd = sys_kevent_init(entries, flags | KEVENT_CLOEXEC);
	if (st->kfd < 0)
		return -1;
	st->entries = entries;
	st->post = flags & KEVENT_RING_POST;
	if (entries && !(st->ring = kt_ring_map(st->kfd, entries)))
		return -1;
	return 0;
}

static void src_free(struct src *s)
{
	if (s->a > 0)
		close(s->a);
	if (s->b > 0)
		close(s->b);
	if (s->c > 0 && s->ops != &S_USER)
		close(s->c);
	s->a = s->b = s->c = 0;
}

static void st_close(struct st *st)
{
	struct timespec zero = { 0, 0 };
	sigset_t usr1;
	int i;

	for (i = 0; i < st->nsrc; i++)
		src_free(&st->src[i]);
	if (st->ring)
		kt_ring_unmap(st->ring, st->entries);
	if (st->kfd > 0)
		close(st->kfd);
	st->kfd = 0;
	st->ring = NULL;
	/* A signal whose kevent was not added stays pending: take it. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	while (sigtimedwait(&usr1, NULL, &zero) > 0)
		;
}

static struct src *add_src(struct st *st, const struct srcops *ops)
{
	struct src *s = &st->src[st->nsrc++];

	memset(s, 0, sizeof(*s));
	s->ops = ops;
	if (ops->make(s, 0x1000 + st->nsrc + ((uint64_t)gen++ << 16)))
		printf("# %s: cannot make the source: %m\n", ops->name);
	if (ops == &S_USER)
		s->c = st->kfd;
	return s;
}

static bool ring_sane(struct st *st)
{
	struct kevent_ring *r = st->ring;
	uint32_t head = kt_ring_head(r);

	if (r->entries != st->entries || r->mask != st->entries - 1 ||
	    head - r->tail > st->entries ||
	    (r->flags & ~(KEVENT_RING_FULL | KEVENT_RING_PENDING))) {
		bad("ring header: entries %u mask %u head %u tail %u flags %#x",
		    r->entries, r->mask, head, r->tail, r->flags);
		return false;
	}
	return true;
}

/* Credit one delivered event to its source (by user_data), or to a batch entry. */
static void account(struct st *st, const struct ukevent *ev)
{
	int i;

	if (ev->ret_flags & KEVENT_RET_BROKEN && ev->type == KEVENT_TYPE_AIO &&
	    ev->ret_error < 0 && -ev->ret_error < 256)
		aio_errs[-ev->ret_error]++;
	for (i = 0; i < st->nsrc; i++) {
		struct src *s = &st->src[i];

		if (ev->user_data != s->uk.user_data || ev->type != s->uk.type)
			continue;
		if (ev->ret_flags & KEVENT_RET_MORE)
			return;
		if (ev->ret_flags & KEVENT_RET_BROKEN)
			printf("# %s: delivered broken, error %d\n", s->ops->name,
			       ev->ret_error);
		else if (!s->ops->check(s, ev))
			bad("%s: wrong event: ret_data %#llx flags %#x",
			    s->ops->name, (unsigned long long)ev->ret_data,
			    ev->ret_flags);
		/* A completion that came late: a wakeup the source missed? */
		if (s->since && kt_since_ms(s->since) > 500)
			printf("# %s n=%u: %s delivered after %lld ms\n", cur_step,
			       cur_n, s->ops->name, (long long)kt_since_ms(s->since));
		s->finals++;
		return;
	}
	for (i = 0; i < BATCH; i++)
		if (ev->type == st->arr[i].type && ev->id == st->arr[i].id) {
			st->got[i]++;
			return;
		}
}

/* One look at the instance, unarmed: events into account(); -errno. */
static long collect_once(struct st *st, long ms)
{
	struct kevent_wait_args wa = kt_wait_args(ms, NULL);
	long n, i;

	if (!st->ring) {
		n = sys_kevent_get_events(st->kfd, 0, 64, evbuf, &wa,
					  sizeof(wa));
		for (i = 0; i < n; i++)
			account(st, &evbuf[i]);
		return n;
	}
	n = sys_kevent_wait(st->kfd, 0, &wa, sizeof(wa));
	if (n < 0)
		return n;
	ring_sane(st);
	for (i = 0; st->tail != kt_ring_head(st->ring); i++, st->tail++)
		account(st, kt_ring_slot(st->ring, st->entries, st->tail));
	kt_ring_set_tail(st->ring, st->tail);
	return i;
}

/* Collect until every source has its final event, or @ms; then pump. */
static void collect(struct st *st, long ms)
{
	int64_t start = kt_now_ns();
	bool all;
	int i;

	for (i = 0; i < st->nsrc; i++)
		st->src[i].since = start;
	do {
		for (i = 0; i < st->nsrc; i++)
			if (st->src[i].ops->pump)
				st->src[i].ops->pump(&st->src[i]);
		if (collect_once(st, 20) < 0)
			bad("collecting failed");
		all = true;
		for (i = 0; i < st->nsrc; i++)
			all &= st->src[i].finals > 0;
	} while (!all && kt_since_ms(start) < ms);
	/* A last look finds duplicates of one-shot and edge events. */
	collect_once(st, 0);
}

static void expect_finals(struct st *st)
{
	for (int i = 0; i < st->nsrc; i++)
		if (st->src[i].finals != 1)
			bad("%s: %d events delivered, 1 expected",
			    st->src[i].ops->name, st->src[i].finals);
}

/* Is (type, id) registered? Asked by REMOVE, which ends it if it is. */
static bool registered(struct st *st, const struct ukevent *uk)
{
	struct ukevent r = *uk;
	long ret = kt_ctl1(st->kfd, KEVENT_CTL_REMOVE, &r);

	if (ret && ret != -ENOENT)
		bad("REMOVE to probe: %ld", ret);
	return !ret;
}

/* --- the steps --------------------------------------------------------- */

struct step;
typedef void (*prep_fn)(const struct step *);
typedef long (*call_fn)(const struct step *);
typedef void (*check_fn)(const struct step *, long ret, bool injected);

struct step {
	const char *name;
	prep_fn prep;		/* build the state, unarmed */
	call_fn call;		/* the one call that faults are injected into */
	check_fn check;		/* invariants, unarmed; then tear down */
	const int *errs;	/* documented errnos of the call */
	unsigned int entries, flags;	/* instance */
	const struct srcops *src[NSRC];	/* registrations */
};

/* kevent_init(): an instance works, or nothing is left. */
static void prep_none(const struct step *t) { (void)t; memset(&S, 0, sizeof(S)); }

static long call_init(const struct step *t)
{
	return sys_kevent_init(t->entries, t->flags);
}

static void check_init(const struct step *t, long ret, bool inj)
{
	(void)inj;
	if (ret < 0)
		return;
	S.kfd = ret;
	S.entries = t->entries;
	if (t->entries) {
		S.ring = kt_ring_map(S.kfd, t->entries);
		if (!S.ring)
			bad("mmap of a new instance: %m");
		else if (ring_sane(&S) && kt_ring_head(S.ring))
			bad("new ring not empty");
	}
	add_src(&S, &S_USER);
	if (kt_ctl1(S.kfd, KEVENT_CTL_ADD, &S.src[0].uk))
		bad("ADD on a new instance failed");
	fire_user(&S.src[0]);
	collect(&S, WAIT_MS);
	expect_finals(&S);
	st_close(&S);
}

/* mmap() of the ring. */
static void prep_inst(const struct step *t)
{
	memset(&S, 0, sizeof(S));
	S.kfd = sys_kevent_init(t->entries, t->flags | KEVENT_CLOEXEC);
	if (S.kfd < 0)
		printf("# cannot make the instance: %m\n");
	S.entries = t->entries;
	S.post = t->flags & KEVENT_RING_POST;
}

static long call_mmap(const struct step *t)
{
	void *p = mmap(NULL, KEVENT_RING_SIZE(t->entries), PROT_READ | PROT_WRITE,
		       MAP_SHARED, S.kfd, 0);

	if (p == MAP_FAILED)
		return -errno;
	S.ring = p;
	return 0;
}

static void check_mmap(const struct step *t, long ret, bool inj)
{
	(void)inj;
	(void)ret;
	if (S.ring && ring_sane(&S) && kt_ring_head(S.ring))
		bad("new ring not empty");
	/* Works (mapped again if the first failed): an event goes through. */
	if (!S.ring && !(S.ring = kt_ring_map(S.kfd, t->entries)))
		bad("second mmap failed: %m");
	if (S.ring) {
		add_src(&S, &S_USER);
		kt_ctl1(S.kfd, KEVENT_CTL_ADD, &S.src[0].uk);
		fire_user(&S.src[0]);
		collect(&S, WAIT_MS);
		expect_finals(&S);
	}
	st_close(&S);
}

/* ADD of one registration of each source listed, as one call. */
static void prep_sources(const struct step *t)
{
	if (st_open(&S, t->entries, t->flags) < 0)
		printf("# cannot make the instance: %m\n");
	for (int i = 0; i < NSRC && t->src[i]; i++)
		add_src(&S, t->src[i]);
	for (int i = 0; i < S.nsrc; i++) {
		S.arr[i] = S.src[i].uk;
		S.arr[i].ret_error = 0x7eadbeef;
	}
	/* The posted case: a pipe with data, so its ADD signals at once. */
	for (int i = 0; i < S.nsrc; i++)
		if (S.post && S.src[i].ops == &S_PIPE) {
			S.arr[i].req_flags = S.src[i].uk.req_flags = KEVENT_REQ_ET;
			fire_b(&S.src[i]);
		}
	S.tail = S.ring ? kt_ring_head(S.ring) : 0;
}

static long call_add(const struct step *t)
{
	(void)t;
	return sys_kevent_ctl(S.kfd, KEVENT_CTL_ADD, S.nsrc, S.arr);
}

/*
 * After an ADD of nsrc entries: ret is nsrc (each ret_error says), or a
 * call error (nothing added). A failed entry is not registered, and
 * adding it again works; every source then delivers its event once.
 */
static void check_add(const struct step *t, long ret, bool inj)
{
	(void)t;
	(void)inj;
	if (ret >= 0 && ret != S.nsrc)
		bad("ADD of %d returned %ld", S.nsrc, ret);
	/*
	 * The posted pipe had data when it was added, so its source signalled
	 * during the ADD: if the ADD failed, no slot may be its.
	 */
	for (uint32_t j = S.tail; S.ring && j != kt_ring_head(S.ring); j++)
		for (int i = 0; i < S.nsrc; i++)
			if (S.src[i].ops == &S_PIPE &&
			    (ret < 0 || S.arr[i].ret_error) &&
			    kt_ring_slot(S.ring, S.entries, j)->user_data ==
			    S.src[i].uk.user_data)
				bad("posted ring has an event of the pipe whose ADD failed");
	for (int i = 0; i < S.nsrc; i++) {
		struct src *s = &S.src[i];
		long err = ret < 0 ? ret : S.arr[i].ret_error;

		if (ret >= 0 && err == 0x7eadbeef) {
			bad("%s: ret_error not written", s->ops->name);
			continue;
		}
		if (!err)
			continue;
		if (ret >= 0) {
			seen(err);
			if (!in(err, s->ops->errs))
				bad("%s: ADD failed with undocumented %s", s->ops->name,
				    strerrorname_np(-err));
		}
		if (registered(&S, &s->uk))
			bad("%s: ADD failed (%ld) but the key is registered",
			    s->ops->name, err);
		if (kt_ctl1(S.kfd, KEVENT_CTL_ADD, &s->uk))
			bad("%s: ADD again after the failed one fails", s->ops->name);
	}
	for (int i = 0; i < S.nsrc; i++)
		if (!(S.post && S.src[i].ops == &S_PIPE))
			S.src[i].ops->fire(&S.src[i]);
	collect(&S, WAIT_MS);
	expect_finals(&S);
	st_close(&S);
}

/* Everything of the step registered, unarmed, first. */
static void prep_registered(const struct step *t)
{
	prep_sources(t);
	if (call_add(t) != S.nsrc)
		printf("# prep: ADD failed\n");
	for (int i = 0; i < S.nsrc; i++)
		if (S.arr[i].ret_error)
			printf("# prep: ADD %s: %d\n", S.src[i].ops->name,
			       S.arr[i].ret_error);
}

static long call_remove(const struct step *t)
{
	(void)t;
	for (int i = 0; i < S.nsrc; i++)
		S.arr[i].ret_error = 0x7eadbeef;
	return sys_kevent_ctl(S.kfd, KEVENT_CTL_REMOVE, S.nsrc, S.arr);
}

/* A REMOVE that failed leaves the key registered; one that worked, not. */
static void check_remove(const struct step *t, long ret, bool inj)
{
	(void)t;
	(void)inj;
	if (ret >= 0 && ret != S.nsrc)
		bad("REMOVE of %d returned %ld", S.nsrc, ret);
	for (int i = 0; i < S.nsrc; i++) {
		long err = ret < 0 ? ret : S.arr[i].ret_error;
		bool reg = registered(&S, &S.src[i].uk);

		if (ret >= 0 && err)
			check_ret(S.src[i].ops->name, err, E_NONE);
		if (!err && reg)
			bad("%s: removed but still registered", S.src[i].ops->name);
		if (err && !reg)
			bad("%s: REMOVE failed (%ld) but the key is gone",
			    S.src[i].ops->name, err);
	}
	/* The sources stay usable: a new registration delivers. */
	for (int i = 0; i < S.nsrc; i++) {
		S.src[i].finals = 0;
		if (kt_ctl1(S.kfd, KEVENT_CTL_ADD, &S.src[i].uk))
			bad("%s: ADD after REMOVE failed", S.src[i].ops->name);
		S.src[i].ops->fire(&S.src[i]);
	}
	collect(&S, WAIT_MS);
	expect_finals(&S);
	st_close(&S);
}

/* MODIFY of each type that allows it: a new user_data, or the old one. */
static long call_modify(const struct step *t)
{
	(void)t;
	for (int i = 0; i < S.nsrc; i++) {
		S.arr[i] = S.src[i].uk;
		S.arr[i].user_data += 0x100000;
		S.arr[i].ret_error = 0x7eadbeef;
	}
	return sys_kevent_ctl(S.kfd, KEVENT_CTL_MODIFY, S.nsrc, S.arr);
}

/* Events are credited by user_data: the one the MODIFY's result says. */
static void check_modify(const struct step *t, long ret, bool inj)
{
	(void)t;
	(void)inj;
	if (ret >= 0 && ret != S.nsrc)
		bad("MODIFY of %d returned %ld", S.nsrc, ret);
	for (int i = 0; i < S.nsrc; i++) {
		long err = ret < 0 ? ret : S.arr[i].ret_error;

		if (ret >= 0 && err) {
			seen(err);
			if (!in(err, S.src[i].ops->errs))
				bad("%s: MODIFY failed with undocumented %s",
				    S.src[i].ops->name, strerrorname_np(-err));
		}
		if (!err)
			S.src[i].uk.user_data = S.arr[i].user_data;
		S.src[i].ops->fire(&S.src[i]);
	}
	collect(&S, WAIT_MS);
	expect_finals(&S);
	st_close(&S);
}

/*
 * Batches of USER kevents across the chunk boundary (64): BATCH entries,
 * two of them bad on purpose (a type of 16 or more; a duplicate key), at
 * places chosen by the fixed seed.
 */
static uint64_t rng = 0x6b6576656e74ULL;

static uint32_t rand32(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int bad_type_at, dup_at;

static void prep_batch(const struct step *t)
{
	if (st_open(&S, t->entries, 0) < 0)
		printf("# cannot make the instance: %m\n");
	for (int i = 0; i < BATCH; i++) {
		kt_user(&S.arr[i], 5000 + i, KEVENT_REQ_ET, 9000 + i);
		S.arr[i].ret_error = 0x7eadbeef;
	}
	S.arr[bad_type_at].type = 99;
	S.arr[dup_at].id = S.arr[dup_at - 1].id;
}

static long call_batch(const struct step *t)
{
	return sys_kevent_ctl(S.kfd, t->flags >> 16, BATCH, S.arr);
}

/* ret is the number of entries carried out; the rest were not touched. */
static long batch_err(long ret, int i)
{
	if (ret < 0 || i >= ret)
		return 1;	/* not carried out */
	return S.arr[i].ret_error;
}

static void check_batch_add(const struct step *t, long ret, bool inj)
{
	(void)t;
	(void)inj;
	if (ret == 0 || ret > BATCH)
		bad("batch ADD returned %ld", ret);
	for (int i = 0; i < BATCH; i++) {
		long err = batch_err(ret, i);
		bool want_reg = !err;

		if (i < ret && err && S.arr[i].ret_error == 0x7eadbeef)
			bad("entry %d: ret_error not written", i);
		if (ret > 0 && i >= ret && S.arr[i].ret_error != 0x7eadbeef &&
		    S.arr[i].ret_error != 0)
			bad("entry %d past the return has ret_error %d", i,
			    S.arr[i].ret_error);
		if (i == bad_type_at) {
			if (err != 1 && err != -EINVAL)
				bad("bad type entry: %ld", err);
			continue;
		}
		if (i == dup_at) {
			/* -EEXIST if its twin was added; else added itself. */
			if (err < 0 && err != -EEXIST)
				seen(err);
			if (err != 1 && err != (batch_err(ret, i - 1) ? 0 : -EEXIST) &&
			    !in(err, R_USER))
				bad("duplicate entry: %ld", err);
			continue;
		}
		if (err != 1 && err) {
			seen(err);
			if (!in(err, R_USER))
				bad("entry %d: undocumented %s", i,
				    strerrorname_np(-err));
		}
		if (i == dup_at - 1 && !batch_err(ret, dup_at))
			want_reg = true;
		if (registered(&S, &S.arr[i]) != want_reg)
			bad("entry %d: ret_error %ld but %sregistered", i, err,
			    want_reg ? "not " : "");
	}
	st_close(&S);
}

/* REMOVE, MODIFY, TRIGGER batches, all keys registered before. */
static void prep_batch_reg(const struct step *t)
{
	struct ukevent *a = S.arr;

	prep_batch(t);
	/* All valid and distinct in the state; bad ones only in the call. */
	for (int i = 0; i < BATCH; i++)
		kt_user(&a[i], 5000 + i, KEVENT_REQ_ET, 9000 + i);
	if (sys_kevent_ctl(S.kfd, KEVENT_CTL_ADD, BATCH, a) != BATCH)
		printf("# prep: batch ADD failed\n");
	for (int i = 0; i < BATCH; i++) {
		a[i].ret_error = 0x7eadbeef;
		a[i].user_data = 7000 + i;	/* what a MODIFY sets */
	}
	a[bad_type_at].type = 99;
	a[dup_at].id = 100000;		/* not registered: -ENOENT */
}

static void check_batch_other(const struct step *t, long ret, bool inj)
{
	unsigned int cmd = t->flags >> 16;
	int64_t start = kt_now_ns();
	int i, got = 0, want = 0;

	(void)inj;
	if (ret == 0 || ret > BATCH)
		bad("batch returned %ld", ret);
	for (i = 0; i < BATCH; i++) {
		long err = batch_err(ret, i);

		if (i == bad_type_at || i == dup_at) {
			if (err != 1 && err != (i == dup_at ? -ENOENT : -EINVAL))
				bad("entry %d: %ld", i, err);
			continue;
		}
		if (err != 1 && err) {
			seen(err);
			if (!in(err, E_NONE))
				bad("entry %d: undocumented %s", i,
				    strerrorname_np(-err));
		}
		S.reg[i] = cmd == KEVENT_CTL_REMOVE ? err != 0 : true;
		/* TRIGGER: an event for those done; MODIFY: trigger all now. */
		if (cmd == KEVENT_CTL_MODIFY)
			kt_trigger(S.kfd, S.arr[i].id);
		if (cmd != KEVENT_CTL_REMOVE && (!err || cmd == KEVENT_CTL_MODIFY))
			want++;
	}
	/* Every event once, with the user_data of the MODIFY if it worked. */
	while (got < want && kt_since_ms(start) < WAIT_MS) {
		long n = kt_get(S.kfd, 0, 64, evbuf, 20);

		for (long j = 0; j < n; j++) {
			i = evbuf[j].id - 5000;
			if (i < 0 || i >= BATCH) {
				bad("event of unknown id %llu",
				    (unsigned long long)evbuf[j].id);
				continue;
			}
			got++;
			S.got[i]++;
			if (cmd == KEVENT_CTL_MODIFY &&
			    evbuf[j].user_data != (batch_err(ret, i) ? 9000u + i : 7000u + i))
				bad("entry %d: user_data %llu after MODIFY %ld", i,
				    (unsigned long long)evbuf[j].user_data,
				    batch_err(ret, i));
		}
	}
	if (kt_get(S.kfd, 0, 64, evbuf, 0) > 0)
		got += 1000;
	if (got != want)
		bad("%d events delivered, %d expected", got, want);
	for (i = 0; i < BATCH; i++)
		if (i != bad_type_at && i != dup_at) {
			S.arr[i].type = KEVENT_TYPE_USER;
			if (registered(&S, &S.arr[i]) != S.reg[i])
				bad("entry %d: registered %d, expected %d", i,
				    !S.reg[i], S.reg[i]);
		}
	st_close(&S);
}

/*
 * Delivery: everything registered and fired, then one armed collection.
 * What it could not copy out stays queued (kevent.rst): the follow-up
 * collections deliver the rest, each event once.
 */
/* Each call waits 50 ms at most; the masked one with SIGUSR1 blocked. */
static struct kevent_wait_args wait_plain = {
	.timeout = { 0, 50000000 }, .flags = KEVENT_WAIT_TIMEOUT,
};
static struct kevent_wait_args wait_masked = {
	.timeout = { 0, 50000000 }, .flags = KEVENT_WAIT_TIMEOUT,
};
static sigset_t sigmask_wait;

static void prep_fired(const struct step *t)
{
	prep_registered(t);
	for (int i = 0; i < S.nsrc; i++)
		S.src[i].ops->fire(&S.src[i]);
	kt_sleep_ms(20);	/* the timer expires, data crosses loopback */
	for (int i = 0; i < S.nsrc; i++)
		if (S.src[i].ops->pump)
			S.src[i].ops->pump(&S.src[i]);
	sigemptyset(&sigmask_wait);
	sigaddset(&sigmask_wait, SIGUSR1);
	wait_masked.sigmask = (uintptr_t)&sigmask_wait;
	wait_masked.sigsetsize = KERNEL_SIGSET_SIZE;
}

static long call_get(const struct step *t)
{
	return sys_kevent_get_events(S.kfd, 1, 64, evbuf,
				     t->flags & 1 ? &wait_masked : &wait_plain,
				     sizeof(wait_plain));
}

static long call_wait(const struct step *t)
{
	(void)t;
	return sys_kevent_wait(S.kfd, 1, &wait_plain, sizeof(wait_plain));
}

static void check_delivery(const struct step *t, long ret, bool inj)
{
	(void)inj;
	if (t->call == call_get) {
		for (long i = 0; i < ret; i++)
			account(&S, &evbuf[i]);
	} else if (ret >= 0 && S.ring && ring_sane(&S)) {
		for (; S.tail != kt_ring_head(S.ring); S.tail++)
			account(&S, kt_ring_slot(S.ring, S.entries, S.tail));
		kt_ring_set_tail(S.ring, S.tail);
	}
	collect(&S, WAIT_MS);
	expect_finals(&S);
	st_close(&S);
}

/* close() of an instance with everything registered and fired. */
static long call_close(const struct step *t)
{
	(void)t;
	long ret = close(S.kfd) ? -errno : 0;

	S.kfd = 0;
	return ret;
}

static void check_close(const struct step *t, long ret, bool inj)
{
	(void)t;
	(void)ret;
	(void)inj;
	st_close(&S);
}

#define ALL_SOURCES &S_USER, &S_PIPE, &S_FIFO, &S_EVFD, &S_EPOLL, &S_TIMER, \
	&S_INODE, \
	&S_TCP, &S_UDP, &S_UNIX, &S_LISTEN, &S_SIGNAL, &S_ARECV_TCP, \
	&S_ARECV_UNIX, &S_ASEND_TCP, &S_ASEND_UNIX, &S_SENDFILE
#define ADD(src) { "add-" #src, prep_sources, call_add, check_add, E_CTL, \
	0, 0, { &S_##src } }
#define BATCH_CMD(cmd) ((unsigned int)(cmd) << 16)

static const struct step steps[] = {
	{ "init", prep_none, call_init, check_init, E_INIT, 0, 0, {} },
	{ "init-cloexec", prep_none, call_init, check_init, E_INIT, 0, KEVENT_CLOEXEC, {} },
	{ "init-ring", prep_none, call_init, check_init, E_INIT, 64, 0, {} },
	{ "init-ring-post", prep_none, call_init, check_init, E_INIT, 64, KEVENT_RING_POST, {} },
	{ "init-ring-4096", prep_none, call_init, check_init, E_INIT, 4096, 0, {} },
	{ "mmap-ring", prep_inst, call_mmap, check_mmap, E_MMAP, 64, 0, {} },
	{ "mmap-ring-post", prep_inst, call_mmap, check_mmap, E_MMAP, 64, KEVENT_RING_POST, {} },
	ADD(USER), ADD(PIPE), ADD(FIFO), ADD(EVFD), ADD(EPOLL), ADD(TIMER),
	ADD(INODE),
	ADD(TCP), ADD(UDP), ADD(UNIX), ADD(LISTEN), ADD(SIGNAL),
	ADD(ARECV_TCP), ADD(ARECV_UNIX), ADD(ASEND_TCP), ADD(ASEND_UNIX),
	ADD(SENDFILE),
	{ "add-posted-user-pipe", prep_sources, call_add, check_add, E_CTL, 64,
	  KEVENT_RING_POST, { &S_USER, &S_PIPE } },
	{ "add-every-type", prep_sources, call_add, check_add, E_CTL, 0, 0,
	  { ALL_SOURCES } },
	{ "add-every-type-posted", prep_sources, call_add, check_add, E_CTL, 64,
	  KEVENT_RING_POST, { ALL_SOURCES } },
	{ "add-batch-130", prep_batch, call_batch, check_batch_add, E_CTL, 0,
	  BATCH_CMD(KEVENT_CTL_ADD), {} },
	{ "remove-batch-130", prep_batch_reg, call_batch, check_batch_other, E_CTL,
	  0, BATCH_CMD(KEVENT_CTL_REMOVE), {} },
	{ "modify-batch-130", prep_batch_reg, call_batch, check_batch_other, E_CTL,
	  0, BATCH_CMD(KEVENT_CTL_MODIFY), {} },
	{ "trigger-batch-130", prep_batch_reg, call_batch, check_batch_other, E_CTL,
	  0, BATCH_CMD(KEVENT_CTL_TRIGGER), {} },
	{ "remove-every-type", prep_registered, call_remove, check_remove, E_CTL,
	  0, 0, { ALL_SOURCES } },
	{ "modify-every-type", prep_registered, call_modify, check_modify, E_CTL,
	  0, 0, { &S_USER, &S_PIPE, &S_FIFO, &S_EVFD, &S_EPOLL, &S_TCP, &S_UDP,
		  &S_UNIX, &S_LISTEN, &S_SIGNAL } },
	{ "get-events", prep_fired, call_get, check_delivery, E_GET, 0, 0,
	  { ALL_SOURCES } },
	{ "get-events-sigmask", prep_fired, call_get, check_delivery, E_GET, 0, 1,
	  { &S_USER, &S_PIPE, &S_SIGNAL, &S_ARECV_TCP, &S_ASEND_TCP } },
	{ "wait-ring", prep_fired, call_wait, check_delivery, E_GET, RING, 0,
	  { ALL_SOURCES } },
	{ "wait-ring-post", prep_fired, call_wait, check_delivery, E_GET, 64,
	  KEVENT_RING_POST, { ALL_SOURCES } },
	{ "close", prep_fired, call_close, check_close, E_NONE, 0, 0, { ALL_SOURCES } },
	{ "close-ring-post", prep_fired, call_close, check_close, E_NONE, 64,
	  KEVENT_RING_POST, { ALL_SOURCES } },
};

/* --- counts that must come back ----------------------------------------- */

/*
 * How many of PROBE_LIMIT + 1 registrations this user can make under a
 * limit of PROBE_LIMIT: the limit minus what the user holds. Compared
 * before and after a step, it finds a charge not given back.
 */
static int probe_kevents(void)
{
	char saved[64], val[16];
	int fd, ok = 0;

	if (kt_read_file(MAX_KEVENTS, saved, sizeof(saved)))
		return -1;
	snprintf(val, sizeof(val), "%d", PROBE_LIMIT);
	kt_write_file(MAX_KEVENTS, val);
	fd = sys_kevent_init(0, KEVENT_CLOEXEC);
	for (int i = 0; fd >= 0 && i <= PROBE_LIMIT; i++)
		ok += kt_add(fd, i, 0, 0) == 0;
	close(fd);
	kt_write_file(MAX_KEVENTS, saved);
	return ok;
}

/* The same for inode watches (max_kevent_inodes), on files of their own. */
static int probe_inodes(void)
{
	struct ukevent uk;
	char saved[64], val[16], path[64];
	int fd, fds[PROBE_LIMIT + 1], ok = 0, i;

	if (kt_read_file(MAX_INODES, saved, sizeof(saved)))
		return -1;
	snprintf(val, sizeof(val), "%d", PROBE_LIMIT);
	kt_write_file(MAX_INODES, val);
	fd = sys_kevent_init(0, KEVENT_CLOEXEC);
	for (i = 0; i <= PROBE_LIMIT; i++) {
		snprintf(path, sizeof(path), TOPDIR "/probe%d", i);
		fds[i] = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
		memset(&uk, 0, sizeof(uk));
		uk.type = KEVENT_TYPE_INODE;
		uk.id = fds[i];
		uk.event = KEVENT_INODE_REMOVE;
		ok += fd >= 0 && kt_ctl1(fd, KEVENT_CTL_ADD, &uk) == 0;
	}
	close(fd);
	for (i = 0; i <= PROBE_LIMIT; i++)
		close(fds[i]);
	kt_write_file(MAX_INODES, saved);
	return ok;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* --- the sweep --------------------------------------------------------- */

/*
 * A step may take at most twice its share of what is left of the total
 * budget, so that a slow step does not leave the last ones without faults.
 */
static long step_budget_ms(int steps_left)
{
	long left = total_budget_ms - kt_since_ms(sweep_start);
	long share = left > 0 ? 2 * left / steps_left : 0;

	return share < STEP_BUDGET_MS ? share : STEP_BUDGET_MS;
}

static void run_step(const struct step *t, int steps_left)
{
	int fds = count_fds(), kev = probe_kevents(), ino = probe_inodes();
	unsigned int n, faults = 0;
	int64_t start = kt_now_ns();
	long errs[256] = { 0 };
	char list[256] = "";
	long budget = step_budget_ms(steps_left);
	bool faulty = armed_ok && budget > 0;

	cur_step = t->name;
	step_broken = 0;
	nr_steps++;
	/* The kernel's stack traces of this step's faults follow. */
	printf("# step %d %s\n", nr_steps, t->name);

	if (armed_ok && !faulty)
		printf("# %s: total time budget spent, run without faults\n",
		       t->name);
	for (n = 1; n <= MAX_N; n++) {
		bool inj = false;
		long ret;

		if (n > 1 && kt_since_ms(start) > budget) {
			printf("# %s: sweep cut at n=%u by the time budget\n",
			       t->name, n);
			break;
		}

		cur_n = faulty ? n : 0;
		fflush(stdout);
		t->prep(t);
		if (faulty)
			arm(n);
		ret = t->call(t);
		if (faulty)
			inj = disarm();
		check_ret(t->name, ret, t->errs);
		if (inj && ret < 0 && -ret < 256)
			errs[-ret]++;
		t->check(t, ret, inj);
		if (!inj)
			break;
		faults++;
	}
	if (n > MAX_N)
		printf("# %s: sweep cut at n=%d, the call has more fault points\n",
		       t->name, MAX_N);
	nr_faults += faults;
	if (probe_kevents() != kev)
		bad("registration count not back: headroom %d before, %d after",
		    kev, probe_kevents());
	if (probe_inodes() != ino)
		bad("inode watch count not back: headroom %d before, %d after",
		    ino, probe_inodes());
	if (count_fds() != fds)
		bad("%d descriptors open before, %d after", fds, count_fds());
	for (int e = 1; e < 256; e++)
		if (errs[e])
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
				 " %s:%ld", strerrorname_np(e), errs[e]);
	printf("# %s: %u faults injected in %lld ms, call errors:%s\n", t->name,
	       faults, (long long)kt_since_ms(start), *list ? list : " none");
	if (step_broken) {
		nr_fail++;
		printf("not ok %d %s\n", nr_steps, t->name);
	} else if (!faulty) {
		nr_skip++;
		printf("ok %d %s # SKIP no fail-nth (ran once without faults)\n",
		       nr_steps, t->name);
	} else {
		nr_pass++;
		printf("ok %d %s\n", nr_steps, t->name);
	}
}

/* 128 KiB of stack made present, so that mlockall() keeps it. */
static __attribute__((noinline)) void prefault_stack(void)
{
	volatile char pad[128 * 1024];

	for (size_t i = 0; i < sizeof(pad); i += 4096)
		pad[i] = 0;
}

static int setup(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static char data[FILE_LEN];
	sigset_t set;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	mkdir(TOPDIR, 0700);
	/* The AIO sources' sendfile reads this; tmpfs under /tmp. */
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = rand32();
	for (size_t i = 0; i < sizeof(aio_sbuf); i++)
		aio_sbuf[i] = rand32();
	fd = open(TOPDIR "/file", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, sizeof(data)) != sizeof(data))
		return -1;
	close(fd);
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listener < 0 || bind(listener, (void *)&sa, sizeof(sa)) ||
	    listen(listener, 64))
		return -1;
	bad_type_at = 58 + rand32() % 4;	/* near the chunk boundary */
	dup_at = 64 + rand32() % 6;
	/*
	 * Everything the kernel reads or writes for us is static and now
	 * present and locked: a page fault during an armed call would take
	 * the fault meant for kevent.
	 */
	prefault_stack();
	if (mlockall(MCL_CURRENT))
		printf("# mlockall: %m\n");
	return 0;
}

int main(void)
{
	size_t nsteps = sizeof(steps) / sizeof(steps[0]);
	int e;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..%zu\n", nsteps);
	e = sys_kevent_init(0, KEVENT_CLOEXEC);
	if (e >= 0)
		close(e);
	if (kt_no_kevent(e) || geteuid()) {
		printf("# no kevent system calls, or not root\n");
		for (size_t i = 0; i < nsteps; i++)
			printf("ok %zu %s # SKIP\n", i + 1, steps[i].name);
		printf("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:%zu error:0\n",
		       nsteps);
		return 4;
	}
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	armed_ok = nth_fd >= 0;
	if (!armed_ok)
		printf("# no /proc/thread-self/fail-nth: no fault injection\n");
	else
		configure_debugfs();
	if (setup()) {
		printf("Bail out! setup: %m\n");
		return 1;
	}
	/* A kernel parameter init does not know reaches it, and us, as such. */
	if (getenv("kf_budget"))
		total_budget_ms = atol(getenv("kf_budget")) * 1000;
	sweep_start = kt_now_ns();
	for (size_t i = 0; i < nsteps; i++)
		run_step(&steps[i], nsteps - i);

	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       nr_pass, nr_fail, nr_skip);
	printf("kevent-faults: %d steps, %ld faults injected, ", nr_steps,
	       nr_faults);
	for (e = 1, nth_fd = 0; e < 256; e++)
		nth_fd += errno_seen[e] > 0;
	printf("%d errnos seen (", nth_fd);
	for (e = 1, nth_fd = 0; e < 256; e++)
		if (errno_seen[e])
			printf("%s%s:%ld", nth_fd++ ? " " : "", strerrorname_np(e),
			       errno_seen[e]);
	printf("), %ld broken invariants\n", nr_broken);
	for (e = 1; e < 256; e++)
		if (aio_errs[e])
			printf("# AIO operations that failed under faults: %s:%ld\n",
			       strerrorname_np(e), aio_errs[e]);
	if (nr_fail)
		return 1;
	return armed_ok ? 0 : 4;
}

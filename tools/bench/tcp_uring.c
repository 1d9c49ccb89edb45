// SPDX-License-Identifier: GPL-2.0
/*
 * The io_uring server, the best one a server author would write on 6.12
 * without liburing (raw system calls, as backends.c):
 *  - IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN: completions
 *    are made only when the server asks, inside io_uring_enter() (the
 *    io_uring-tw row: SINGLE_ISSUER alone, completions made by task work
 *    at the server's next return from the kernel, or by an interrupt);
 *  - the ring's fd registered (IORING_REGISTER_RING_FDS), so that each
 *    enter skips the fd lookup;
 *  - one multishot receive per connection (IORING_RECV_MULTISHOT) into a
 *    provided buffer ring (IORING_REGISTER_PBUF_RING): data arrives in a
 *    completion, with no receive call;
 *  - S3: one multishot accept on the listening socket;
 *  - replies as IORING_OP_SEND (MSG_WAITALL), closes as IORING_OP_CLOSE,
 *    both with IOSQE_CQE_SKIP_SUCCESS (no completion unless they fail),
 *    submitted by the same io_uring_enter() that waits for the next
 *    completions: one system call per batch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tcp.h"

#define UR_SQ		1024
#define UR_CQ		8192
/*
 * Provided buffers, of run->rbuf bytes each, 1 MiB in all: the kernel
 * takes them in ring order, so the whole pool is the working set; a
 * larger one only costs cache misses (1024 x 16 KiB took S1 five times
 * epoll's CPU). Running out is no error: the multishot receive ends with
 * -ENOBUFS and is armed again.
 */
#define UR_POOL		(1 << 20)
#define UR_BGID		0

enum { OP_RECV = 1, OP_ACCEPT, OP_SEND, OP_CLOSE };

static uint64_t ur_data(int op, int fd)
{
	return (uint64_t)op << 32 | (uint32_t)fd;
}

struct ur {
	struct srv *s;
	int fd;			/* the ring's fd, then its registered index */
	unsigned int enter_flags;
	unsigned int *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	unsigned int sq_entries, sq_local, to_submit;
	struct io_uring_buf_ring *br;	/* the provided buffer ring */
	char *bufs;
	unsigned int nbufs;		/* a power of two */
	uint16_t br_tail;
};

static int ur_enter(struct ur *u, unsigned int min_complete, unsigned int flags)
{
	int ret = syscall(__NR_io_uring_enter, u->fd, u->to_submit,
			  min_complete, flags | u->enter_flags, NULL, 0);

	if (ret < 0 && errno == EINTR)
		return 0;
	if (ret < 0)
		fail("io_uring server: io_uring_enter: %s", strerror(errno));
	if ((unsigned int)ret != u->to_submit)
		fail("io_uring server: submitted %d of %u", ret, u->to_submit);
	u->to_submit = 0;
	return 0;
}

static struct io_uring_sqe *ur_sqe(struct ur *u, int op, int fd)
{
	struct io_uring_sqe *sqe;
	unsigned int idx;

	/* A full submission queue is submitted on its own (rare). */
	if (u->sq_local - __atomic_load_n(u->sq_head, __ATOMIC_ACQUIRE) >=
	    u->sq_entries) {
		__atomic_store_n(u->sq_tail, u->sq_local, __ATOMIC_RELEASE);
		COUNTED(ctl, ur_enter(u, 0, 0));
	}
	idx = u->sq_local & *u->sq_mask;
	sqe = &u->sqes[idx];
	memset(sqe, 0, sizeof(*sqe));
	sqe->fd = fd;
	sqe->user_data = ur_data(op, fd);
	u->sq_array[idx] = idx;
	u->sq_local++;
	u->to_submit++;
	return sqe;
}

static void ur_recv(struct ur *u, int fd)
{
	struct io_uring_sqe *sqe = ur_sqe(u, OP_RECV, fd);

	sqe->opcode = IORING_OP_RECV;
	sqe->ioprio = IORING_RECV_MULTISHOT;
	sqe->flags = IOSQE_BUFFER_SELECT;
	sqe->buf_group = UR_BGID;
}

static void ur_accept(struct ur *u)
{
	struct io_uring_sqe *sqe = ur_sqe(u, OP_ACCEPT, u->s->lfd);

	sqe->opcode = IORING_OP_ACCEPT;
	sqe->ioprio = IORING_ACCEPT_MULTISHOT;
	sqe->accept_flags = SOCK_CLOEXEC;
}

static void ur_send(struct ur *u, int fd, const void *buf, size_t len)
{
	struct io_uring_sqe *sqe = ur_sqe(u, OP_SEND, fd);

	sqe->opcode = IORING_OP_SEND;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->msg_flags = MSG_WAITALL;
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
}

static void ur_close(struct ur *u, int fd)
{
	struct io_uring_sqe *sqe = ur_sqe(u, OP_CLOSE, fd);

	sqe->opcode = IORING_OP_CLOSE;
	sqe->flags = IOSQE_CQE_SKIP_SUCCESS;
}

/* Give buffer @bid back to the kernel; published before the next enter. */
static void ur_buf_put(struct ur *u, unsigned int bid)
{
	struct io_uring_buf *b = &u->br->bufs[u->br_tail & (u->nbufs - 1)];

	b->addr = (uintptr_t)(u->bufs + (size_t)bid * u->s->run->rbuf);
	b->len = u->s->run->rbuf;
	b->bid = bid;
	u->br_tail++;
}

static void *ur_map(struct ur *u, size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, u->fd, off);

	if (p == MAP_FAILED)
		fail("io_uring server: mmap: %s", strerror(errno));
	return p;
}

static void ur_setup(struct ur *u, struct srv *s, unsigned int flags)
{
	struct io_uring_params p = {
		.flags = flags | IORING_SETUP_CQSIZE,
		.cq_entries = UR_CQ,
	};
	struct io_uring_rsrc_update reg_fd = { .offset = -1U };
	struct io_uring_buf_reg reg_br = { .bgid = UR_BGID };
	size_t sq_len, cq_len;
	char *sq;
	unsigned int i;

	u->s = s;
	u->fd = syscall(__NR_io_uring_setup, UR_SQ, &p);
	if (u->fd < 0)
		fail("io_uring server: io_uring_setup: %s", strerror(errno));
	if (!(p.features & IORING_FEAT_SINGLE_MMAP))
		fail("io_uring server: needs IORING_FEAT_SINGLE_MMAP");
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = ur_map(u, sq_len > cq_len ? sq_len : cq_len, IORING_OFF_SQ_RING);
	u->sqes = ur_map(u, p.sq_entries * sizeof(struct io_uring_sqe),
			 IORING_OFF_SQES);
	u->sq_head = (unsigned int *)(sq + p.sq_off.head);
	u->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	u->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	u->sq_array = (unsigned int *)(sq + p.sq_off.array);
	u->cq_head = (unsigned int *)(sq + p.cq_off.head);
	u->cq_tail = (unsigned int *)(sq + p.cq_off.tail);
	u->cq_mask = (unsigned int *)(sq + p.cq_off.ring_mask);
	u->cqes = (struct io_uring_cqe *)(sq + p.cq_off.cqes);
	u->sq_entries = p.sq_entries;
	u->sq_local = *u->sq_tail;

	/* The buffer ring and its buffers, in memory of our own. */
	for (u->nbufs = 1; u->nbufs * s->run->rbuf < UR_POOL; u->nbufs <<= 1)
		;
	reg_br.ring_entries = u->nbufs;
	u->br = mmap(NULL, u->nbufs * sizeof(struct io_uring_buf),
		     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		     MAP_POPULATE, -1, 0);
	u->bufs = mmap(NULL, (size_t)u->nbufs * s->run->rbuf,
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_POPULATE, -1, 0);
	if (u->br == MAP_FAILED || u->bufs == MAP_FAILED)
		fail("io_uring server: mmap: %s", strerror(errno));
	reg_br.ring_addr = (uintptr_t)u->br;
	if (syscall(__NR_io_uring_register, u->fd, IORING_REGISTER_PBUF_RING,
		    &reg_br, 1))
		fail("io_uring server: IORING_REGISTER_PBUF_RING: %s",
		     strerror(errno));
	for (i = 0; i < u->nbufs; i++)
		ur_buf_put(u, i);
	__atomic_store_n(&u->br->tail, u->br_tail, __ATOMIC_RELEASE);

	reg_fd.data = u->fd;
	if (syscall(__NR_io_uring_register, u->fd, IORING_REGISTER_RING_FDS,
		    &reg_fd, 1) != 1)
		fail("io_uring server: IORING_REGISTER_RING_FDS: %s",
		     strerror(errno));
	u->fd = reg_fd.offset;
	u->enter_flags = IORING_ENTER_REGISTERED_RING;
}

static void ur_received(struct ur *u, const struct io_uring_cqe *cqe, int fd)
{
	struct srv *s = u->s;
	struct conn *c = srv_conn(s, fd);
	unsigned int bid;
	size_t reply;

	if (cqe->res == -ENOBUFS) {
		/* Out of buffers: the multishot ended; arm it again. */
		ur_recv(u, fd);
		return;
	}
	if (cqe->res < 0)
		fail("io_uring server: receive: %s", strerror(-cqe->res));
	if (cqe->res == 0) {
		srv_eof(s, c);
		ur_close(u, fd);
		return;
	}
	if (!(cqe->flags & IORING_CQE_F_BUFFER))
		fail("io_uring server: a receive without its buffer");
	bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
	reply = srv_input(s, c, u->bufs + (size_t)bid * s->run->rbuf, cqe->res);
	ur_buf_put(u, bid);
	if (reply)
		ur_send(u, fd, c->out, reply);
	if (!(cqe->flags & IORING_CQE_F_MORE))
		ur_recv(u, fd);
}

static void ur_reap(struct ur *u)
{
	unsigned int head = *u->cq_head;
	unsigned int tail = __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE);

	for (; head != tail; head++) {
		const struct io_uring_cqe *cqe = &u->cqes[head & *u->cq_mask];
		int op = cqe->user_data >> 32, fd = (uint32_t)cqe->user_data;

		switch (op) {
		case OP_RECV:
			ur_received(u, cqe, fd);
			break;
		case OP_ACCEPT:
			if (cqe->res < 0)
				fail("io_uring server: accept: %s", strerror(-cqe->res));
			srv_accepted(u->s, cqe->res);
			ur_recv(u, cqe->res);
			if (!(cqe->flags & IORING_CQE_F_MORE))
				ur_accept(u);
			break;
		default:	/* sends and closes report failures only */
			fail("io_uring server: %s of fd %d: %s",
			     op == OP_SEND ? "send" : "close", fd,
			     strerror(-cqe->res));
		}
	}
	__atomic_store_n(u->cq_head, head, __ATOMIC_RELEASE);
	__atomic_store_n(&u->br->tail, u->br_tail, __ATOMIC_RELEASE);
	__atomic_store_n(u->sq_tail, u->sq_local, __ATOMIC_RELEASE);
}

static int ur_serve(struct srv *s, const struct tcp_backend *be)
{
	struct ur u = { 0 };
	int i;

	ur_setup(&u, s, be->flags);
	for (i = 0; i < s->ninitial; i++)
		ur_recv(&u, s->initial[i]);
	if (s->run->scn == TCP_S3)
		ur_accept(&u);
	__atomic_store_n(u.sq_tail, u.sq_local, __ATOMIC_RELEASE);
	ur_enter(&u, 0, 0);
	srv_begin(s);
	while (!srv_done(s)) {
		/*
		 * Submit the batch's sends and wait for the next completions.
		 * With task work (io_uring-tw) completions may be there
		 * already: then no waiting, and no call unless to submit.
		 */
		bool empty = *u.cq_head == __atomic_load_n(u.cq_tail, __ATOMIC_ACQUIRE);

		if (u.to_submit || empty)
			COUNTED(wait, ur_enter(&u, empty, IORING_ENTER_GETEVENTS));
		ur_reap(&u);
	}
	/* The last replies: submitted, and sent by the time the enter returns. */
	if (u.to_submit)
		COUNTED(wait, ur_enter(&u, 0, IORING_ENTER_GETEVENTS));
	return 0;
}

const struct tcp_backend tcp_uring = {
	.name = "io_uring", .scenarios = 7, .serve = ur_serve,
	.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
};

const struct tcp_backend tcp_uring_tw = {
	.name = "io_uring-tw", .scenarios = 7, .serve = ur_serve,
	.flags = IORING_SETUP_SINGLE_ISSUER,
};

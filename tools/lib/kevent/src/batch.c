// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Changes collected in an array of struct kevent_change, each with its
 * command, carried out in order: by kevent_submit() in one call on an
 * instance with a ring, or by kevent_ctl(), one call per run of entries
 * with the same command, on any instance.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Entries copied per kevent_ctl(): the kernel reads 64 at a time too. */
#define KEVENT_BATCH_CHUNK	64

KEVENT_EXPORT void kevent_batch_init(struct kevent_batch *b,
				     struct kevent_change *changes,
				     unsigned int capacity)
{
	b->changes = changes;
	b->nr = 0;
	b->capacity = capacity;
}

KEVENT_EXPORT struct ukevent *kevent_batch_add(struct kevent_batch *b,
					       unsigned int cmd)
{
	struct kevent_change *ch;

	if (b->nr >= b->capacity)
		return NULL;
	ch = &b->changes[b->nr++];
	/* Reserved fields included: the kernel refuses them non-zero. */
	memset(ch, 0, sizeof(*ch));
	ch->cmd = cmd;
	return &ch->ev;
}

/* Before a call: what an entry the call does not reach is left with. */
static void kevent_batch_mark(struct kevent_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		b->changes[i].ev.ret_error = KEVENT_NOT_REACHED;
}

/*
 * kevent_ctl() of @n entries from @i, all with the same command, through
 * a contiguous copy (kevent_ctl() takes an array of struct ukevent).
 * Return: the entries carried out, or the call's negative errno.
 */
static int kevent_batch_ctl_run(int fd, struct kevent_batch *b,
				unsigned int i, unsigned int n)
{
	struct ukevent chunk[KEVENT_BATCH_CHUNK];
	unsigned int k;
	int ret;

	for (k = 0; k < n; k++)
		chunk[k] = b->changes[i + k].ev;
	ret = kevent_ctl(fd, b->changes[i].cmd, n, chunk, 0);
	for (k = 0; ret > 0 && k < (unsigned int)ret; k++)
		b->changes[i + k].ev = chunk[k];
	return ret;
}

KEVENT_EXPORT int kevent_batch_ctl(struct kevent_queue *q,
				   struct kevent_batch *b)
{
	unsigned int i = 0, n;
	int ret;

	kevent_batch_mark(b);
	while (i < b->nr) {
		for (n = 1; i + n < b->nr && n < KEVENT_BATCH_CHUNK &&
		     b->changes[i + n].cmd == b->changes[i].cmd; n++)
			;
		ret = kevent_batch_ctl_run(q->fd, b, i, n);
		if (ret < 0)
			return ret;
		i += ret;
		/* The kernel stopped short: the rest is not reached. */
		if ((unsigned int)ret < n)
			break;
	}
	return i;
}

KEVENT_EXPORT int kevent_batch_submit(struct kevent_queue *q,
				      struct kevent_batch *b,
				      unsigned int min_nr,
				      const struct __kernel_timespec *timeout)
{
	struct kevent_submit s;

	kevent_batch_mark(b);
	memset(&s, 0, sizeof(s));
	s.changes = (uint64_t)(uintptr_t)b->changes;
	s.nr_changes = b->nr;
	s.change_size = sizeof(struct kevent_change);
	s.min_nr = min_nr;
	kevent_wait_args_set(&s.wait, timeout, NULL);
	return kevent_submit(q->fd, &s);
}

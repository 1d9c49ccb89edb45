// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * The buffer ring of multishot receives: memory of its own, zeroed and
 * page-aligned, so that the kernel's head and the program's tail start at
 * 0 and no other data shares its pages. Adding and publishing are inline
 * in kevent/kevent.h.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

static size_t kevent_bufs_bytes(unsigned int entries)
{
	return sizeof(struct kevent_buf_ring) +
	       (size_t)entries * sizeof(struct kevent_buf);
}

KEVENT_EXPORT int kevent_bufs_init(struct kevent_bufs *br, unsigned int entries)
{
	void *p;

	memset(br, 0, sizeof(*br));
	if (!kevent__ring_size_ok(entries, KEVENT_BUF_RING_MAX))
		return -EINVAL;
	p = mmap(NULL, kevent_bufs_bytes(entries), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	br->ring = p;
	br->entries = entries;
	br->mask = entries - 1;
	return 0;
}

KEVENT_EXPORT void kevent_bufs_exit(struct kevent_bufs *br)
{
	if (br->ring)
		munmap(br->ring, kevent_bufs_bytes(br->entries));
	memset(br, 0, sizeof(*br));
}

/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/* What the library's files share; nothing here is exported. */
#ifndef LIBKEVENT_INTERNAL_H
#define LIBKEVENT_INTERNAL_H

#include <sys/syscall.h>
#include "kevent/kevent.h"

/*
 * The numbers come from the kernel's UAPI headers. x86_64's are known
 * here too, for a C library whose headers predate them; on other
 * architectures the headers must have them.
 */
#if defined(__x86_64__) && !defined(__ILP32__) && !defined(__NR_kevent_init)
# define __NR_kevent_init		500
# define __NR_kevent_ctl		501
# define __NR_kevent_get_events		502
# define __NR_kevent_wait		503
# define __NR_kevent_submit		504
#endif
#ifndef __NR_kevent_submit
# error "no kevent system call numbers: build against the UAPI headers of a kernel with kevent"
#endif

/* kevent_probe()'s answer, asked once: 0 or -ENOSYS. */
int kevent__available(void);
int kevent__probe_file(const char *path);
void kevent__probe_set(int state);

/* A ring's size, as the kernel takes it: a power of two, 1 to @max. */
static inline int kevent__ring_size_ok(unsigned int entries, unsigned int max)
{
	return entries && entries <= max && !(entries & (entries - 1));
}

#define KEVENT_EXPORT __attribute__((visibility("default")))

#endif /* LIBKEVENT_INTERNAL_H */

// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * The system calls, returning a negative errno rather than setting errno,
 * and never made on a kernel without kevent (kevent_probe()).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static int kevent_syscall_ret(long ret)
{
	return ret < 0 ? -errno : (int)ret;
}

#define KEVENT_SYSCALL(nr, ...)						\
	({								\
		int __avail = kevent__available();			\
									\
		__avail ? __avail :					\
			  kevent_syscall_ret(syscall(nr, __VA_ARGS__));	\
	})

KEVENT_EXPORT int kevent_init(unsigned int ring_entries, unsigned int flags)
{
	return KEVENT_SYSCALL(__NR_kevent_init, ring_entries, flags);
}

KEVENT_EXPORT int kevent_ctl(int fd, unsigned int cmd, unsigned int num,
			     struct ukevent *arg, unsigned int flags)
{
	return KEVENT_SYSCALL(__NR_kevent_ctl, fd, cmd, num, arg, flags);
}

KEVENT_EXPORT int kevent_get_events(int fd, unsigned int min_nr,
				    unsigned int max_nr, struct ukevent *buf,
				    const struct kevent_wait_args *args)
{
	return KEVENT_SYSCALL(__NR_kevent_get_events, fd, min_nr, max_nr, buf,
			      args, args ? sizeof(*args) : 0);
}

KEVENT_EXPORT int kevent_wait(int fd, unsigned int min_nr,
			      const struct kevent_wait_args *args)
{
	return KEVENT_SYSCALL(__NR_kevent_wait, fd, min_nr, args,
			      args ? sizeof(*args) : 0);
}

KEVENT_EXPORT int kevent_submit(int fd, struct kevent_submit *s)
{
	return KEVENT_SYSCALL(__NR_kevent_submit, fd, s, sizeof(*s));
}

KEVENT_EXPORT void kevent_wait_args_set(struct kevent_wait_args *wa,
					const struct __kernel_timespec *timeout,
					const void *sigmask)
{
	memset(wa, 0, sizeof(*wa));
	if (timeout) {
		wa->timeout = *timeout;
		wa->flags = KEVENT_WAIT_TIMEOUT;
	}
	if (sigmask) {
		wa->sigmask = (uint64_t)(uintptr_t)sigmask;
		wa->sigsetsize = KEVENT_SIGSET_SIZE;
	}
}

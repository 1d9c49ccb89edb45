// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * Is kevent here? Asked of /proc, never of the system call numbers: on a
 * kernel without kevent they are free, or (on later kernels than the
 * series') another system call's, which calling "to see" would run.
 */
#include <errno.h>
#include <unistd.h>

#include "internal.h"

/* The per-user limit of kevents, a sysctl that exists only with kevent. */
#define KEVENT_PROBE_FILE	"/proc/sys/user/max_kevents"

/* 0 not asked yet, 1 here, -ENOSYS not here. */
static int kevent_probed;

int kevent__available(void)
{
	int state = __atomic_load_n(&kevent_probed, __ATOMIC_RELAXED);

	if (state == 0) {
		/*
		 * Only a missing file is an answer: another error (no
		 * descriptor left, say) may not be, so it is asked again.
		 */
		if (access(KEVENT_PROBE_FILE, F_OK) == 0)
			state = 1;
		else if (errno == ENOENT || errno == ENOTDIR)
			state = -ENOSYS;
		else
			return -errno;
		__atomic_store_n(&kevent_probed, state, __ATOMIC_RELAXED);
	}
	return state == 1 ? 0 : state;
}

KEVENT_EXPORT int kevent_probe(void)
{
	return kevent__available();
}

KEVENT_EXPORT int kevent_version_major(void)
{
	return LIBKEVENT_VERSION_MAJOR;
}

KEVENT_EXPORT int kevent_version_minor(void)
{
	return LIBKEVENT_VERSION_MINOR;
}

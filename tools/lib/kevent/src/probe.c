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

/*
 * What @path says: 0 if it exists, -ENOSYS if it does not. Only a
 * missing file is an answer: another error (no memory, say) may not be,
 * and is returned to be asked again. Not static: the tests ask it of
 * other paths.
 */
int kevent__probe_file(const char *path)
{
	if (access(path, F_OK) == 0)
		return 0;
	if (errno == ENOENT || errno == ENOTDIR)
		return -ENOSYS;
	return -errno;
}

/* For the tests: take @state (1 here, -ENOSYS not) as the answer. */
void kevent__probe_set(int state)
{
	__atomic_store_n(&kevent_probed, state, __ATOMIC_RELAXED);
}

int kevent__available(void)
{
	int state = __atomic_load_n(&kevent_probed, __ATOMIC_RELAXED);

	if (state == 0) {
		state = kevent__probe_file(KEVENT_PROBE_FILE);
		if (state && state != -ENOSYS)
			return state;
		state = state ?: 1;
		kevent__probe_set(state);
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

// SPDX-License-Identifier: GPL-2.0
/*
 * server-stat: what nginx's workers have spent so far, for the benchmark
 * of tools/nginx.sh --bench, which takes it before and after a wrk run and
 * keeps the difference. One line:
 *
 *   workers N server_ns N user_ticks U sys_ticks K dispatches D waits W
 *   ... io I syscalls Y
 *
 * server_ns: the CPU time of the master's children (the workers), each
 * read from its process CPU clock (under QEMU's -icount, 2^shift ns an
 * instruction); user_ticks, sys_ticks: how the kernel split it (from
 * /proc/PID/stat, sampled: a share, not a count); then the counters that
 * tools/libevent/ctlcount.c keeps in the shared file FILE (nginx runs
 * under it with $KEVENT_CTLCOUNT_INHERIT, so the workers count into it)
 * and the system calls among them.
 *
 *   server-stat MASTER_PID FILE
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../libevent/ctlcount.h"
#include "../libevent/procstat.h"

static void die(const char *what, const char *why)
{
	fprintf(stderr, "server-stat: %s: %s\n", what, why);
	exit(1);
}

int main(int argc, char **argv)
{
	static const char *const names[CC_NR] = CTLCOUNT_NAMES;
	unsigned long long ns = 0, user = 0, sys = 0, u, s;
	unsigned long cc[CC_NR];
	struct dirent *d;
	struct timespec ts;
	int master, ppid, workers = 0, i, fd;
	clockid_t clock;
	DIR *dir;

	if (argc != 3)
		die("usage", "server-stat MASTER_PID FILE");
	master = atoi(argv[1]);
	dir = opendir("/proc");
	if (!dir)
		die("/proc", strerror(errno));
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9' ||
		    proc_stat_read(atoi(d->d_name), &ppid, &u, &s) ||
		    ppid != master)
			continue;
		if (clock_getcpuclockid(atoi(d->d_name), &clock) ||
		    clock_gettime(clock, &ts))
			die("a worker's CPU clock", strerror(errno));
		ns += ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		user += u;
		sys += s;
		workers++;
	}
	closedir(dir);
	if (!workers)
		die(argv[1], "no worker");

	fd = open(argv[2], O_RDONLY);
	if (fd < 0 || read(fd, cc, sizeof(cc)) != sizeof(cc))
		die(argv[2], "cannot read the counters");
	close(fd);

	printf("workers %d server_ns %llu user_ticks %llu sys_ticks %llu",
	       workers, ns, user, sys);
	for (i = 0; i < CC_NR; i++)
		printf(" %s %lu", names[i], cc[i]);
	printf(" syscalls %lu\n", ctlcount_syscalls(cc));
	return 0;
}

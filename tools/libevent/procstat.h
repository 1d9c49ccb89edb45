/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's parent and CPU time from /proc/PID/stat, for the programs
 * that measure a server (memcached-load.c, tools/nginx/server-stat.c):
 * utime and stime are in clock ticks, sampled, so a share of the CPU
 * time, not a count.
 */
#ifndef PROCSTAT_H
#define PROCSTAT_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 0 with *ppid, *user and *sys filled; -1 if PID is gone or unreadable. */
static inline int proc_stat_read(int pid, int *ppid, unsigned long long *user,
				 unsigned long long *sys)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* After "(comm) ": state is field 3, ppid 4, utime 14, stime 15. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 ppid, user, sys) != 3)
		return -1;
	return 0;
}

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel side of a back end, through ftrace's function profiler: for
 * a chosen set of kernel functions, how often each ran per reported event
 * and how long it took, children included. It needs a kernel with
 * CONFIG_FUNCTION_PROFILER and CONFIG_FUNCTION_GRAPH_TRACER; tracefs is
 * mounted here if /init did not.
 *
 * Only the functions in the filter are traced, so that the other paths
 * run at full speed; what the filter leaves out shows in the callers'
 * times. Under TCG the times are inflated like everything else: compare
 * rows of one run, not runs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

#define TRACEFS		"/sys/kernel/tracing"
#define MAX_FUNCS	512

struct func {
	char name[96];
	unsigned long long hits;
	double us;		/* total time, children included */
};

/*
 * Write @s to tracefs file @file, opened with @flags (O_TRUNC or
 * O_APPEND). Returns 0, -1 if the file cannot be opened, 1 if the write
 * is refused (a filter glob that matches nothing).
 */
static int tracefs_write(const char *file, const char *s, int flags)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	fd = open(path, O_WRONLY | flags | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = 1;
	close(fd);
	return ret;
}

int profile_open(const char *filter)
{
	char buf[4096], *word, *save;

	if (access(TRACEFS "/function_profile_enabled", F_OK)) {
		mkdir(TRACEFS, 0755);
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	}
	if (access(TRACEFS "/function_profile_enabled", F_OK)) {
		printf("  profile: no function profiler in this kernel (CONFIG_FUNCTION_PROFILER)\n");
		return -1;
	}
	/* One glob per write: a glob that matches nothing must not void the rest. */
	tracefs_write("set_ftrace_filter", "", O_TRUNC);
	snprintf(buf, sizeof(buf), "%s", filter);
	for (word = strtok_r(buf, " ", &save); word;
	     word = strtok_r(NULL, " ", &save)) {
		int ret = tracefs_write("set_ftrace_filter", word, O_APPEND);

		if (ret < 0)
			return -1;
		if (ret)
			printf("  profile: no function matches %s\n", word);
	}
	return 0;
}

void profile_start(void)
{
	/* Enabling resets the counts. */
	tracefs_write("function_profile_enabled", "0", O_TRUNC);
	tracefs_write("function_profile_enabled", "1", O_TRUNC);
}

/* Add one CPU's trace_stat/functionN to @f. */
static int profile_read_cpu(const char *path, struct func *f, int n)
{
	char line[512], name[96], unit[8];
	unsigned long long hits;
	double t;
	FILE *fp = fopen(path, "re");
	int i;

	if (!fp)
		return n;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, " %95s %llu %lf %7s", name, &hits, &t, unit) != 4 ||
		    strcmp(unit, "us"))
			continue;	/* the header lines */
		for (i = 0; i < n && strcmp(f[i].name, name); i++)
			;
		if (i == n) {
			if (n == MAX_FUNCS)
				continue;
			snprintf(f[n++].name, sizeof(f[0].name), "%s", name);
		}
		f[i].hits += hits;
		f[i].us += t;
	}
	fclose(fp);
	return n;
}

static int by_time(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->us < y->us ? 1 : x->us > y->us ? -1 : 0;
}

void profile_stop_print(const char *label, unsigned long long events,
			double ns, int top)
{
	profile_stop_print_cpu(label, events, ns, top, -1);
}

void profile_stop_print_cpu(const char *label, unsigned long long events,
			    double ns, int top, int cpu)
{
	char only[32];
	unsigned long long calls = 0;
	static struct func f[MAX_FUNCS];
	char path[300];
	struct dirent *de;
	DIR *d;
	int i, n = 0;

	tracefs_write("function_profile_enabled", "0", O_TRUNC);
	memset(f, 0, sizeof(f));
	d = opendir(TRACEFS "/trace_stat");
	if (!d)
		return;
	snprintf(only, sizeof(only), "function%d", cpu);
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "function", 8) &&
		    (cpu < 0 || !strcmp(de->d_name, only))) {
			snprintf(path, sizeof(path), TRACEFS "/trace_stat/%s",
				 de->d_name);
			n = profile_read_cpu(path, f, n);
		}
	closedir(d);
	qsort(f, n, sizeof(f[0]), by_time);
	for (i = 0; i < n; i++)
		calls += f[i].hits;
	if (!events)
		events = 1;

	printf("  %s: %llu events, %.0f ns per event with the tracer, %.2f traced calls per event\n",
	       label, events, ns, (double)calls / events);
	printf("    %-36s %10s %12s\n", "function (children included)",
	       "calls/ev", "ns/ev");
	for (i = 0; i < n && i < top; i++)
		printf("    %-36s %10.3f %12.0f\n", f[i].name,
		       (double)f[i].hits / events, f[i].us * 1000 / events);
}

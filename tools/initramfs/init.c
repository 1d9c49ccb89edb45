// SPDX-License-Identifier: GPL-2.0
/*
 * /init of the test initramfs that tools/selftests.sh boots in QEMU.
 *
 * Runs every program in /tests in name order, then those of /tests32
 * (the kselftests again, built as i386 programs; their names end in
 * " (32-bit)"), each in its own process group with a time limit, and
 * copies its output to the console prefixed with "# ", nested under a
 * KTAP line per program as run_kselftest.sh does. It counts the results
 * of each program (the harness's "# Totals:" line, else its "ok"/"not ok"
 * lines, else the exit status) and ends with "kselftest: N passed, N
 * failed" for both directories together, which the host reads.
 *
 * With "--demo" on its command line (after "--" on the kernel's), it runs
 * /bin/kevent-demo on the console instead and reports its exit status.
 *
 * Either way it powers the machine off: QEMU runs with -no-reboot, so a
 * reboot ends it. Kernel command line settings reach init as environment
 * variables: ksft_timeout=SECONDS limits each program (default 300);
 * ksft_soak=SECONDS runs the whole set again and again until that long has
 * passed (tools/reliability.sh soak); ksft_repeat=N runs it N times
 * (tools/kernel-selftests.sh --compare); ksft_args=ARG,ARG... gives every
 * program those arguments (a command line value cannot hold a space):
 * "-t,epoll58" runs one case of a harness program; gcov_dump=PATH prints,
 * after the tests, every gcov data file under /sys/kernel/debug/gcov whose
 * path contains PATH, in base64 (tools/reliability.sh gcov).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/loop.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TEST_DIR "/tests"
#define TEST32_DIR "/tests32"
#define DEMO "/bin/kevent-demo"
#define KMEMLEAK "/sys/kernel/debug/kmemleak"
#define EXT4_IMAGE "/ext4.img"
#define EXT4_DIR "/mnt/ext4"

struct counts {
	int pass, fail, skip;
};

static void mount_fs(const char *type, const char *dir)
{
	mkdir(dir, 0755);
	if (mount(type, dir, type, 0, NULL) && errno != EBUSY)
		printf("# init: mount %s on %s: %m\n", type, dir);
}

/*
 * An ext4 file system for the inode tests, besides /tmp's tmpfs: the
 * initramfs carries an image made by mkfs.ext4 (tools/initramfs.sh), which
 * goes on a loop device and is mounted on /mnt/ext4. Without the image,
 * or a kernel without loop devices or ext4, the ext4 tests skip.
 */
static void mount_ext4(void)
{
	char dev[32];
	int ctl, loop, img, n;

	img = open(EXT4_IMAGE, O_RDWR | O_CLOEXEC);
	if (img < 0)
		return;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	n = ctl < 0 ? -1 : ioctl(ctl, LOOP_CTL_GET_FREE);
	snprintf(dev, sizeof(dev), "/dev/loop%d", n);
	loop = n < 0 ? -1 : open(dev, O_RDWR | O_CLOEXEC);
	if (loop < 0 || ioctl(loop, LOOP_SET_FD, img)) {
		printf("# init: no loop device for %s: %m\n", EXT4_IMAGE);
	} else {
		mkdir("/mnt", 0755);
		mkdir(EXT4_DIR, 01777);
		if (mount(dev, EXT4_DIR, "ext4", 0, NULL))
			printf("# init: mount ext4 on %s: %m\n", EXT4_DIR);
		else
			chmod(EXT4_DIR, 01777);
	}
	if (loop >= 0)
		close(loop);
	if (ctl >= 0)
		close(ctl);
	close(img);
}

/* Tests on 127.0.0.1 need the loopback interface up; nothing else does it. */
static void loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return;
	if (!ioctl(s, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr))
			printf("# init: bringing up lo: %m\n");
	}
	close(s);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads one line of a test's output into the counts. */
static void parse_line(const char *line, struct counts *lines,
		       struct counts *totals, int *have_totals)
{
	int pass, fail, xfail, xpass, skip, error;

	if (sscanf(line, "# Totals: pass:%d fail:%d xfail:%d xpass:%d skip:%d error:%d",
		   &pass, &fail, &xfail, &xpass, &skip, &error) == 6) {
		/* An expected failure is a pass; an unexpected pass is not. */
		totals->pass = pass + xfail;
		totals->fail = fail + xpass + error;
		totals->skip = skip;
		*have_totals = 1;
	} else if (!strncmp(line, "not ok ", 7)) {
		lines->fail++;
	} else if (!strncmp(line, "ok ", 3)) {
		if (strstr(line, "# SKIP"))
			lines->skip++;
		else
			lines->pass++;
	}
}

/* Copies complete lines from buf to the console; returns bytes consumed. */
static size_t drain_lines(char *buf, size_t len, int final, struct counts *lines,
			  struct counts *totals, int *have_totals)
{
	size_t done = 0;

	for (;;) {
		char *nl = memchr(buf + done, '\n', len - done);

		if (!nl) {
			if (!final || done == len)
				return done;
			nl = buf + len;	/* last line without a newline */
		}
		*nl = '\0';
		printf("# %s\n", buf + done);
		parse_line(buf + done, lines, totals, have_totals);
		done = nl - buf + (nl < buf + len);
		if (done >= len)
			return len;
	}
}

#define MAX_ARGS 16

/* argv for @path: ksft_args split at its commas. */
static void program_argv(const char *path, char **argv)
{
	static char args[256];
	const char *env = getenv("ksft_args");
	int n = 0;

	argv[n++] = (char *)path;
	if (env) {
		snprintf(args, sizeof(args), "%s", env);
		for (char *a = strtok(args, ","); a && n < MAX_ARGS;
		     a = strtok(NULL, ","))
			argv[n++] = a;
	}
	argv[n] = NULL;
}

/*
 * Runs one program with its output on a pipe. Returns its wait status, or
 * -1 when it had to be killed at the time limit.
 */
static int run_captured(const char *path, int timeout, struct counts *lines,
			struct counts *totals, int *have_totals)
{
	/* One spare byte: drain_lines() ends the last line with a NUL. */
	static char buf[65536 + 1];
	const size_t size = sizeof(buf) - 1;
	size_t len = 0;
	double deadline = now() + timeout;
	int fds[2], status = 0, exited = 0, timed_out = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		char *argv[MAX_ARGS + 1];

		/* Own group, so a timeout kills the test and its children. */
		setpgid(0, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		program_argv(path, argv);
		execv(path, argv);
		dprintf(2, "exec %s: %m\n", path);
		_exit(127);
	}
	setpgid(pid, pid);
	close(fds[1]);

	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		ssize_t n;

		if (!exited && waitpid(pid, &status, WNOHANG) == pid)
			exited = 1;
		if (!timed_out && now() > deadline) {
			kill(-pid, SIGKILL);
			timed_out = 1;
		}
		/* Once the test is gone, read what is left and stop, even if
		 * a straggler it left behind still holds the pipe open. */
		if (poll(&pfd, 1, exited ? 0 : 1000) <= 0) {
			if (exited)
				break;
			continue;
		}
		n = read(fds[0], buf + len, size - len);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		len += n;
		n = drain_lines(buf, len, len == size, lines, totals, have_totals);
		memmove(buf, buf + n, len - n);
		len -= n;
	}
	drain_lines(buf, len, 1, lines, totals, have_totals);
	close(fds[0]);
	/* The output can end before the test does (it closed stdout). */
	while (!exited && !timed_out) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			exited = 1;
		else if (now() > deadline)
			timed_out = 1;
		else
			usleep(100000);
	}
	/* Whatever the test left running goes with it. */
	kill(-pid, SIGKILL);
	if (!exited)
		waitpid(pid, &status, 0);
	return timed_out ? -1 : status;
}

/* The directories of test programs, and what their programs' names get. */
static const struct test_dir {
	const char *dir;
	const char *suffix;
	int optional;		/* the benchmark's initramfs has no /tests32 */
} test_dirs[] = {
	{ TEST_DIR, "", 0 },
	{ TEST32_DIR, " (32-bit)", 1 },
};
#define NR_TEST_DIRS (sizeof(test_dirs) / sizeof(test_dirs[0]))

static const char *scan_dir;	/* is_program()'s directory */

static int is_program(const struct dirent *d)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", scan_dir, d->d_name);
	return !stat(path, &st) && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

/*
 * Runs program @name of @dir, the @num-th of the run, and adds its results
 * to @all. Its KTAP lines call it @name@suffix.
 */
static void run_one(const char *dir, const char *name, const char *suffix,
		    int num, int timeout, struct counts *all)
{
	struct counts lines = { 0 }, totals = { 0 }, *c;
	int have_totals = 0, status, code;
	char path[PATH_MAX];
	const char *why = "";

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	printf("# selftests: kevent: %s%s\n", name, suffix);
	fflush(stdout);
	status = run_captured(path, timeout, &lines, &totals, &have_totals);
	c = have_totals ? &totals : &lines;
	code = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;

	if (c->pass + c->fail + c->skip == 0) {
		/* Not a harness program: its exit status is the result. */
		if (code == 0)
			c->pass = 1;
		else if (code == 4)	/* KSFT_SKIP */
			c->skip = 1;
		else
			c->fail = 1;
	} else if (code != 0 && code != 4 && c->fail == 0) {
		/* Died after its last result line, or lied about it. */
		c->fail = 1;
	}
	if (status < 0)
		why = " # TIMEOUT";
	else if (WIFSIGNALED(status))
		why = " # killed by a signal";
	all->pass += c->pass;
	all->fail += c->fail;
	all->skip += c->skip;
	printf("%sok %d selftests: kevent: %s%s%s\n",
	       c->fail ? "not " : "", num, name, suffix, why);
	fflush(stdout);
}

/* Every program of every test directory, under one KTAP plan. */
static struct counts run_tests(int timeout)
{
	struct counts all = { 0 };
	struct dirent **names[NR_TEST_DIRS];
	int nr[NR_TEST_DIRS], total = 0, num = 0;

	for (size_t d = 0; d < NR_TEST_DIRS; d++) {
		scan_dir = test_dirs[d].dir;
		nr[d] = scandir(scan_dir, &names[d], is_program, alphasort);
		if (nr[d] < 0 && !(test_dirs[d].optional && errno == ENOENT))
			printf("# init: no %s: %m\n", scan_dir);
		total += nr[d] < 0 ? 0 : nr[d];
	}
	printf("TAP version 13\n1..%d\n", total);
	for (size_t d = 0; d < NR_TEST_DIRS; d++) {
		for (int i = 0; i < nr[d]; i++) {
			run_one(test_dirs[d].dir, names[d][i]->d_name,
				test_dirs[d].suffix, ++num, timeout, &all);
			free(names[d][i]);
		}
		if (nr[d] >= 0)
			free(names[d]);
	}
	return all;
}

/* The demo talks to the console itself; only its exit status is ours. */
static int run_demo(char **argv, int timeout)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		setpgid(0, 0);
		argv[0] = DEMO;
		execv(DEMO, argv);
		printf("demo: exec %s: %m\n", DEMO);
		_exit(127);
	}
	for (int waited = 0; waitpid(pid, &status, WNOHANG) != pid; waited++) {
		if (waited >= timeout) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			printf("demo: timed out after %d s\n", timeout);
			return 1;
		}
		sleep(1);
	}
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(status)) {
		printf("demo: killed by signal %d\n", WTERMSIG(status));
		return 1;
	}
	printf("demo: exit status %d\n", WEXITSTATUS(status));
	return WEXITSTATUS(status);
}

/*
 * A kernel with kmemleak: look for objects the tests leaked. Objects must be
 * some seconds old to count, hence the wait. Any find is also printed by
 * the kernel ("kmemleak: N new suspected memory leaks"), which fails the run.
 */
static void check_leaks(void)
{
	char buf[4096];
	ssize_t n;
	int fd = open(KMEMLEAK, O_RDWR);

	if (fd < 0)
		return;
	printf("# init: kmemleak scan\n");
	fflush(stdout);
	sleep(6);
	for (int i = 0; i < 2; i++)
		if (write(fd, "scan", 4) < 0)
			printf("# init: kmemleak scan: %m\n");
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, n, stdout);
	close(fd);
}

/*
 * Print @path's contents as "gcov-data: PATH SIZE", base64 lines and
 * "gcov-end": the console is the only way out of the guest.
 */
static void dump_base64(const char *path)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char in[57];	/* 76 characters a line */
	char out[80];
	size_t total = 0, n;
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("# init: %s: %m\n", path);
		return;
	}
	printf("gcov-data: %s\n", path);
	while ((n = fread(in, 1, sizeof(in), f)) > 0) {
		size_t o = 0;

		for (size_t i = 0; i < n; i += 3) {
			unsigned int v = in[i] << 16;

			v |= (i + 1 < n ? in[i + 1] : 0) << 8;
			v |= i + 2 < n ? in[i + 2] : 0;
			out[o++] = b64[v >> 18];
			out[o++] = b64[(v >> 12) & 63];
			out[o++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
			out[o++] = i + 2 < n ? b64[v & 63] : '=';
		}
		out[o] = 0;
		printf("%s\n", out);
		total += n;
	}
	fclose(f);
	printf("gcov-end: %zu bytes\n", total);
}

static const char *gcov_match;

static int dump_gcov_file(const char *path, const struct stat *st, int type,
			  struct FTW *ftw)
{
	size_t len = strlen(path);

	(void)st;
	(void)ftw;
	if (type == FTW_F && len > 5 && !strcmp(path + len - 5, ".gcda") &&
	    strstr(path, gcov_match))
		dump_base64(path);
	return 0;
}

int main(int argc, char **argv)
{
	const char *t = getenv("ksft_timeout");
	const char *soak = getenv("ksft_soak");
	const char *repeat = getenv("ksft_repeat");
	int rounds = repeat ? atoi(repeat) : 1;
	int timeout = t ? atoi(t) : 300;
	int demo = argc > 1 && !strcmp(argv[1], "--demo");

	setvbuf(stdout, NULL, _IOLBF, 0);
	mount_fs("proc", "/proc");
	mount_fs("sysfs", "/sys");
	mount_fs("devtmpfs", "/dev");
	mount_fs("tmpfs", "/tmp");
	mount_fs("debugfs", "/sys/kernel/debug");
	mount_ext4();
	loopback_up();
	setenv("PATH", "/tests:/bin", 1);
	setenv("HOME", "/tmp", 1);
	setenv("TMPDIR", "/tmp", 1);
	if (chdir("/tmp"))
		printf("# init: chdir /tmp: %m\n");

	if (demo) {
		run_demo(argv + 1, timeout);
	} else {
		double end = now() + (soak ? atof(soak) : 0);
		struct counts c = run_tests(timeout);

		for (int round = 2; round <= rounds || (soak && now() < end);
		     round++) {
			struct counts r;

			if (soak)
				printf("# init: soak round %d, %.0f s left\n",
				       round, end - now());
			else
				printf("# init: round %d of %d\n", round, rounds);
			r = run_tests(timeout);
			c.pass += r.pass;
			c.fail += r.fail;
			c.skip += r.skip;
		}
		check_leaks();
		gcov_match = getenv("gcov_dump");
		if (gcov_match)
			nftw("/sys/kernel/debug/gcov", dump_gcov_file, 16,
			     FTW_PHYS);
		if (c.skip)
			printf("kselftest: %d skipped\n", c.skip);
		printf("kselftest: %d passed, %d failed\n", c.pass, c.fail);
	}
	fflush(stdout);
	sync();
	reboot(RB_AUTOBOOT);
	return 1;	/* the kernel panics when init exits; panic=-1 ends QEMU */
}

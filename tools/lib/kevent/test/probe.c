// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT
/*
 * The probe: decided from a file, and where it says no, no system call is
 * made. A seccomp filter makes kevent's system call numbers fail with
 * EOPNOTSUPP, so a call that was made shows as -EOPNOTSUPP and a call
 * that was not as -ENOSYS. Runs in the guest (kevent here; its absence
 * is then what the probe is told) and on the build machine (no kevent).
 */
#include <errno.h>
#include <stddef.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <kevent/kevent.h>
#include "ktest.h"

/* The library's internals, reached by linking it statically. */
int kevent__probe_file(const char *path);
void kevent__probe_set(int state);

/* kevent's five system calls fail with EOPNOTSUPP, all else runs. */
static int refuse_kevent_calls(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __NR_kevent_init, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, __NR_kevent_submit, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EOPNOTSUPP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(filter) / sizeof(filter[0]),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -errno : 0;
}

int main(void)
{
	struct kevent_change change;
	struct kevent_submit s = { 0 };
	struct kevent_queue q;
	struct kevent_batch b;
	struct ukevent uk;
	int missing, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(kevent__probe_file("/no/such/file") == -ENOSYS,
	      "a missing file: -ENOSYS");
	CHECK(kevent__probe_file("/proc/self/exe/x") == -ENOSYS,
	      "a path through a file: -ENOSYS");
	CHECK(kevent__probe_file("/") == 0, "a file that is there: 0");
	missing = kevent__probe_file("/proc/sys/user/max_kevents");
	CHECK(kevent_probe() == missing, "kevent_probe() says what /proc says");
	printf("# kevent is %shere\n", missing ? "not " : "");

	REQUIRE(refuse_kevent_calls() == 0, "a seccomp filter on kevent's calls");
	CHECK(syscall(__NR_kevent_init, 0, 0) == -1 && errno == EOPNOTSUPP,
	      "a call by number meets the filter");
	ret = kevent_init(0, 0);
	CHECK(ret == (missing ? -ENOSYS : -EOPNOTSUPP),
	      "kevent_init: %s (%d)", missing ? "-ENOSYS, no call" : "called",
	      ret);

	/* Told that kevent is not here: nothing reaches the kernel. */
	kevent__probe_set(-ENOSYS);
	kevent_prep_user(&uk, 1, 0, 0);
	kevent_batch_init(&b, &change, 1);
	kevent_prep_user(kevent_batch_add(&b, KEVENT_CTL_ADD), 1, 0, 0);
	q.fd = 3;
	CHECK(kevent_probe() == -ENOSYS, "the probe says no");
	CHECK(kevent_init(0, 0) == -ENOSYS, "kevent_init: -ENOSYS");
	CHECK(kevent_ctl(3, KEVENT_CTL_ADD, 1, &uk, 0) == -ENOSYS,
	      "kevent_ctl: -ENOSYS");
	CHECK(kevent_get_events(3, 0, 1, &uk, NULL) == -ENOSYS,
	      "kevent_get_events: -ENOSYS");
	CHECK(kevent_wait(3, 0, NULL) == -ENOSYS, "kevent_wait: -ENOSYS");
	CHECK(kevent_submit(3, &s) == -ENOSYS, "kevent_submit: -ENOSYS");
	CHECK(kevent_batch_ctl(&q, &b) == -ENOSYS &&
	      kevent_batch_result(&b, 0) == KEVENT_NOT_REACHED,
	      "kevent_batch_ctl: -ENOSYS, its entry not reached");
	CHECK(kevent_batch_submit(&q, &b, 0, NULL) == -ENOSYS,
	      "kevent_batch_submit: -ENOSYS");
	CHECK(kevent_queue_init(&q, 8, 0) == -ENOSYS && q.fd == -1,
	      "kevent_queue_init: -ENOSYS");
	CHECK(kevent_ring_map(&q, 3, 8) == -ENOSYS && !q.ring,
	      "kevent_ring_map: -ENOSYS, nothing mapped");
	return ktest_done();
}

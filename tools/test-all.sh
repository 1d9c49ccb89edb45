#!/bin/bash
# Run every test, as CI does: install what is missing, make the tree from
# kevent.mbox, build the test kernel and run KUnit in it, then the
# userspace tests (libkevent's among them, and its checks on this
# machine), then libevent's regression suite on its kevent backend
# in the same kernel (libevent.sh), then nginx on its kevent event module
# (nginx.sh), then check each patch on its own
# (check-patches.sh) and link it in other configurations
# (check-configs.sh). The last line is "N passed, N failed", the sum of
# them all (a clean patch, a linked kernel count as passed); the status
# is non-zero if anything failed, including a step that crashed before
# counting.
#
#   tools/test-all.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tools=$(dirname "$0")

rm -rf "$RESULTS"
if ! "$ROOT/ci/install-packages.sh" --if-missing || ! "$tools/tree.sh"; then
	echo "0 passed, 1 failed"
	exit 1
fi

# The userspace tests run even when KUnit failed: both reports help.
status=0
"$tools/kunit.sh" || status=1
"$tools/selftests.sh" || status=1
# The kernel's own epoll, eventfd, close_range, SCM_RIGHTS and SCM_PIDFD
# selftests on the same kernel: the series changes eventpoll, __fput()
# and scm.c.
"$tools/kernel-selftests.sh" || status=1
# libkevent on this machine: installed, its shared library's soname and
# exports, programs built with pkg-config, the probe without kevent (its
# tests in the guest ran with the kselftests).
"$tools/libkevent-check.sh" || status=1
# The man pages: lint, coverage, ERRORS against tools/man/errnos.
"$tools/man-check.sh" || status=1
# A real event library on kevent: libevent's regress suite on its kevent
# backend with its posted ring and without (kevent-plain), and on epoll,
# in one boot, each with its system calls a dispatch counted
# (tools/libevent/ctlcount.c; about 13 minutes on a 2-core host: 4.5 to
# build libevent, about 3 a backend); poll and the small ring
# (kevent-ring4) are left to tools/libevent.sh by hand.
BACKENDS="kevent-count kevent-plain-count epoll-count" "$tools/libevent.sh" || status=1
# A real server on kevent: nginx's kevent event module with its ring and
# without, its fallbacks to epoll (no kevent) and to no ring (no locked
# memory), and epoll, serving files to tools/nginx/http-check.c, which
# checks every response, in one boot.
"$tools/nginx.sh" || status=1
# Each patch on its own: W=1 builds of what it touches, checkpatch.
"$tools/check-patches.sh" || status=1
# The whole series linked without networking, signalfd and SMP, and as a
# 32-bit kernel: what object builds of one configuration cannot see.
"$tools/check-configs.sh" || status=1

passed=0 failed=0
for name in kunit kselftest own libkevent man libevent nginx patches configs; do
	p=0 f=1
	if [ -f "$RESULTS/$name" ]; then
		read -r p f <"$RESULTS/$name"
	else
		echo "$name: no result" >&2
	fi
	passed=$((passed + p)) failed=$((failed + f))
done
# A script that failed must show as a failure even if it counted none.
[ $status = 0 ] || [ $failed -gt 0 ] || failed=1

echo "test-all: $((SECONDS / 60)) min $((SECONDS % 60)) s" >&2
echo "$passed passed, $failed failed"
[ $failed = 0 ]

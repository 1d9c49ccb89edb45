#!/bin/bash
# Boot the test kernel in QEMU (TCG, never KVM) with the initramfs of
# tools/initramfs.sh and run the kevent kselftests in it.
#
#   tools/selftests.sh          run the tests; log in $BUILD/selftests.log
#   tools/selftests.sh --demo   run tools/examples/kevent-demo instead;
#                               log in $BUILD/demo.log
#
# The tests fail when a test fails, when the guest's "kselftest: N passed,
# N failed" line is missing (a crash or a hang), or when the kernel printed
# a splat (lockdep, KASAN, WARN, oops...), even if every test passed.
#
# Time limits: KSFT_TIMEOUT seconds per test program (default 300), and
# BOOT_TIMEOUT seconds for the whole boot (default 1800). KSFT_CMDLINE:
# more kernel command line words (tools/reliability.sh: KUnit at boot,
# init's ksft_soak= and gcov_dump=).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mode=tests
case ${1:-} in
--demo) mode=demo ;;
"") ;;
*) die "usage: $0 [--demo]" ;;
esac
log=$BUILD/selftests.log
[ $mode = demo ] && log=$BUILD/demo.log
ksft_timeout=${KSFT_TIMEOUT:-300}
boot_timeout=${BOOT_TIMEOUT:-1800}

[ $mode = tests ] && rm -f "$RESULTS/kselftest"

# The kernel kunit.sh built, brought up to date (a no-op right after
# kunit.sh; a real rebuild after an edit in the tree).
log "building the test kernel in $KDIR"
kunit_py build >&2
"$(dirname "$0")/initramfs.sh"
if [ $mode = demo ] && [ ! -x "$BUILD/ksft/bin/kevent-demo" ]; then
	die "no demo program: tools/examples/kevent-demo.c is missing"
fi

# kunit.enable=0: the KUnit suites built into this kernel ran in kunit.sh.
# panic=-1 with -no-reboot: a panic ends QEMU instead of hanging it.
# Words after "--" are /init's arguments; ksft_timeout=... is its env.
cmdline="console=ttyS0 kunit.enable=0 panic=-1 ksft_timeout=$ksft_timeout"
cmdline+=${KSFT_CMDLINE:+ $KSFT_CMDLINE}
[ $mode = demo ] && cmdline+=" -- --demo"

log "booting $BZIMAGE (console log: $log)"
# A crash or a timeout shows as a missing summary line below.
qemu_boot "$BZIMAGE" "$BUILD/initramfs.cpio" "$cmdline" "$log" "$boot_timeout" || true

splat=0
if splats=$(find_splats "$log"); then
	splat=1
	printf 'kernel splat in %s:\n%s\n' "$log" "$splats" >&2
fi

if [ $mode = demo ]; then
	status=$(grep -aoE 'demo: exit status [0-9]+' "$log" | tail -n 1 | grep -oE '[0-9]+$' || true)
	if [ -n "$status" ]; then
		echo "demo: exit status $status"
	else
		echo "demo: did not finish"
	fi
	[ "$status" = 0 ] && [ $splat = 0 ] && exit 0
	exit 1
fi

summary=$(grep -aoE 'kselftest: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 || true)
if [ -z "$summary" ]; then
	echo "kselftest: no summary line from the guest (crash or timeout)" >&2
	passed=0 failed=1
else
	read -r passed failed < <(echo "$summary" | grep -oE '[0-9]+' | xargs)
fi
if [ $passed = 0 ] && [ $failed = 0 ] && [ -d "$TREE/tools/testing/selftests/kevent" ]; then
	echo "kselftest: no test ran" >&2
	failed=1
fi
failed=$((failed + splat))
[ "$failed" = 0 ] || failed_cases "$log" >&2
report kselftest "$passed" "$failed"
[ "$failed" = 0 ]

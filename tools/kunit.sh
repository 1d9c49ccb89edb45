#!/bin/bash
# Build the test kernel from .kunitconfig and run its KUnit suites in QEMU
# (x86_64, TCG: never KVM, so results don't depend on the host).
#
#   tools/kunit.sh [FILTER_GLOB]     e.g. tools/kunit.sh 'kevent*'
#
# Fails on any failed, crashed or missing test, on no test at all, on the
# kevent suites being absent, and on a kernel splat in the console log.
# Logs: $BUILD/kunit.log (kunit.py's report), $BUILD/kunit.json,
# $BUILD/kunit/test.log (the raw console).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

filter=${1:-}
# Under TCG a KASAN+lockdep kernel boots in about a minute; leave room for
# slow suites and a loaded host.
timeout=${KUNIT_TIMEOUT:-900}
out=$BUILD/kunit.log
json=$BUILD/kunit.json

mkdir -p "$BUILD"
rm -f "$json" "$RESULTS/kunit" "$KDIR/test.log"

# panic=-1: a crashing test reboots, which ends QEMU at once (kunit.py
# passes -no-reboot) instead of waiting out the timeout. The CPUs of
# qemu_boot() let lockdep and the tests see real concurrency.
rc=0
kunit_py run --timeout="$timeout" --json="$json" \
	--kernel_args=panic=-1 --qemu_args="-smp $QEMU_CPUS" \
	${filter:+"$filter"} 2>&1 | tee "$out" || rc=$?

# kunit.py's last word: "Testing complete. Ran 7 tests: passed: 6, skipped: 1"
# (zero counts are left out). Parse errors such as a missing result line are
# only "errors" there and don't change kunit.py's exit status, so they are
# counted as failures here.
summary=$(grep -a 'Testing complete\. Ran' "$out" | tail -n 1 || true)
count() { echo "$summary" | grep -oE "$1: [0-9]+" | grep -oE '[0-9]+' || echo 0; }
passed=$(count passed)
failed=$(($(count failed) + $(count crashed) + $(count errors)))

if [ -z "$summary" ]; then
	echo "kunit: no test results (config, build or boot failed)" >&2
	failed=$((failed + 1))
elif [ $rc != 0 ] && [ $failed = 0 ]; then
	echo "kunit: kunit.py failed (status $rc)" >&2
	failed=1
fi

# A suite that silently dropped out (a Kconfig typo, a registration bug)
# would otherwise go unnoticed: the other suites still pass.
if [ -z "$filter" ] && grep -q '^CONFIG_KEVENT_KUNIT_TEST=y' "$KUNITCONFIG" &&
   ! grep -q '"name": "kevent' "$json" 2>/dev/null; then
	echo "kunit: no kevent suite ran" >&2
	failed=$((failed + 1))
fi

# A test can pass while the kernel complains (lockdep, KASAN, a WARN in
# a path the test didn't check).
if [ -f "$KDIR/test.log" ] && find_splats "$KDIR/test.log" >&2; then
	echo "kunit: kernel splat in $KDIR/test.log" >&2
	failed=$((failed + 1))
fi

report kunit "$passed" "$failed"
[ "$failed" = 0 ]

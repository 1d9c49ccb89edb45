#!/bin/bash
# The per-patch check that CI runs: apply the series one patch at a time
# and, for each, build with W=1 the objects the patch touches plus all of
# kernel/kevent/, compile the selftests it touches, and run
# checkpatch.pl --strict on it. Incremental builds of a small kernel
# (kunit/check.config), so it takes minutes, not the hour of a full build
# of every prefix (tools/check-series.sh, run before a submission).
#
#   tools/check-patches.sh [RANGE]      default kevent-base..kevent
#
# Logs in $BUILD/patches/logs; "<clean> <with problems>" in
# $RESULTS/patches for test-all.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_tree
range=${1:-$BASE_TAG..$BRANCH}
dir=$BUILD/patches
src=$dir/src
obj=$dir/obj
logs=$dir/logs
# W=1 and the same make variables every time, so that make rebuilds only
# what a patch changed.
mk=(make -s -C "$src" O="$obj" ARCH=x86_64 W=1 -j"$JOBS")

mapfile -t commits < <(git -C "$TREE" rev-list --reverse "$range")
[ ${#commits[@]} -gt 0 ] || die "no commits in $range"
git -C "$TREE" worktree prune
[ -d "$src" ] || git -C "$TREE" worktree add -q --detach "$src" "${commits[0]}^"
mkdir -p "$obj" "$logs"
rm -f "$logs"/*

# The objects of the .c files a commit touches, kernel/kevent/ always.
objects() {
	git -C "$TREE" diff --name-only "$1^" "$1" -- '*.c' |
		grep -v '^tools/' | sed 's/\.c$/.o/' || true
	[ -d "$src/kernel/kevent" ] && echo kernel/kevent/
}

# The selftests a commit touches, compiled against its UAPI headers.
selftests() {
	git -C "$TREE" diff --name-only --diff-filter=AM "$1^" "$1" -- \
		'tools/testing/selftests/kevent/*.c' || true
}

# warnings_of COMMIT LOG: how many compiler warnings of LOG are in
# kernel/kevent/ or on a line that COMMIT adds. W=1 finds old warnings in
# the kernel files a patch touches (kernel-doc in fs/eventpoll.c): they
# are not the patch's.
warnings_of() {
	git -C "$TREE" diff -U0 "$1^" "$1" | python3 -c '
import re, sys
added, path = set(), None
for line in sys.stdin:
    m = re.match(r"\+\+\+ b/(.*)", line)
    if m:
        path = m.group(1)
    m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
    if m and path:
        start, count = int(m.group(1)), int(m.group(2) or 1)
        added.update((path, n) for n in range(start, start + count))
n = 0
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"([\w./-]+):(\d+):(?:\d+:)? warning:", line)
    if not m:
        continue
    f = re.sub(r"^.*?/src/", "", m.group(1))
    if f.startswith("kernel/kevent/") or (f, int(m.group(2))) in added:
        n += 1
print(n)' "$2"
}

bad=0 n=${#commits[@]} i=0
for c in "${commits[@]}"; do
	i=$((i + 1))
	name=$(printf '%02d' $i)
	log=$logs/$name.build
	git -C "$src" checkout -q --detach "$c"
	cp "$ROOT/kunit/check.config" "$obj/.config"
	result=ok
	mapfile -t objs < <(objects "$c")
	if ! { "${mk[@]}" olddefconfig && "${mk[@]}" prepare &&
	       "${mk[@]}" "${objs[@]}"; } >"$log" 2>&1; then
		result="FAILED (build)"
	else
		w=$(warnings_of "$c" "$log")
		[ "$w" = 0 ] || result="FAILED ($w warnings)"
	fi
	mapfile -t tests < <(selftests "$c")
	if [ ${#tests[@]} -gt 0 ]; then
		"${mk[@]}" headers >>"$log" 2>&1
		for t in "${tests[@]}"; do
			gcc -fsyntax-only -Wall -isystem "$obj/usr/include" \
				-I "$src/tools/testing/selftests" "$src/$t" >>"$log" 2>&1 ||
				result="FAILED (selftest $t)"
		done
	fi

	git -C "$TREE" format-patch -1 --stdout "$c" >"$logs/$name.patch"
	# FILE_PATH_CHANGES: the MAINTAINERS entry of the first patch covers
	# every file the series adds. ENOSYS: the selftests tell a kernel
	# without the system calls by it, which is what it means.
	(cd "$src" && scripts/checkpatch.pl --strict --no-color \
		--ignore FILE_PATH_CHANGES,ENOSYS "$logs/$name.patch") \
		>"$logs/$name.checkpatch" 2>&1 || true
	cp=$(grep -E '^total: ' "$logs/$name.checkpatch" | sed 's/, [0-9]* lines checked//' || true)
	case $cp in
	"total: 0 errors, 0 warnings, 0 checks") ;;
	*) result="$result, checkpatch: ${cp:-did not finish}" ;;
	esac
	printf '[%d/%d] %s: %s\n' "$i" "$n" "$(git -C "$TREE" log -1 --format=%s "$c")" "$result"
	[ "$result" = ok ] || bad=$((bad + 1))
done

report patches $((n - bad)) $bad
[ $bad = 0 ]

#!/bin/bash
# Check each patch of the series on its own, as a reviewer would: for every
# commit of kevent-base..kevent, in order, build the kernel as of that
# commit (x86_64, the .kunitconfig kernel) and run checkpatch.pl --strict on
# the patch. A patch fails on a build error, on a compiler warning in what
# it made recompile, or on any checkpatch message. Slow (one full build,
# then one incremental build per patch), so CI does not run it.
#
#   tools/check-series.sh [RANGE]      default kevent-base..kevent
#
# KEVENT_KUNITCONFIG=build/dev.kunitconfig (any smaller fragment) makes
# the builds faster than the debug test kernel's.
#
# The commits are checked out in a worktree under $BUILD/series, never in
# $TREE, so the branch being worked on is left alone. Logs go to
# $BUILD/series/logs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_tree
range=${1:-$BASE_TAG..$BRANCH}
dir=$BUILD/series
src=$dir/src
obj=$dir/obj
logs=$dir/logs

mapfile -t commits < <(git -C "$TREE" rev-list --reverse "$range")
[ ${#commits[@]} -gt 0 ] || die "no commits in $range"
base=$(git -C "$TREE" rev-parse "${commits[0]}^")

# One worktree kept between runs: git checkout then touches only the files
# that differ, so the builds in $obj stay incremental.
git -C "$TREE" worktree prune
[ -d "$src" ] || git -C "$TREE" worktree add -q --detach "$src" "$base"
mkdir -p "$obj" "$logs"
rm -f "$logs"/*

# build NAME: build what is checked out in $src, log to $logs/NAME.build.
# Symbols the commit does not have yet (CONFIG_KEVENT before the patch that
# adds it) simply drop out in olddefconfig.
build() {
	local log=$logs/$1.build
	cp "$KUNITCONFIG" "$obj/.config"
	make -s -C "$src" O="$obj" ARCH=x86_64 olddefconfig >"$log" 2>&1 &&
		make -C "$src" O="$obj" ARCH=x86_64 -j"$JOBS" >>"$log" 2>&1
}

log "building the base $(git -C "$TREE" log -1 --format='%h %s' "$base")"
git -C "$src" checkout -q --detach "$base"
build base || die "the base does not build; see $logs/base.build"

bad=0 n=${#commits[@]} i=0
for c in "${commits[@]}"; do
	i=$((i + 1))
	name=$(printf '%04d' $i)
	subject=$(git -C "$TREE" log -1 --format='%h %s' "$c")
	log "[$i/$n] building and checking"
	git -C "$src" checkout -q --detach "$c"

	if ! build "$name"; then
		b="FAILED (build)"
	elif grep -q 'warning:' "$logs/$name.build"; then
		b="FAILED ($(grep -c 'warning:' "$logs/$name.build") warnings)"
	else
		b=ok
	fi

	# checkpatch wants the patch as mailed, and the tree it applies to.
	git -C "$TREE" format-patch -1 --stdout "$c" >"$logs/$name.patch"
	# FILE_PATH_CHANGES ("does MAINTAINERS need updating?") is raised by
	# every patch that adds a file; the KEVENT entry of the first patch
	# covers all of them (kernel/kevent/, the headers, the selftests and
	# the document).
	(cd "$src" && scripts/checkpatch.pl --strict --no-color \
		--ignore FILE_PATH_CHANGES "$logs/$name.patch") \
		>"$logs/$name.checkpatch" 2>&1 || true
	cp=$(grep -E '^total: ' "$logs/$name.checkpatch" | sed 's/, [0-9]* lines checked//' || true)
	case $cp in
	"total: 0 errors, 0 warnings, 0 checks") ;;
	"") cp="checkpatch did not finish" ;&
	*) b="$b, checkpatch FAILED" ;;
	esac

	printf '[%d/%d] %s\n      build: %s; checkpatch %s\n' "$i" "$n" "$subject" "$b" "${cp:-?}"
	[ "$b" = ok ] || bad=$((bad + 1))
done

echo "check-series: $((n - bad)) patches clean, $bad with problems (logs in $logs)"
[ $bad = 0 ]

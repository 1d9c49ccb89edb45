#!/bin/bash
# Link the whole series in the configurations that CI's kernels do not
# have: the per-patch check compiles objects, which cannot see a call of a
# function that a configuration leaves out, and the debug kernel has every
# option on. Each kernel of the list below is built to a vmlinux (with its
# KUnit tests, which are compiled code too) from the tree's branch as it
# stands, into build/configs/NAME.
#
#   tools/check-configs.sh [NAME...]   default: every one below
#
#   nonet   kunit/nonet.config, x86_64: no NET, no SIGNALFD, no SMP
#   i386    kunit/i386.config, a 32-bit x86 kernel
#
# Logs in build/configs/NAME.log; "<linked> <failed>" in $RESULTS/configs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

declare -A arch=([nonet]=x86_64 [i386]=i386)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(nonet i386)
need_tree
mkdir -p "$BUILD/configs"

ok=0 bad=0
for name in "${names[@]}"; do
	[ -n "${arch[$name]:-}" ] || die "no configuration $name (nonet, i386)"
	dir=$BUILD/configs/$name
	logf=$BUILD/configs/$name.log
	log "linking the $name kernel (kunit/$name.config, ${arch[$name]}) in $dir"
	# kunit.py refuses a fragment whose options olddefconfig changes, so
	# an option that silently came back on fails here too.
	if (cd "$TREE" && python3 tools/testing/kunit/kunit.py build \
		--arch="${arch[$name]}" --kunitconfig="$ROOT/kunit/$name.config" \
		--build_dir="$dir" --jobs="$JOBS") >"$logf" 2>&1 &&
		[ -f "$dir/vmlinux" ]; then
		ok=$((ok + 1))
	else
		bad=$((bad + 1))
		echo "$name: build failed; the end of $logf:" >&2
		grep -aE 'error|undefined reference|ERROR' "$logf" | tail -n 20 >&2 ||
			tail -n 20 "$logf" >&2
	fi
done
report configs "$ok" "$bad"
[ $bad = 0 ]

#!/bin/bash
# The kernel's own selftests of the code the series changes outside
# kernel/kevent: epoll (fs/eventpoll.c: loop and depth checks through
# kevent instances), eventfd (a file any kevent can watch), close_range
# (file release through __fput(), which releases a file's kevents), and
# SCM_RIGHTS and SCM_PIDFD (net/core/scm.c refuses kevent instances in
# flight). Each is built statically from the tree's tools/testing/selftests
# and booted in QEMU (TCG, never KVM) with the /init of tools/initramfs.sh.
#
#   tools/kernel-selftests.sh                 once, on the debug kernel of
#                                             CI (build/kunit); a failure
#                                             listed in tools/kernel-selftests/
#                                             known-failures is reported but
#                                             not counted; result "own"
#   tools/kernel-selftests.sh --compare [N [CASE]]
#                                             epoll_wakeup_test N times
#                                             (default 25; only test CASE,
#                                             e.g. epoll58, when given) on
#                                             the patched debug kernel and on
#                                             vanilla (tag kevent-base, the
#                                             same fragment without the
#                                             kevent options, build/vanilla):
#                                             failures per test case, side by
#                                             side (KSFT_PAIRS=K: K boots of
#                                             each, alternating which first;
#                                             KSFT_PATCHED=BZIMAGE: that
#                                             kernel in the patched column,
#                                             to compare two others)
#
# The binaries are the same on both kernels (built once, against the
# patched kernel's UAPI headers, which these tests do not use beyond
# vanilla's). Logs: $BUILD/own-selftests*.log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mode=ci runs=1 only=
case ${1:-} in
--compare) mode=compare runs=${2:-25} only=${3:-} ;;
"") ;;
*) die "usage: $0 [--compare [RUNS [CASE]]]" ;;
esac
need_tree
[ -f "$BZIMAGE" ] || die "no $BZIMAGE; run tools/kunit.sh first"

OWN=$BUILD/own-selftests
KNOWN=$ROOT/tools/kernel-selftests/known-failures
ST=$TREE/tools/testing/selftests
# program source, relative to $ST
progs=(filesystems/epoll/epoll_wakeup_test.c
	filesystems/eventfd/eventfd_test.c
	core/close_range_test.c
	net/af_unix/scm_rights.c
	net/af_unix/scm_pidfd.c)
# --compare: epoll's, the one with a case that fails now and then
[ $mode = compare ] && progs=("${progs[0]}")
[ $mode = compare ] && BZIMAGE=${KSFT_PATCHED:-$BZIMAGE}

make -s -C "$TREE" ARCH=x86_64 O="$KDIR" headers
rm -rf "$OWN"
mkdir -p "$OWN/tests"
for p in "${progs[@]}"; do
	name=$(basename "$p" .c)
	log "building $name"
	gcc -static -O2 -isystem "$KDIR/usr/include" -I"$ST" \
		-I"$(dirname "$ST/$p")" -pthread -o "$OWN/tests/$name" "$ST/$p" -lrt
done
gcc -static -O2 -Wall -o "$OWN/init" "$ROOT/tools/initramfs/init.c"
gen=$(gen_init_cpio "$OWN")
{
	initramfs_skeleton "$OWN/init"
	for f in "$OWN"/tests/*; do
		echo "file /tests/$(basename "$f") $f 0755 0 0"
	done
} >"$OWN/initramfs.list"
"$gen" "$OWN/initramfs.list" >"$OWN/initramfs.cpio"

# boot KERNEL LOG: every program $runs times in one boot.
boot() {
	local cmdline="console=ttyS0 kunit.enable=0 panic=-1 ksft_timeout=300"
	[ "$runs" -gt 1 ] && cmdline+=" ksft_repeat=$runs"
	[ -n "$only" ] && cmdline+=" ksft_args=-t,$only"
	log "booting $1 ($runs rounds; console log: $2)"
	qemu_boot "$1" "$OWN/initramfs.cpio" "$cmdline" "$2" $((600 + runs * 120)) >/dev/null || true
	grep -aq 'kselftest: [0-9]* passed' "$2" || { echo "no summary line in $2 (crash or timeout)" >&2; return 1; }
}

# cases LOG: "PROGRAM CASE ok|fail" for every test case of every round.
# init prints "# selftests: kevent: PROGRAM" before a program's output,
# which it copies with "# " in front; a program that is not a harness
# program (no case lines) counts as one case named after it.
cases() {
	awk '
		/^# selftests: kevent: / { prog = $4; next }
		/^# (not )?ok [0-9]+ / {
			r = ($2 == "not") ? "fail" : "ok"
			name = (r == "fail") ? $5 : $4
			if ($0 ~ /# SKIP/) { r = "skip"; if (name == "#") name = "case" $3 }
			print prog, name, r
			seen[prog] = 1
			next
		}
		/^(not )?ok [0-9]+ selftests: kevent: / {
			p = ($1 == "not") ? $6 : $5
			if (!seen[p]) print p, p, ($1 == "not") ? "fail" : "ok"
			seen[p] = 0
		}
	' "$1"
}

# reason PROGRAM CASE: its known-failures line, if it has one.
reason() {
	grep -E "^$1 $2( |$)" "$KNOWN" 2>/dev/null | head -n 1
}

if [ $mode = ci ]; then
	rm -f "$RESULTS/own"
	log=$BUILD/own-selftests.log
	ok=0 bad=0 known=0
	if boot "$BZIMAGE" "$log"; then
		while read -r prog name r; do
			case $r in
			ok) ok=$((ok + 1)) ;;
			skip) echo "skipped: $prog $name" >&2 ;;
			fail)
				if why=$(reason "$prog" "$name") && [ -n "$why" ]; then
					known=$((known + 1))
					echo "known failure: $why" >&2
				else
					bad=$((bad + 1))
					echo "FAILED: $prog $name" >&2
				fi ;;
			esac
		done < <(cases "$log")
		[ $((ok + bad + known)) -gt 0 ] || bad=1
	else
		bad=1
	fi
	if splats=$(find_splats "$log"); then
		printf 'kernel splat in %s:\n%s\n' "$log" "$splats" >&2
		bad=$((bad + 1))
	fi
	[ $bad = 0 ] || failed_cases "$log" >&2
	[ $known = 0 ] || echo "own: $known known failures (tools/kernel-selftests/known-failures)"
	report own "$ok" "$bad"
	[ $bad = 0 ]
	exit
fi

# --compare: vanilla is kevent-base built from a worktree of the tree,
# with the debug fragment less its kevent options.
VSRC=$BUILD/vanilla-src VDIR=$BUILD/vanilla
if [ ! -d "$VSRC" ]; then
	git -C "$TREE" worktree add -q -f --detach "$VSRC" "$BASE_TAG" >&2
fi
grep -v '^CONFIG_KEVENT' "$KUNITCONFIG" >"$BUILD/vanilla.kunitconfig"
log "building vanilla $(git -C "$VSRC" describe --always) in $VDIR"
(cd "$VSRC" && python3 tools/testing/kunit/kunit.py build --arch=x86_64 \
	--kunitconfig="$BUILD/vanilla.kunitconfig" --build_dir="$VDIR" \
	--jobs="$JOBS") >"$BUILD/vanilla-build.log" 2>&1 ||
	die "vanilla build failed: $BUILD/vanilla-build.log"

# Boots in pairs, the order swapped in every other pair, so that the
# host's load over time and the order of the boots weigh on both alike
# (KSFT_PAIRS, default 1: vanilla, then patched).
pairs=${KSFT_PAIRS:-1}
status=0
vlogs=() plogs=()
for ((i = 1; i <= pairs; i++)); do
	v=$BUILD/own-selftests-vanilla-$i.log p=$BUILD/own-selftests-patched-$i.log
	vlogs+=("$v") plogs+=("$p")
	if ((i % 2)); then
		boot "$VDIR/arch/x86/boot/bzImage" "$v" || status=1
		boot "$BZIMAGE" "$p" || status=1
	else
		boot "$BZIMAGE" "$p" || status=1
		boot "$VDIR/arch/x86/boot/bzImage" "$v" || status=1
	fi
done
for f in "${vlogs[@]}" "${plogs[@]}"; do
	if splats=$(find_splats "$f"); then
		printf 'kernel splat in %s:\n%s\n' "$f" "$splats" >&2
		status=1
	fi
done
# failures LOG...: "PROGRAM/CASE FAILURES", sorted, for join.
failures() {
	for f in "$@"; do cases "$f"; done |
		awk '{ n[$1 "/" $2] += ($3 == "fail") } END { for (k in n) print k, n[k] }' |
		sort
}
# A table of every case that failed at least once on either kernel.
total=$((runs * pairs))
echo "failures in $total runs of each program, $pairs boots of each kernel (TCG, -smp $QEMU_CPUS, $KUNITCONFIG):"
printf '%-22s %-28s %8s %8s\n' program case vanilla patched
join -a1 -a2 -e 0 -o 0,1.2,2.2 <(failures "${vlogs[@]}") <(failures "${plogs[@]}") |
	awk -v runs="$total" '
		{ tv += $2; tp += $3; cases++ }
		$2 + $3 > 0 { split($1, a, "/"); printf "%-22s %-28s %5d/%-3d %5d/%-3d\n", a[1], a[2], $2, runs, $3, runs }
		END { printf "%-22s %-28s %8d %8d   (%d cases)\n", "all", "", tv, tp, cases }'
# And boot by boot, to see how much boots of one kernel differ.
for ((i = 1; i <= pairs; i++)); do
	printf 'pair %d:%s vanilla %s, patched %s\n' "$i" "$( ((i % 2)) || echo ' (patched first)')" \
		"$(failures "${vlogs[i - 1]}" | awk '{ n += $2 } END { print n + 0 }')" \
		"$(failures "${plogs[i - 1]}" | awk '{ n += $2 } END { print n + 0 }')"
done
exit $status

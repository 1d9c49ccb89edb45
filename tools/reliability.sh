#!/bin/bash
# Reliability runs that CI leaves out for time. Each boots the tests in
# QEMU (TCG, never KVM) as tools/kunit.sh and tools/selftests.sh do, on a
# kernel of its own built from the tree (build/linux): kunit/debug.config
# with the run's fragments appended, into build/rel/NAME/kunit. Figures
# are printed last; logs stay in build/rel/NAME.
#
#   tools/reliability.sh kcsan [MIN]  KCSAN (kunit/kcsan.config): the KUnit
#                                     suites, then the stress and AIO
#                                     kselftests (with MIN, again and
#                                     again for MIN minutes, as soak);
#                                     every data race reported
#   tools/reliability.sh faults       fault injection (kunit/faults.config
#                                     + gcov.config, build/rel/fg): the
#                                     sweep of tools/reliability/
#                                     kevent_faults.c; faults injected,
#                                     sites, splats, leaks
#   tools/reliability.sh gcov         coverage, on the same kernel: KUnit,
#                                     every kselftest and the fault sweep
#                                     in one boot; line and branch coverage
#                                     per file of kernel/kevent
#   tools/reliability.sh soak [MIN]   the stress kselftests again and again
#                                     for MIN minutes (default 30) on the
#                                     debug kernel of CI (build/kunit)
#   tools/reliability.sh nosignalfd   the debug kernel without signalfd
#                                     (kunit/nosignalfd.config): KUnit,
#                                     then the signal kselftests, which
#                                     must all skip (the type refused)
#   tools/reliability.sh epoll58 [N [PAIRS]]
#                                     the kernel's own epoll selftest's
#                                     case epoll58, N times a boot
#                                     (default 200), on vanilla and on
#                                     the series, PAIRS boots of each
#                                     (default 4): failures side by side
#                                     (tools/kernel-selftests.sh
#                                     --compare)
#
# KF_BUDGET=SECONDS bounds the fault sweep's time (faults and gcov; the
# sweep's own default is 17 minutes). The status is non-zero when a run
# found something (a race, a splat, a leak, a failed test) or did not
# finish.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
tools=$(cd "$(dirname "$0")" && pwd)

mode=${1:-}
case $mode in
kcsan | faults | gcov | soak | nosignalfd) ;;
epoll58)
	KSFT_PAIRS=${3:-4} exec "$tools/kernel-selftests.sh" --compare "${2:-200}" epoll58 ;;
*) die "usage: $0 kcsan|faults|gcov|soak [MINUTES] | nosignalfd | epoll58 [N [PAIRS]]" ;;
esac
need_tree

# use_kernel NAME FRAGMENT...: make build/rel/NAME the build folder of
# tools/*.sh (KEVENT_BUILD), with our tree and a kernel of debug.config
# and the FRAGMENTs, in that order: a later line of a kunit.py fragment
# wins over an earlier one.
use_kernel() {
	local r=$BUILD/rel/$1 f
	shift
	mkdir -p "$r"
	ln -sfn "$TREE" "$r/linux"
	for f in debug "$@"; do
		cat "$ROOT/kunit/$f.config"
	done >"$r/kunitconfig"
	export KEVENT_BUILD=$r KEVENT_KUNITCONFIG=$r/kunitconfig
	REL=$r
}

# The fault-injection and coverage kernel: only kernel/kevent's files are
# instrumented (GCOV_PROFILE_<stem>.o names every object of that stem, so
# a few namesakes elsewhere are too, harmlessly).
use_fg_kernel() {
	local f opts=()
	use_kernel fg faults gcov
	for f in "$TREE"/kernel/kevent/*.c; do
		opts+=("GCOV_PROFILE_$(basename "$f" .c).o=y")
	done
	export KEVENT_MAKE_OPTIONS="${opts[*]}"
}

# without_fault_dumps LOG: the log without what an injected fault prints
# on purpose: fail_dump()'s message and stack, and the allocator's
# "page allocation failure" report, each up to its "</TASK>".
without_fault_dumps() {
	awk '
		/FAULT_INJECTION: forcing a failure|page allocation failure:/ { skip = 1 }
		!skip { print }
		skip && /<\/TASK>/ { skip = 0 }
	' "$1"
}

# splats LOG...: find_splats on the logs, the injected faults' dumps left
# out; prints them and succeeds when there is at least one.
splats() {
	local f found=1 tmp
	tmp=$(mktemp)
	for f in "$@"; do
		[ -f "$f" ] || continue
		without_fault_dumps "$f" >"$tmp"
		find_splats "$tmp" && found=0
	done
	rm -f "$tmp"
	return $found
}

# fault_sites LOG: how many faults were injected and where: for each
# fail_dump() stack, the first function that is not the fault injection,
# the allocator or the user copy, i.e. the caller that had to cope.
# Allocations with __GFP_NOWARN fail without a stack: the sweep's own
# count ("kevent-faults: ...") is the total, this the sites it shows.
fault_sites() {
	awk '
		/FAULT_INJECTION: forcing a failure/ { in_dump = 1; site = ""; n++; next }
		in_dump && /<\/TASK>/ {
			# The sweep reading or writing fail-nth itself, past the
			# call under test: not a fault of kevent'"'"'s.
			if (site ~ /^(kstrtouint_from_user|simple_read_from_buffer)$/)
				n--
			else
				sites[site == "" ? "?" : site]++
			in_dump = 0
			next
		}
		in_dump && site == "" && /\+0x/ {
			fn = $0
			sub(/^\[[^]]*\] */, "", fn)
			sub(/^ *\? */, "?", fn)
			sub(/\+0x.*/, "", fn)
			gsub(/ /, "", fn)
			if (fn ~ /^\?/ || fn ~ /^(dump_stack|show_stack|fail_dump|should_fail|should_failslab|slab_|kmem_cache_alloc|__kmem_cache|kmalloc|__kmalloc|__do_kmalloc|kvmalloc|__kvmalloc|kzalloc|kvzalloc|vmalloc|__vmalloc|alloc_pages|__alloc_pages|alloc_pages_|folio_alloc|__folio_alloc|get_page_from_freelist|prepare_alloc_pages|__get_free_pages|get_zeroed_page|alloc_slab|allocate_slab|new_slab|___slab_alloc|__slab_alloc|_copy_|copy_from_user|copy_to_user|memdup_user|strndup_user|_inline_copy)/)
				next
			site = fn
		}
		END {
			for (s in sites) {
				printf "  %6d  %s\n", sites[s], s
				d++
			}
			printf "faults: %d injected at %d distinct sites\n", n, d
		}
	' "$1"
}

# guest_summary LOG NAME: the guest's last "kselftest: N passed, N failed"
# line, under NAME.
guest_summary() {
	grep -aoE 'kselftest: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1 |
		sed "s/^/$2: /"
}

# KCSAN prints "BUG: KCSAN: data-race in A / B" once per report.
kcsan_reports() {
	cat "$@" 2>/dev/null | grep -aoE 'BUG: KCSAN: [a-z-]+ in .*' |
		sed 's/ *$//' | sort | uniq -c | sort -rn || true
}

run_kcsan() {
	local minutes=${1:-} status=0 logs n distinct kev soak=()
	use_kernel kcsan kcsan
	# kunit.sh and selftests.sh fail on KCSAN's "BUG:" lines too; the
	# figures below say which reports they were.
	"$tools/kunit.sh" 'kevent*' || status=1
	[ -n "$minutes" ] && soak=(KSFT_CMDLINE="ksft_soak=$((minutes * 60))"
		BOOT_TIMEOUT=$((minutes * 60 + 1200)))
	env "${soak[@]}" KEVENT_TESTS="kevent_stress_test kevent_aio_test" \
		"$tools/selftests.sh" || status=1
	[ -n "$minutes" ] && soak_figures "$REL/selftests.log" kcsan
	logs=("$REL/kunit/test.log" "$REL/selftests.log")
	n=$(cat "${logs[@]}" 2>/dev/null | grep -acE 'BUG: KCSAN:' || true)
	distinct=$(kcsan_reports "${logs[@]}" | wc -l)
	kev=$(kcsan_reports "${logs[@]}" | grep -c kevent || true)
	kcsan_reports "${logs[@]}"
	echo "kcsan: $n reports, $distinct distinct pairs, $kev naming a kevent function"
	[ "$status" = 0 ] && [ "$n" = 0 ]
}

# Without signalfd the signal source cannot be woken: KEVENT_TYPE_SIGNAL
# must be refused (-EOPNOTSUPP), which makes every signal kselftest skip.
# A test that passes or fails there means the type was taken.
run_nosignalfd() {
	local log status=0 skips
	use_kernel nosignalfd nosignalfd
	"$tools/kunit.sh" 'kevent*' || status=1
	# selftests.sh fails a run in which no test passed: that is this
	# one's success, judged below from the log.
	KEVENT_TESTS=kevent_signal_test "$tools/selftests.sh" || true
	log=$REL/nosignalfd.log
	cp "$REL/selftests.log" "$log"
	guest_summary "$log" nosignalfd
	skips=$(grep -acE '^# ok [0-9]+ .* # SKIP no KEVENT_TYPE_SIGNAL' "$log" || true)
	echo "nosignalfd: $skips signal tests skipped for want of KEVENT_TYPE_SIGNAL"
	grep -aqE 'kselftest: 0 passed, 0 failed' "$log" || status=1
	[ "$skips" -gt 0 ] || status=1
	if find_splats "$log"; then
		echo "nosignalfd: kernel splats above"
		status=1
	fi
	[ "$status" = 0 ]
}

run_faults() {
	local log status=0 leaks
	use_fg_kernel
	[ -f "$ROOT/tools/reliability/kevent_faults.c" ] ||
		die "no tools/reliability/kevent_faults.c"
	KEVENT_TESTS=kevent_faults BOOT_TIMEOUT=${BOOT_TIMEOUT:-3600} \
		KSFT_CMDLINE=${KF_BUDGET:+kf_budget=$KF_BUDGET} \
		"$tools/selftests.sh" || true
	log=$REL/faults.log
	cp "$REL/selftests.log" "$log"
	grep -aE '^# kevent-faults: ' "$log" | sed 's/^# //' || {
		echo "faults: no summary from the sweep"
		status=1
	}
	fault_sites "$log"
	guest_summary "$log" faults
	grep -aqE 'kselftest: [0-9]+ passed, 0 failed' "$log" || status=1
	leaks=$(grep -acE 'kmemleak: .*new suspected memory leak' "$log" || true)
	echo "faults: kmemleak reports: $leaks"
	if splats "$log"; then
		echo "faults: kernel splats (beside the injected faults' own dumps) above"
		status=1
	else
		echo "faults: no splat beside the injected faults' own dumps"
	fi
	[ "$status" = 0 ]
}

# gcov_extract LOG DIR: the .gcda files that init printed (gcov_dump=),
# decoded into DIR under their base names.
gcov_extract() {
	local f
	awk -v dir="$2" '
		/^gcov-data: / { n = split($2, p, "/"); out = dir "/" p[n] ".b64"; next }
		/^gcov-end: / { close(out); out = ""; next }
		out != "" { print > out }
	' "$1"
	for f in "$2"/*.gcda.b64; do
		[ -e "$f" ] || continue
		base64 -d <"$f" >"${f%.b64}"
		rm -f "$f"
	done
}

# gcov_summary GCOV_OUTPUT: per file, lines and branches (taken at least
# once), as gcov -b counts them, and the total.
gcov_summary() {
	awk '
		/^File .*kernel\/kevent\/[^\/]*\.c/ { n = split($2, p, "/"); file = p[n]; sub(/\x27$/, "", file); next }
		file && /^Lines executed:/ { v = $2; sub(/.*:/, "", v); sub(/%/, "", v); lp[file] = v; ln[file] = $4 }
		file && /^Taken at least once:/ { v = $4; sub(/.*:/, "", v); sub(/%/, "", v); bp[file] = v; bn[file] = $6; file = "" }
		END {
			for (f in lp) {
				printf "%-14s %6d lines %6.1f%%  %6d branches %6.1f%%\n", f, ln[f], lp[f], bn[f], bp[f]
				tl += ln[f]; cl += ln[f] * lp[f] / 100
				tb += bn[f]; cb += bn[f] * bp[f] / 100
			}
			if (tl && tb)
				printf "%-14s %6d lines %6.1f%%  %6d branches %6.1f%%\n", "(all)", tl, 100 * cl / tl, tb, 100 * cb / tb
		}' "$1" | sort
}

run_gcov() {
	local status=0 kobj out src f
	use_fg_kernel
	# One boot: KUnit at boot (kunit.enable=1 wins over selftests.sh's
	# kunit.enable=0), every kselftest and the fault sweep, then init
	# prints the data of kernel/kevent.
	KSFT_CMDLINE="kunit.enable=1 gcov_dump=/kernel/kevent/${KF_BUDGET:+ kf_budget=$KF_BUDGET}" \
		KEVENT_EXTRA_TESTS=kevent_faults BOOT_TIMEOUT=${BOOT_TIMEOUT:-5400} \
		"$tools/selftests.sh" || true
	cp "$REL/selftests.log" "$REL/gcov.log"
	grep -aE '^\[ *[0-9.]+\] +# Totals: pass:' "$REL/gcov.log" | awk '
		{ for (i = 1; i <= NF; i++) if (split($i, kv, ":") == 2 && kv[1] ~ /^(pass|fail|skip)$/) t[kv[1]] += kv[2] }
		END { printf "gcov: KUnit at boot: %d passed, %d failed, %d skipped\n", t["pass"], t["fail"], t["skip"] }'
	guest_summary "$REL/gcov.log" gcov
	kobj=$REL/kunit/kernel/kevent
	out=$REL/gcov
	rm -rf "$out" "$kobj"/*.gcda
	mkdir -p "$out"
	gcov_extract "$REL/gcov.log" "$kobj"
	ls "$kobj"/*.gcda >/dev/null 2>&1 || die "no coverage data in $REL/gcov.log"
	# The annotated .c.gcov files stay in $out, for reading the misses.
	src=$(cd "$TREE" && pwd -P)
	(cd "$out" && for f in "$kobj"/*.gcda; do
		gcov -b -o "$kobj" "$src/kernel/kevent/$(basename "$f" .gcda).c"
	done) >"$out/gcov.txt" 2>&1 || status=1
	gcov_summary "$out/gcov.txt" | tee "$out/summary.txt"
	echo "gcov: annotated sources in $out/*.c.gcov"
	if splats "$REL/gcov.log"; then
		echo "gcov: kernel splats above"
		status=1
	fi
	[ "$status" = 0 ]
}

run_soak() {
	local minutes=$1 log status=0
	# CI's debug kernel, as it is.
	KEVENT_TESTS=kevent_stress_test KSFT_CMDLINE="ksft_soak=$((minutes * 60))" \
		BOOT_TIMEOUT=$((minutes * 60 + 1200)) "$tools/selftests.sh" || status=1
	mkdir -p "$BUILD/rel/soak"
	log=$BUILD/rel/soak/soak.log
	cp "$BUILD/selftests.log" "$log"
	soak_figures "$log" soak
	guest_summary "$log" soak
	if find_splats "$log"; then
		echo "soak: kernel splats above"
		status=1
	else
		echo "soak: no splat"
	fi
	[ "$status" = 0 ]
}

# soak_figures LOG PREFIX: the stress tests' own counts (their TH_LOG
# lines) over the rounds of a ksft_soak= boot, added up.
soak_figures() {
	awk -v prefix="$2" '
		/soak round/ { rounds++ }
		# TH_LOG glues "file:line:test:" to the first number.
		function num(t) { sub(/.*:/, "", t); return t + 0 }
		/ triggers, .* counted in .* events/ {
			for (i = 1; i < NF; i++) {
				if ($(i + 1) == "triggers,") trig += num($i)
				if ($(i + 1) == "events,") ev += num($i)
			}
		}
		/ ADD\/.* REMOVE\// {
			for (i = 1; i < NF; i++)
				if ($(i + 1) ~ /^(ADD|REMOVE|MODIFY|TRIGGER)/) ops += num($i)
		}
		END { printf "%s: %d runs of the stress tests (x86_64 and i386); %d triggers, %d events counted; %d ctl operations in the churn tests\n", prefix, rounds + 1, trig, ev, ops }
	' "$1"
}

case $mode in
kcsan) run_kcsan "${2:-}" ;;
faults) run_faults ;;
gcov) run_gcov ;;
soak) run_soak "${2:-30}" ;;
nosignalfd) run_nosignalfd ;;
esac

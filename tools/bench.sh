#!/bin/bash
# Benchmark kevent against epoll, io_uring and poll() in QEMU (TCG, never
# KVM): builds tools/bench/kevent_bench statically, packs it with the test
# /init (tools/initramfs/init.c) into an initramfs, boots it and prints the
# tables. The console log goes to $BUILD/bench.log and the results, with
# the host, QEMU and kernel details, to $BUILD/bench.txt (or, when the run
# failed, $BUILD/bench.failed.txt, so that a failure does not overwrite the
# last good results), and, when gnuplot is installed, a plot of the ratios
# to $BUILD/bench.png (tools/bench/plot.sh).
#
#   tools/bench.sh
#
# It boots the production kernel (kunit/production.config), which it
# builds or brings up to date first with tools/build-kernel.sh; every
# published number comes from it. BENCH_CONFIG=profile boots the
# profiling kernel instead (for BENCH_PROFILE=1), BENCH_CONFIG=debug the
# test kernel; BENCH_KDIR=DIR boots the kernel already built in DIR.
# Settings, passed to the guest:
#   BENCH_N=100,1000,10000  pipes registered
#   BENCH_M=1,10,100        pipes written per round
#   BENCH_REPS=7            interleaved repetitions
#   BENCH_MS=250            duration of one idle+active run (ms)
#   BENCH_PP=2000           round trips per ping-pong run (0: none)
#   BENCH_BE=               back ends to run (default all), e.g.
#                           epoll-LT,kevent-LT; the timer back ends run
#                           with the one they are built on (kevent-timer
#                           and timerfd+kevent: kevent-LT; timerfd+epoll:
#                           epoll-LT; timerfd+io_uring: io_uring)
#   BENCH_TIMERS=1,100,1000 periodic timers per timers run (0: none)
#   BENCH_TIMER_PERIOD_US=1000  their period (at least 100)
#   BENCH_TIMER_MS=500      duration of one timers run (ms)
#   BENCH_LAT_ROUNDS=2000   wakeups measured per back end for the
#                           latency percentiles (0: none)
#   BENCH_REG=0             registrations: time and slab memory per
#                           registration, epoll against kevent, at each
#                           of these N (e.g. 100000,1000000; 0: none)
#   BENCH_REG_BATCH=64,65536  kevent's entries per kevent_ctl() there
#   BENCH_REG_REPS=3        its repetitions
#   BENCH_TCP=              TCP server scenarios (tools/bench/tcp_bench.c):
#                           S1,S2,S3 or some of them (default: none). A
#                           server process and a client process over
#                           loopback TCP; server CPU and system calls per
#                           message; epoll, io_uring, kevent. Their sizes:
#   BENCH_TCP_BE=           back ends (default all), e.g. epoll-LT,io_uring
#   BENCH_TCP_REPS=5        interleaved repetitions
#   BENCH_TCP_CONNS=1000    S2 connections (a list, e.g. 100,1000)
#   BENCH_TCP_M=1,10,100    S2 requests per round
#   BENCH_TCP_MSGS=20000    S2 requests per run
#   BENCH_TCP_S1_CONNS=4    S1 connections
#   BENCH_TCP_S1_SIZE=16384 S1 bytes per client write (a message)
#   BENCH_TCP_S1_MSGS=4000  S1 writes per run
#   BENCH_TCP_S3_CONNS=2000 S3 connections per run
#   BENCH_TCP_S3_K=16       S3 connections at a time
#   BENCH_PROFILE=0         1: after the timed runs, one more run per back
#                           end at the first N and M with ftrace's
#                           function profiler on (a kernel built with
#                           FUNCTION_PROFILER and FUNCTION_GRAPH_TRACER):
#                           calls and ns per event of the wait and wakeup
#                           paths' kernel functions; with BENCH_TCP
#                           naming S2, also one profiled S2 run per TCP
#                           back end, the server's CPU only
#   BENCH_ICOUNT=           a number S: QEMU counts instructions
#                           (-icount shift=S,sleep=off; one vCPU thread
#                           runs both vCPUs): the guest's clocks advance
#                           2^S ns per instruction, so that CPU times are
#                           instruction counts, whatever else the host
#                           runs (its preemptions are otherwise charged
#                           to the guest task that was running). For the
#                           TCP scenarios; the guest then ran without
#                           high-resolution timers (clock_getres 4 ms),
#                           so the timers scenario is not comparable
#   BENCH_TIMEOUT=1800      seconds for the whole boot
#
# Exit status: 0 when the benchmark ran to the end with every event
# checked and the kernel printed no splat.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if [ -n "${BENCH_KDIR:-}" ]; then
	KDIR=$(realpath -m "$BENCH_KDIR")
else
	KDIR=$("$(dirname "$0")/build-kernel.sh" "${BENCH_CONFIG:-production}")
fi
BZIMAGE=$KDIR/arch/x86/boot/bzImage
OUT=$BUILD/bench
LOG=$BUILD/bench.log
TXT=$BUILD/bench.txt
CC=${CC:-gcc}
timeout_s=${BENCH_TIMEOUT:-1800}

[ -f "$BZIMAGE" ] || die "no kernel $BZIMAGE"
# The headers of the kernel measured, brought up to date (a UAPI change
# since they were installed would otherwise build the programs against
# the old ones).
# The tree that built it is $KDIR/source (kbuild's link for O= builds).
if [ -d "$KDIR/source" ]; then
	log "installing UAPI headers into $KDIR/usr/include"
	make -s -C "$(realpath "$KDIR/source")" ARCH=x86_64 O="$KDIR" headers
fi
[ -f "$KDIR/usr/include/linux/kevent.h" ] || die "no UAPI headers in $KDIR"


mkdir -p "$OUT"
# Boot a copy: the build directory may be rebuilt while the guest runs,
# and the results must name the kernel that was measured.
cp "$BZIMAGE" "$OUT/bzImage"
kversion=$(file -b "$OUT/bzImage" | grep -o 'version [^,]*' || true)
log "building kevent_bench"
make -s -C "$ROOT/tools/bench" CC="$CC" KHDR="$KDIR/usr/include" OUT="$OUT"
"$CC" -static -O2 -Wall -o "$OUT/init" "$ROOT/tools/initramfs/init.c"

gen=$(gen_init_cpio "$OUT")
{
	initramfs_skeleton "$OUT/init"
	echo "file /tests/kevent_bench $OUT/kevent_bench 0755 0 0"
} >"$OUT/initramfs.list"
"$gen" "$OUT/initramfs.list" >"$OUT/initramfs.cpio"

# /init runs every program of /tests with its output prefixed by "# ";
# ksft_timeout is its time limit per program. Other name=value words reach
# the benchmark as environment variables.
cmdline="console=ttyS0 kunit.enable=0 panic=-1 ksft_timeout=$((timeout_s - 60))"
for v in N M REPS MS PP BE TIMERS TIMER_PERIOD_US TIMER_MS LAT_ROUNDS PROFILE \
	REG REG_BATCH REG_REPS TCP TCP_BE TCP_REPS TCP_CONNS TCP_M TCP_MSGS \
	TCP_S1_CONNS TCP_S1_SIZE TCP_S1_MSGS TCP_S3_CONNS TCP_S3_K; do
	var=BENCH_$v
	[ -n "${!var:-}" ] && cmdline+=" bench_${v,,}=${!var}"
done

# TCG runs the guest on host CPUs shared with whatever else runs there.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
qemu_note=
if [ -n "${BENCH_ICOUNT:-}" ]; then
	export QEMU_ICOUNT=$BENCH_ICOUNT
	qemu_note=", -icount shift=$BENCH_ICOUNT,sleep=off"
fi
log "booting $BZIMAGE, $kversion (console log: $LOG)"
# A crash or a timeout shows as missing results below.
qemu_boot "$OUT/bzImage" "$OUT/initramfs.cpio" "$cmdline" "$LOG" "$timeout_s" || true

# The kernel's debugging options slow some paths far more than others
# (lockdep: every lock; KASAN: every access): they belong with the numbers.
debug=$(grep -E '^CONFIG_(KASAN|PROVE_LOCKING|LOCKDEP|DEBUG_LIST|DEBUG_OBJECTS|KMEMLEAK|DEBUG_KMEMLEAK|KFENCE|SMP|PREEMPT|PREEMPT_NONE|PREEMPT_VOLUNTARY|HZ)=' \
	"$KDIR/.config" 2>/dev/null | sed 's/^CONFIG_//' | xargs || true)
{
	echo "host:   $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
	echo "load:   $load_before before the boot, $(cut -d' ' -f1-3 /proc/loadavg) after (1, 5, 15 min)"
	echo "QEMU:   $(qemu-system-x86_64 --version | head -n 1), $QEMU_MACHINE$qemu_note"
	echo "kernel: $BZIMAGE"
	echo "        $kversion"
	echo "        $debug"
	[ "$KDIR/.config" -nt "$OUT/bzImage" ] &&
		echo "        (from $KDIR/.config, which is newer than the bzImage: a build in progress?)"
	echo
	# The benchmark's own output, without /init's "# " prefix.
	sed -n '/^# selftests: kevent: kevent_bench/,/^\(not \)\?ok [0-9]* selftests: kevent: kevent_bench/p' "$LOG" |
		sed -n 's/^# \?//p' | sed 1d
} >"$TXT.new"

result=$(grep -aE '^(not )?ok [0-9]+ selftests: kevent: kevent_bench' "$LOG" || true)
splat=0
if splats=$(find_splats "$LOG"); then
	splat=1
	printf 'kernel splat in %s:\n%s\n' "$LOG" "$splats" >&2
fi
echo
cat "$TXT.new"
echo
if [[ $result == ok* ]] && [ $splat = 0 ]; then
	mv "$TXT.new" "$TXT"
	echo "results in $TXT"
	# The plot is a convenience: without gnuplot the tables are the result.
	if command -v gnuplot >/dev/null; then
		"$(dirname "$0")/bench/plot.sh" "$TXT" || echo "no plot" >&2
	else
		echo "no plot: gnuplot is missing (apt-get install gnuplot-nox)" >&2
	fi
	exit 0
fi
mv "$TXT.new" "$BUILD/bench.failed.txt"
echo "kevent_bench did not finish, or failed: ${result:-no result line};" \
	"output in $BUILD/bench.failed.txt" >&2
exit 1

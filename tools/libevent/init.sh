#!/bin/sh
# /init of the guest that tools/libevent.sh boots (busybox sh): runs
# libevent's regression suite once per backend, or memcached with its
# tests, and powers off. What to run comes as init's arguments (the
# words after "--" on the kernel's command line):
#
#   regress BACKEND...     test/regress, the default set, on each backend
#   memcached BACKEND...   memcached on each backend: memccapable, then
#                          memcaslap with data verification
#   memcached-bench BACKEND...
#                          memcached with one worker thread on each
#                          backend, under tools/libevent/memcached-load.c
#                          at each number of connections of mc_conns,
#                          mc_reps times, the backends alternated
#
# Settings from the kernel's command line reach init as environment
# variables: regress_args (tests to run, default all), test_timeout
# (seconds per regress test), slap_time (memcaslap run time, e.g. 30s);
# for memcached-bench mc_conns (e.g. 1,2,10,100,1000), mc_reps,
# mc_time and mc_warmup (seconds), mc_profile (function globs, commas:
# ftrace's function profiler on them while each point is measured) and
# mc_profile_self=1 (each function's own time, without its children's).
#
# The host reads these lines of the console log:
#   libevent-regress: BACKEND: method M: N passed, N failed, N skipped
#   memcached: BACKEND: method M: memccapable N passed, N failed
#   memcached: BACKEND: memcaslap ops N ops/s N verify_failed N ...
#   memcached-bench: rep R backend B method M: conns N requests N ...
#                         (memcached-load's line; "failed" when it failed)
#   memcached-profile: rep R backend B conns N: cpuC FUNCTION calls/req ns/req
#   kevent-fdkey: ...     (tools/libevent/fdkey.c, before the suite)
#   kevent-ctlcount: ...  (backends kevent-count, kevent-plain-count,
#                          epoll-count: their dispatches and system calls
#                          counted by tools/libevent/ctlcount.c)
#   libevent-guest: done
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
export HOME=/root
export LD_LIBRARY_PATH=/opt/libevent/lib

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmp /tmp
mount -t tmpfs shm /dev/shm
mount -t debugfs debug /sys/kernel/debug 2>/dev/null
ip link set lo up
hostname localhost

# The environment that selects a backend: libevent takes the first one
# in its list (kevent, epoll, poll, select) that EVENT_NO<NAME> leaves.
backend_env() {
	case $1 in
	# NAME-count: backend NAME, its system calls counted
	# (tools/libevent/ctlcount.c)
	*-count) echo "$(backend_env "${1%-count}") LD_PRELOAD=/opt/libevent/lib/ctlcount.so KEVENT_CTLCOUNT=/tmp/ctlcount" ;;
	# kevent: its posted ring and kevent_submit(); kevent-plain: no ring,
	# kevent_ctl() and kevent_get_events(); kevent-ringN: a ring of N
	# slots (kevent-ring4 fills: a full ring must lose nothing)
	kevent) echo "" ;;
	kevent-plain) echo "EVENT_KEVENT_PLAIN=1" ;;
	kevent-ring[0-9]*) echo "EVENT_KEVENT_RING_ENTRIES=${1#kevent-ring}" ;;
	epoll) echo "EVENT_NOKEVENT=1" ;;
	epoll-changelist) echo "EVENT_NOKEVENT=1 EVENT_EPOLL_USE_CHANGELIST=1" ;;
	poll) echo "EVENT_NOKEVENT=1 EVENT_NOEPOLL=1" ;;
	select) echo "EVENT_NOKEVENT=1 EVENT_NOEPOLL=1 EVENT_NOPOLL=1" ;;
	*) echo "EVENT_BAD_BACKEND=$1" ;;
	esac
}

# The methods that EVENT_SHOW_METHOD's lines on stdin name ("kevent",
# "kevent (plain)", "epoll", ...), each once, on one line.
shown_method() {
	sed -n 's/.*libevent using: \([a-z]*\( ([a-z]*)\)\{0,1\}\).*/\1/p' | sort -u | xargs
}

# The method libevent really picked with that environment (not
# main/methods: that test avoids the preferred method on purpose).
method_of() {
	# shellcheck disable=SC2046 # the words are variable assignments
	env $(backend_env "$1") EVENT_SHOW_METHOD=1 /opt/libevent/bin/regress \
		--no-fork main/free_active_base 2>&1 | shown_method
}

# The sums of the lines that ctlcount.so left in /tmp/ctlcount (one per
# process), and the file emptied for the next run.
ctlcount() {
	[ -f /tmp/ctlcount ] || return 0
	echo "kevent-ctlcount: $1: $(awk '{ for (i = 1; i < NF; i += 2) s[$i] += $(i + 1) }
		END { calls = s["ctl"] + s["waits"] + s["submit"] + s["kwait"]
			printf "dispatches %d, system calls %d (%.2f a dispatch): ctl %d (entries %d: add %d remove %d modify %d), waits %d (after 0/1/2/3+ ctl calls: %d/%d/%d/%d), submit %d (changes %d), kevent_wait %d; processes %d\n",
			s["dispatches"], calls, s["dispatches"] ? calls / s["dispatches"] : 0,
			s["ctl"], s["entries"], s["add"], s["remove"], s["modify"],
			s["waits"], s["ctl0"], s["ctl1"], s["ctl2"], s["ctl3"],
			s["submit"], s["changes"], s["kwait"], NR }' /tmp/ctlcount)"
	rm -f /tmp/ctlcount
}

# The tests whose last run in a regress log failed (tinytest retries
# some itself, printing each attempt).
failed_tests() {
	awk '/^[^ :]+\/[^ :]+: / { t = $1; sub(/:$/, "", t); st[t] = "run" }
		/^ *\[.* FAILED\]$/ { st[t] = "failed" }
		END { for (t in st) if (st[t] == "failed") print t }' "$1" | sort
}

run_regress() {
	local b method out passed failed skipped total
	# Commas on the kernel's command line, spaces for regress.
	regress_args=$(echo "${regress_args:-}" | tr , ' ')
	for b in "$@"; do
		method=$(method_of "$b")
		rm -f /tmp/ctlcount
		echo "libevent-guest: regress on $b (method ${method:-none})"
		out=/tmp/regress-$b.log
		# shellcheck disable=SC2046,SC2086
		env $(backend_env "$b") /opt/libevent/bin/regress \
			--timeout "${test_timeout:-300}" ${regress_args:-} 2>&1 |
			tee "$out"
		# "N tests ok.  (S skipped)" or "B/T TESTS FAILED. (S skipped)"
		if line=$(grep -E '^[0-9]+ tests ok\.' "$out" | tail -n 1) && [ -n "$line" ]; then
			passed=$(echo "$line" | sed 's/^\([0-9]*\) tests ok.*/\1/')
			failed=0
		elif line=$(grep -E '^[0-9]+/[0-9]+ TESTS FAILED\.' "$out" | tail -n 1) && [ -n "$line" ]; then
			failed=$(echo "$line" | sed 's|^\([0-9]*\)/.*|\1|')
			total=$(echo "$line" | sed 's|^[0-9]*/\([0-9]*\) .*|\1|')
			passed=$((total - failed))
		else
			passed=0 failed=1
			line="(no summary: regress crashed)"
		fi
		skipped=$(echo "$line" | sed -n 's/.*(\([0-9]*\) skipped).*/\1/p')
		# Under TCG a test that waits a few milliseconds for something
		# may miss it: each failed test runs once more, alone, and
		# counts as passed ("retried") if it passes then.
		retried=0
		for t in $(failed_tests "$out"); do
			# shellcheck disable=SC2046
			if env $(backend_env "$b") /opt/libevent/bin/regress \
				--timeout "${test_timeout:-300}" "$t" >"$out.retry" 2>&1; then
				echo "libevent-regress: $b: passed when run again: $t"
				retried=$((retried + 1))
			else
				cat "$out.retry"
				echo "libevent-regress: $b: failed: $t"
			fi
		done
		passed=$((passed + retried)) failed=$((failed - retried))
		# A case the suite lacks: an fd number reused while its old
		# file stays open (tools/libevent/reopen.c); one more test.
		# shellcheck disable=SC2046
		if env $(backend_env "$b") /opt/libevent/bin/reopen; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "libevent-regress: $b: failed: reopen"
		fi
		echo "libevent-regress: $b: method ${method:-none}:" \
			"$passed passed, $failed failed, ${skipped:-0} skipped," \
			"$retried passed when run again"
		ctlcount "regress on $b"
	done
}

# Wait until something listens on 127.0.0.1:11211 (at most 30 s).
wait_port() {
	local i=0
	while [ $i -lt 300 ]; do
		grep -q ':2BCB 00000000:0000 0A' /proc/net/tcp 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# start_memcached BACKEND THREADS MEGABYTES [VAR=VALUE...]: Debian's
# binary, unchanged (only the library it loads is ours), on 127.0.0.1:11211
# with the backend's environment and the given one; its pid in $pid, the
# method it shows in $method. Fails, its output printed, if it does not
# come up.
start_memcached() {
	local b="$1" threads="$2" megs="$3" log="/tmp/memcached-$1.log"
	shift 3
	# shellcheck disable=SC2046
	env $(backend_env "$b") EVENT_SHOW_METHOD=1 "$@" /usr/bin/memcached \
		-u memcache -l 127.0.0.1 -p 11211 -U 0 -t "$threads" -m "$megs" \
		-c 4096 >"$log" 2>&1 &
	pid=$!
	if ! wait_port; then
		cat "$log"
		kill "$pid" 2>/dev/null
		return 1
	fi
	method=$(shown_method <"$log")
}

# Stop it, and wait until the port is free for the next backend's server.
stop_memcached() {
	kill "$pid"
	wait "$pid" 2>/dev/null
	while grep -q ':2BCB 00000000:0000 0A' /proc/net/tcp; do sleep 0.1; done
}

run_memcached() {
	local b pid method out
	for b in "$@"; do
		if ! start_memcached "$b" 2 256; then
			echo "memcached: $b: did not start"
			continue
		fi
		echo "libevent-guest: memcached on $b (method ${method:-none}), pid $pid"
		out=/tmp/memccapable-$b.log
		memccapable -h 127.0.0.1 -p 11211 2>&1 | tee "$out"
		echo "memcached: $b: method ${method:-none}: memccapable" \
			"$(grep -c ' \[pass\]' "$out") passed," \
			"$(grep -c ' \[FAIL\]' "$out") failed," \
			"$(grep -c ' \[skip\]' "$out") skipped"
		out=/tmp/memcaslap-$b.log
		memcaslap -s 127.0.0.1:11211 -t "${slap_time:-30s}" -T 2 -c 16 \
			--verify=0.1 2>&1 | tee "$out"
		echo "memcached: $b: memcaslap" \
			"ops $(sed -n 's/.*Ops: *\([0-9]*\).*/\1/p' "$out" | tail -n 1)" \
			"ops/s $(sed -n 's/.*TPS: *\([0-9]*\).*/\1/p' "$out" | tail -n 1)" \
			"verify_failed $(sed -n 's/^verify_failed: *\([0-9]*\).*/\1/p' "$out" | tail -n 1)" \
			"verify_misses $(sed -n 's/^verify_misses: *\([0-9]*\).*/\1/p' "$out" | tail -n 1)" \
			"get_misses $(sed -n 's/^get_misses: *\([0-9]*\).*/\1/p' "$out" | tail -n 1)"
		stop_memcached
		ctlcount "memcached on $b"
	done
}

# memcached-bench: for each repetition, each number of connections, each
# backend (each number of connections starting from the next one, so that
# none is always first), a fresh memcached with one worker thread under
# ctlcount.so (every backend pays the same for being counted), loaded by
# memcached-load, which reads the server's CPU clock and counters.
run_memcached_bench() {
	local rep=1 b c pid method out profile="" g
	if [ -n "${mc_profile:-}" ]; then
		profile=-f
		mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
		: >/sys/kernel/tracing/set_ftrace_filter
		# a function's time: on the CPU, its children's included
		# unless mc_profile_self=1
		echo 0 >/sys/kernel/tracing/options/sleep-time
		if [ "${mc_profile_self:-0}" = 1 ]; then
			echo 0 >/sys/kernel/tracing/options/graph-time
		else
			echo 1 >/sys/kernel/tracing/options/graph-time
		fi
		# one glob a write: one that matches nothing must not void the rest
		for g in $(echo "$mc_profile" | tr , ' '); do
			echo "$g" >>/sys/kernel/tracing/set_ftrace_filter ||
				echo "memcached-bench: no function matches $g"
		done
	fi
	while [ $rep -le "${mc_reps:-5}" ]; do
		for c in $(echo "${mc_conns:-1,2,10,100,1000}" | tr , ' '); do
			for b in "$@"; do
				rm -f /dev/shm/ctlcount
				if ! start_memcached "$b" 1 64 \
					LD_PRELOAD=/opt/libevent/lib/ctlcount.so \
					KEVENT_CTLCOUNT_LIVE=/dev/shm/ctlcount; then
					echo "memcached-bench: rep $rep backend $b: failed: memcached did not start"
					continue
				fi
				out=/tmp/memcached-load.out
				if /opt/libevent/bin/memcached-load -c "$c" \
					-t "${mc_time:-3}" -w "${mc_warmup:-1}" -p "$pid" \
					-l /dev/shm/ctlcount $profile >"$out" 2>&1; then
					echo "memcached-bench: rep $rep backend $b method ${method:-none}: $(sed -n 's/^memcached-load: //p' "$out")"
					sed -n "s/^memcached-profile: /&rep $rep backend $b conns $c: /p" "$out"
				else
					echo "memcached-bench: rep $rep backend $b conns $c: failed: $(cat "$out")"
				fi
				stop_memcached
			done
			# the next number of connections starts from the next backend
			b=$1
			shift
			set -- "$@" "$b"
		done
		rep=$((rep + 1))
	done
}

mode=${1:-regress}
[ $# -gt 0 ] && shift
case $mode in
regress)
	/opt/libevent/bin/fdkey
	run_regress "$@"
	;;
memcached) run_memcached "$@" ;;
memcached-bench) run_memcached_bench "$@" ;;
*) echo "libevent-guest: unknown mode $mode" ;;
esac
# A kernel with kmemleak: objects leaked by the run, a few seconds old,
# are reported by the kernel ("new suspected memory leaks"), which fails
# the run on the host, as in tools/initramfs/init.c.
if [ -e /sys/kernel/debug/kmemleak ]; then
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak
fi
echo "libevent-guest: done"
sync
reboot -f

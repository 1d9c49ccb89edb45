# shellcheck shell=sh
# The benchmark of tools/nginx.sh --bench, sourced by tools/nginx/init.sh
# (busybox sh, in the guest) after its conf, start, stop and used_method:
# nginx with one worker on CPU 0, wrk (Debian's 4.1.0, one thread) on
# CPU 1 asking for the 1 KiB file, for each repetition, each point and
# each method named (each point starting from the next method, so that
# none is always first). A point is a number of keep-alive connections
# (N) or of connections closed after each request (Nclose, wrk sending
# "Connection: close"). Each point starts a fresh nginx under
# tools/libevent/ctlcount.c (every method pays the same for being
# counted), warms it up with wrk for $bench_warmup seconds, then measures
# $bench_time seconds; tools/nginx/server-stat.c reads the worker's CPU
# clock and counters before and after. One line a point:
#
#   nginx-bench: rep R backend B method M: conns C requests N seconds S
#     workers 1 server_ns N user_ticks U sys_ticks K dispatches 0 ...
#     io I syscalls Y p50_us P p99_us Q errors E
#
# (the counters are the differences; errors: wrk's socket errors and
# responses other than 2xx/3xx) or "nginx-bench: rep R backend B conns C:
# failed: WHY". Settings (the kernel's command line): bench_conns
# (default 1,2,10,100,1000,10close,100close), bench_reps (5), bench_time
# (3), bench_warmup (1); bench_profile: globs of kernel functions (a
# kernel with kunit/profile.config), profiled by ftrace's function
# profiler during each measured interval, each traced function then
# printed per CPU (time on the CPU, its children's included unless
# bench_profile_self=1):
#
#   nginx-profile: rep R backend B conns C: cpuN FUNCTION calls/request ns/request

WRK=/opt/nginx/bin/wrk
COUNTERS=$RUN/ctlcount
TRACEFS=/sys/kernel/tracing

# The settings a benchmark adds to conf's nginx.conf: the worker on CPU
# 0, no limit on a connection's requests (nginx closes a keep-alive
# connection after 1000 by default, which would add accepts to the
# keep-alive points), a backlog for 1000 connections made at once.
bench_conf() {
	conf "$1" 1 on | sed -e 's/^worker_processes 1;/&\nworker_cpu_affinity 01;/' \
		-e 's/^\tkeepalive_timeout 60s;/&\n\tkeepalive_requests 1000000;/' \
		-e "s/listen 127.0.0.1:$PORT;/listen 127.0.0.1:$PORT backlog=4096;/"
}

# wrk_run CONNS SECONDS OUT: wrk on CPU 1 (the client's CPU: its work is
# in no server_ns), keep-alive or, for Nclose, a connection per request.
wrk_run() {
	local n=$1 hdr=
	case $n in
	*close) n=${n%close} hdr="Connection: close" ;;
	esac
	taskset 2 "$WRK" -t 1 -c "$n" -d "$2s" --latency ${hdr:+-H "$hdr"} \
		"http://127.0.0.1:$PORT/1k" >"$3" 2>&1
}

# wrk_fields OUT: "requests N seconds S p50_us P p99_us Q errors E" from
# wrk's report (latencies in us, ms or s; durations in ms, s or m).
wrk_fields() {
	awk 'function us(v) {
		if (v ~ /us$/) return v + 0
		if (v ~ /ms$/) return v * 1000
		if (v ~ /m$/) return v * 60000000
		return v * 1000000
	}
	/ requests in / { req = $1; d = $4; sub(/,$/, "", d); sec = us(d) / 1000000 }
	$1 == "50%" { p50 = us($2) }
	$1 == "99%" { p99 = us($2) }
	/Socket errors:/ { gsub(/[^0-9 ]/, ""); for (i = 1; i <= NF; i++) err += $i }
	/Non-2xx or 3xx responses:/ { err += $NF }
	END {
		if (req == "" || p99 == "") exit 1
		printf "requests %d seconds %.3f p50_us %.0f p99_us %.0f errors %d\n",
			req, sec, p50, p99, err
	}' "$1"
}

# stat_delta BEFORE AFTER: the counters of AFTER less BEFORE (server-stat
# lines, "name value" pairs; "workers" as it is).
stat_delta() {
	awk 'NR == 1 { for (i = 1; i < NF; i += 2) b[$i] = $(i + 1); next }
	{ for (i = 1; i < NF; i += 2)
		printf "%s%s %s", (i > 1 ? " " : ""), $i,
			($i == "workers" ? $(i + 1) : $(i + 1) - b[$i])
	  print "" }' "$1" "$2"
}

# bench_point REP METHOD CONNS: one measurement, its line printed.
bench_point() {
	# shellcheck disable=SC2034 # read by start (init.sh)
	method=$2
	tag="nginx-bench: rep $1 backend $2"
	bench_conf "$2" >"$RUN/nginx.conf"
	rm -f "$RUN/error.log" "$RUN/stderr" "$COUNTERS"
	export LD_PRELOAD=/opt/nginx/lib/ctlcount.so KEVENT_CTLCOUNT_LIVE="$COUNTERS" \
		KEVENT_CTLCOUNT_INHERIT=1
	start
	rc=$?
	unset LD_PRELOAD KEVENT_CTLCOUNT_LIVE KEVENT_CTLCOUNT_INHERIT
	if [ $rc != 0 ]; then
		echo "$tag conns $3: failed: nginx did not start: $(cat "$RUN/stderr" "$RUN/error.log" 2>/dev/null)"
		return
	fi
	master=$(cat "$RUN/nginx.pid")
	wrk_run "$3" "${bench_warmup:-1}" "$RUN/wrk.warmup"
	/opt/nginx/bin/server-stat "$master" "$COUNTERS" >"$RUN/stat.before"
	# writing 1 after 0 clears the profiler's counts
	[ -n "${bench_profile:-}" ] && echo 1 >$TRACEFS/function_profile_enabled
	wrk_run "$3" "${bench_time:-3}" "$RUN/wrk.out"
	[ -n "${bench_profile:-}" ] && echo 0 >$TRACEFS/function_profile_enabled
	/opt/nginx/bin/server-stat "$master" "$COUNTERS" >"$RUN/stat.after"
	stop
	used=$(used_method)
	if [ "$used" != "$(want_method "$2")" ] ||
		grep -qE '\[(alert|crit|emerg|error)\]|refused' "$RUN/error.log"; then
		echo "$tag conns $3: failed: method ${used:-none}: $(grep -E '\[(alert|crit|emerg|error|warn)\]' "$RUN/error.log" | head -n 3)"
	elif ! wrk=$(wrk_fields "$RUN/wrk.out"); then
		echo "$tag conns $3: failed: wrk: $(cat "$RUN/wrk.out")"
	elif ! stat=$(stat_delta "$RUN/stat.before" "$RUN/stat.after"); then
		echo "$tag conns $3: failed: server-stat"
	else
		echo "$tag method $used: conns $3 ${wrk% p50_us*} $stat p50_us${wrk#* p50_us}"
		case $wrk in
		*" errors 0") ;;
		*) echo "$tag conns $3: wrk: $(grep -E 'Socket errors|Non-2xx' "$RUN/wrk.out" | tr -s ' ')" ;;
		esac
		[ -n "${bench_profile:-}" ] &&
			profile_print "rep $1 backend $2 conns $3:" "${wrk#requests }"
	fi
}

# profile_setup: ftrace's function profiler on the functions of
# $bench_profile, one glob a write (one that matches nothing must not void
# the rest); a function's time is its time on the CPU.
profile_setup() {
	mount -t tracefs tracefs $TRACEFS 2>/dev/null
	: >$TRACEFS/set_ftrace_filter
	echo 0 >$TRACEFS/options/sleep-time
	echo $((1 - ${bench_profile_self:-0})) >$TRACEFS/options/graph-time
	for g in $(echo "$bench_profile" | tr , ' '); do
		echo "$g" >>$TRACEFS/set_ftrace_filter ||
			echo "nginx-bench: no function matches $g"
	done
	echo 0 >$TRACEFS/function_profile_enabled
}

# profile_print POINT REQUESTS: the profiler's counts per request, each
# line "nginx-profile: POINT cpuN ..." (REQUESTS: a number first).
profile_print() {
	for f in $TRACEFS/trace_stat/function*; do
		awk -v cpu="${f##*function}" -v point="$1" -v req="$2" '
		BEGIN { req += 0 }
		$4 == "us" && req > 0 {
			printf "nginx-profile: %s cpu%s %s %.3f %.0f\n",
				point, cpu, $1, $2 / req, $3 * 1000 / req
		}' "$f"
	done
}

run_bench() {
	[ -n "${bench_profile:-}" ] && profile_setup
	ulimit -n 16384
	echo 1 >/proc/sys/net/ipv4/tcp_tw_reuse
	echo "1024 65000" >/proc/sys/net/ipv4/ip_local_port_range
	rep=1
	while [ $rep -le "${bench_reps:-5}" ]; do
		for c in $(echo "${bench_conns:-1,2,10,100,1000,10close,100close}" | tr , ' '); do
			for m in "$@"; do
				bench_point $rep "$m" "$c"
			done
			# the next point starts from the next method
			m=$1
			shift
			set -- "$@" "$m"
		done
		rep=$((rep + 1))
	done
}

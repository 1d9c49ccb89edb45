#!/bin/sh
# /init of the guest that tools/nginx.sh boots (busybox sh): nginx, with
# the event module of tools/nginx/*.patch, serving files on each method
# named after "--" on the kernel's command line, then power off:
#
#   kevent           "use kevent": the posted ring and kevent_submit()
#   kevent-plain     "use kevent; kevent_ring 0": kevent_ctl() for the
#                    changes, kevent_get_events() to wait
#   kevent-fallback  "use kevent" where kevent_probe() says no (/proc is
#                    not mounted while nginx starts): nginx must warn and
#                    serve on epoll, calling no kevent system call
#   kevent-nomemlock "use kevent" with RLIMIT_MEMLOCK 0, which refuses
#                    the workers (user nobody) their rings: they must
#                    warn and serve on kevent without one
#   epoll            "use epoll", for comparison
#
# With one worker and with two, sendfile on and off (the fallbacks: two
# workers, sendfile on): files of 0 B,
# 1 KiB, 100 KiB and 10 MiB asked for by tools/nginx/http-check.c on
# keep-alive connections and on connections closed after one request,
# pipelined, on 1000 connections open at once (100 after a method's
# first configuration), by a client that resets
# the connection mid-response and by a slow reader; every response's
# status, length and body checked against the file. error.log must name
# the method and hold no alert.
#
# With two workers, the wakeups of the workers per accepted connection
# are counted (their voluntary context switches over 200 connections made
# one after the other): with the listening socket registered exclusively
# (EPOLLEXCLUSIVE, KEVENT_REQ_EXCLUSIVE) one worker wakes for each.
#
# The host reads these lines of the console log:
#   nginx-check: METHOD: FAILED: WHAT
#   http-check: SCENARIO: ok|FAILED: request N (GET /FILE): WHY
#   nginx-wakeups: METHOD: workers 2: N connections, W wakeups a connection (...)
#   nginx: METHOD: method M: N passed, N failed
#   nginx-bench: ...      (with "bench" first: tools/nginx/bench.sh)
#   nginx-guest: done
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
export HOME=/root

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
ip link set lo up
hostname localhost

NGINX=/opt/nginx/sbin/nginx
RUN=/tmp/nginx
WWW=$RUN/www
PORT=8080

mkdir -p "$WWW"
: >"$WWW/empty"
head -c 1024 /dev/urandom >"$WWW/1k"
head -c 102400 /dev/urandom >"$WWW/100k"
head -c 10485760 /dev/urandom >"$WWW/10m"

# conf METHOD WORKERS SENDFILE: nginx.conf for the run.
conf() {
	case $1 in
	kevent | kevent-fallback | kevent-nomemlock) use="use kevent;" ;;
	kevent-plain) use="use kevent; kevent_ring 0;" ;;
	*) use="use $1;" ;;
	esac
	cat <<EOF
worker_processes $2;
worker_rlimit_nofile 4096;
master_process on;
daemon on;
user nobody nogroup;
error_log $RUN/error.log notice;
pid $RUN/nginx.pid;
events { $use worker_connections 2048; }
http {
	access_log off;
	sendfile $3;
	keepalive_timeout 60s;
	client_body_temp_path $RUN/client_body;
	proxy_temp_path $RUN/proxy;
	fastcgi_temp_path $RUN/fastcgi;
	uwsgi_temp_path $RUN/uwsgi;
	scgi_temp_path $RUN/scgi;
	types { application/octet-stream bin; }
	default_type application/octet-stream;
	server {
		listen 127.0.0.1:$PORT;
		root $WWW;
	}
}
EOF
}

pass=0 fail=0
# check WHAT COMMAND...: count the command's success.
check() {
	local name=$1
	shift
	if "$@"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "nginx-check: $method: FAILED: $name"
	fi
}

# fetch FILE N: N requests for FILE, each body compared with the file.
fetch() {
	i=0
	while [ $i -lt "$2" ]; do
		wget -q -O "$RUN/got.$1.$i" "http://127.0.0.1:$PORT/$1" &&
			cmp -s "$RUN/got.$1.$i" "$WWW/$1" || return 1
		rm -f "$RUN/got.$1.$i"
		i=$((i + 1))
	done
}

# http_check CONNS: tools/nginx/http-check.c's scenarios, each a check,
# CONNS connections open at once.
http_check() {
	/opt/nginx/bin/http-check $PORT "$WWW" "$1" 10m empty 1k 100k >"$RUN/http-check.out"
	while read -r line; do
		case $line in
		"http-check: "*": ok "*)
			pass=$((pass + 1))
			echo "nginx-time: $method: $what: ${line#http-check: }" ;;
		"http-check: "*": FAILED: "*)
			fail=$((fail + 1))
			echo "nginx-check: $method: $what: ${line#http-check: }" ;;
		esac
	done <"$RUN/http-check.out"
	grep -q '^http-check: [0-9]* passed, [0-9]* failed$' "$RUN/http-check.out" ||
		check "$what: http-check finished" false
}

# start: nginx with $RUN/nginx.conf; for kevent-fallback without /proc,
# which kevent_probe() reads.
start() {
	rm -f "$RUN/nginx.pid"
	[ "$method" = kevent-fallback ] && umount /proc
	if [ "$method" = kevent-nomemlock ]; then
		(ulimit -l 0 && exec "$NGINX" -p "$RUN" -c "$RUN/nginx.conf" 2>>"$RUN/stderr")
	else
		"$NGINX" -p "$RUN" -c "$RUN/nginx.conf" 2>>"$RUN/stderr"
	fi
	rc=$?
	[ "$method" = kevent-fallback ] && mount -t proc proc /proc
	[ $rc = 0 ] && [ -s "$RUN/nginx.pid" ]
}

stop() {
	pid=$(cat "$RUN/nginx.pid" 2>/dev/null) || return 1
	kill -QUIT "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && { kill -9 "$pid"; return 1; }
		sleep 0.1
	done
}

# The voluntary context switches of the workers (the children of the
# master), one line "PID COUNT" each.
worker_switches() {
	master=$(cat "$RUN/nginx.pid")
	for st in /proc/[0-9]*/stat; do
		read -r pid _ _ ppid _ <"$st" 2>/dev/null || continue
		[ "$ppid" = "$master" ] || continue
		echo "$pid $(sed -n 's/^voluntary_ctxt_switches:[^0-9]*//p' "/proc/$pid/status")"
	done
}

# wakeups N: N connections one after the other (a request each, for the
# empty file); how often the workers slept and woke per connection.
wakeups() {
	worker_switches >"$RUN/sw.before"
	fetch empty "$1" || return 1
	worker_switches >"$RUN/sw.after"
	awk -v n="$1" 'NR == FNR { b[$1] = $2; next }
		{ d = $2 - b[$1]; t += d; each = each " " d }
		END { printf "%d connections, %.2f wakeups a connection (each worker:%s)\n", n, t / n, each }' \
		"$RUN/sw.before" "$RUN/sw.after"
}

# The event method error.log names, and what it must name.
used_method() {
	sed -n 's/.*using the "\([a-z]*\)" event method.*/\1/p' "$RUN/error.log" | tail -n 1
}
want_method() {
	case $1 in
	kevent | kevent-plain | kevent-nomemlock) echo kevent ;;
	kevent-fallback) echo epoll ;;
	*) echo "$1" ;;
	esac
}

# The configurations a method runs in, "WORKERS:SENDFILE" each: all four
# for the serving methods, one for the fallbacks, whose serving is
# epoll's and kevent-plain's.
configs() {
	case $1 in
	kevent-fallback | kevent-nomemlock) echo 2:on ;;
	*) echo 1:on 1:off 2:on 2:off ;;
	esac
}

# "bench METHOD...": tools/nginx/bench.sh's benchmark instead of the
# checks.
if [ "${1:-}" = bench ]; then
	shift
	. /opt/nginx/bin/bench.sh
	run_bench "$@"
	set --
fi

for method in "$@"; do
	pass=0 fail=0 t0=$(date +%s) conns=1000
	for config in $(configs "$method"); do
		workers=${config%:*} sendfile=${config#*:}
		rm -f "$RUN/error.log" "$RUN/stderr"
		conf "$method" $workers $sendfile >"$RUN/nginx.conf"
		what="workers $workers sendfile $sendfile"
		if ! start; then
			check "$what: nginx started" false
			cat "$RUN/stderr" "$RUN/error.log" 2>/dev/null
			continue
		fi
		http_check $conns
		conns=100	# 1000 once a method: 10-30 s under TCG
		if [ $workers = 2 ] && [ $sendfile = on ]; then
			w=$(wakeups 200) || check "$what: 200 connections for the wakeups" false
			echo "nginx-wakeups: $method: workers 2: $w"
		fi
		check "$what: stopped" stop
		used=$(used_method)
		check "$what: method $used, not $(want_method "$method")" \
			[ "$used" = "$(want_method "$method")" ]
		if [ "$method" = kevent-fallback ]; then
			# before error.log is open: on stderr
			check "$what: the fallback was logged" \
				grep -q 'kevent is not available, using epoll' "$RUN/stderr"
		fi
		if [ "$method" = kevent-nomemlock ]; then
			check "$what: the ring's refusal was logged" \
				grep -q 'kevent ring of 512 slots refused, using kevent without a ring' "$RUN/error.log"
		fi
		if grep -E '\[(alert|crit|emerg|error)\]' "$RUN/error.log"; then
			check "$what: error.log has no alert" false
		fi
	done
	echo "nginx: $method: method $used: $pass passed, $fail failed ($(($(date +%s) - t0)) s)"
done

echo "nginx-guest: done"
sync
reboot -f

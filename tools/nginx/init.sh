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
# Each with one worker and with two. Files of 0 B, 1 KiB, 100 KiB and
# 10 MiB, with sendfile on and off, each fetched several times, one at a
# time and ten at once (busybox wget: a connection a request), compared
# with the file; error.log must name the method and hold no alert.
#
# The host reads these lines of the console log:
#   nginx-check: METHOD: ok|FAILED: WHAT
#   nginx: METHOD: method M: N passed, N failed
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
FILES="empty 1k 100k 10m"

# conf METHOD WORKERS SENDFILE: nginx.conf for the run.
conf() {
	case $1 in
	kevent | kevent-fallback | kevent-nomemlock) use="use kevent;" ;;
	kevent-plain) use="use kevent; kevent_ring 0;" ;;
	*) use="use $1;" ;;
	esac
	cat <<EOF
worker_processes $2;
master_process on;
daemon on;
user nobody nogroup;
error_log $RUN/error.log notice;
pid $RUN/nginx.pid;
events { $use worker_connections 1024; }
http {
	access_log off;
	sendfile $3;
	keepalive_timeout 5s;
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

# fetch_parallel FILE N: N requests at once.
fetch_parallel() {
	i=0 pids=
	while [ $i -lt "$2" ]; do
		wget -q -O "$RUN/par.$1.$i" "http://127.0.0.1:$PORT/$1" &
		pids="$pids $!"
		i=$((i + 1))
	done
	ok=1
	for p in $pids; do wait "$p" || ok=0; done
	i=0
	while [ $i -lt "$2" ]; do
		cmp -s "$RUN/par.$1.$i" "$WWW/$1" || ok=0
		rm -f "$RUN/par.$1.$i"
		i=$((i + 1))
	done
	[ $ok = 1 ]
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

for method in "$@"; do
	pass=0 fail=0 t0=$(date +%s)
	for workers in 1 2; do
		for sendfile in on off; do
			rm -f "$RUN/error.log" "$RUN/stderr"
			conf "$method" $workers $sendfile >"$RUN/nginx.conf"
			what="workers $workers sendfile $sendfile"
			if ! start; then
				check "$what: nginx started" false
				cat "$RUN/stderr" "$RUN/error.log" 2>/dev/null
				continue
			fi
			for f in $FILES; do
				n=10 par=10
				[ "$f" = 10m ] && n=2 par=3
				check "$what: $f, $n one at a time" fetch "$f" $n
				check "$what: $f, $par at once" fetch_parallel "$f" $par
			done
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
	done
	echo "nginx: $method: method $used: $pass passed, $fail failed ($(($(date +%s) - t0)) s)"
done

echo "nginx-guest: done"
sync
reboot -f

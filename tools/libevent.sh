#!/bin/bash
# libevent on kevent: Debian's libevent source with the kevent backend of
# tools/libevent/*.patch, built against the series' UAPI headers, and run
# in QEMU (TCG, never KVM): libevent's regression suite once per backend
# in one boot, or Debian's memcached, unmodified, on the patched library:
# its tests, or a benchmark of its backends.
#
#   tools/libevent.sh              regress on kevent, epoll and poll, on the
#                                  test kernel (build/kunit); log in
#                                  $BUILD/libevent.log, result "libevent"
#   tools/libevent.sh --memcached  memccapable and memcaslap against
#                                  memcached on kevent and on epoll, on the
#                                  production kernel; log in
#                                  $BUILD/libevent-memcached.log
#   tools/libevent.sh --memcached-bench
#                                  memcached with one worker thread on
#                                  kevent, kevent-plain and epoll under
#                                  tools/libevent/memcached-load.c, the
#                                  backends alternated in one boot of the
#                                  production kernel, counting
#                                  instructions (ICOUNT, default 3); log
#                                  in $BUILD/memcached-bench.log, table
#                                  in $BUILD/memcached-bench.txt
#
# Environment: BACKENDS (default "kevent epoll poll"; memcached: "kevent
# epoll"; also "kevent-plain": the backend without its ring, on
# kevent_ctl() and kevent_get_events(); "kevent-ringN": with a ring of N
# slots ("kevent-ring4" fills); "select"; and "kevent-count", "kevent-plain-count"
# or "epoll-count": the backend with its dispatches and system calls
# counted by tools/libevent/ctlcount.c), KERNEL (a bzImage),
# REGRESS_ARGS (tests to run; default the default set but for
# tools/libevent/known-failures), TEST_TIMEOUT (seconds per regress test,
# default 300), SLAP_TIME (memcaslap's run time, default 30s),
# BOOT_TIMEOUT (seconds, default 5400), ICOUNT (a number S: QEMU's
# -icount shift=S,sleep=off), UAPI (the UAPI headers, default
# $KDIR/usr/include), GEN_INIT_CPIO; for --memcached-bench MC_CONNS
# (connections, default 1,2,10,100,1000), MC_REPS (repetitions, default
# 5), MC_TIME and MC_WARMUP (seconds of guest time measured and before,
# default 3 and 1).
#
# The regress run fails when a backend fails a test, when kevent was not
# the method used on the kevent run, when the summary is missing, or when
# the kernel printed a splat. Everything is built under $BUILD/libevent.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-guest.sh"

mode=regress
case ${1:-} in
--memcached) mode=memcached ;;
--memcached-bench) mode=memcached-bench ;;
"") ;;
*) die "usage: $0 [--memcached | --memcached-bench]" ;;
esac

# What this script needs beyond the kernel build's packages: Debian's
# libevent source (apt-get source needs dpkg-dev), rebuilt with its
# regress suite (autoreconf; OpenSSL and zlib for the ssl and zlib tests),
# busybox for the guest's shell; memccapable and memcaslap for
# --memcached. Installed here, not by CI, which does not run this script.
pkgs=(dpkg-dev patch autoconf automake libtool pkg-config libssl-dev
	zlib1g-dev busybox-static)
[ $mode = memcached ] && pkgs+=(libmemcached-tools)
apt_install "${pkgs[@]}" >&2

LEV=$BUILD/libevent
SRC=$LEV/src		# Debian's source, patched
OBJ=$LEV/obj		# the build
KEVROOT=$LEV/libkevent-root	# libkevent, installed
HDR=${UAPI:-$KDIR/usr/include}	# the series' UAPI headers
PATCHES=("$ROOT"/tools/libevent/*.patch)
if [ $mode = regress ]; then
	backends=${BACKENDS:-kevent epoll poll}
	kernel=${KERNEL:-$BZIMAGE}
	log=$BUILD/libevent.log
elif [ $mode = memcached ]; then
	backends=${BACKENDS:-kevent epoll}
	kernel=${KERNEL:-$BUILD/production/arch/x86/boot/bzImage}
	log=$BUILD/libevent-memcached.log
else
	backends=${BACKENDS:-kevent kevent-plain epoll}
	kernel=${KERNEL:-$BUILD/production/arch/x86/boot/bzImage}
	log=$BUILD/memcached-bench.log
	# instructions, not the host's load: server_ns is 2^ICOUNT ns each
	ICOUNT=${ICOUNT:-3}
fi
mc_conns=${MC_CONNS:-1,2,10,100,1000} mc_reps=${MC_REPS:-5}
[ -f "$kernel" ] || die "no kernel $kernel; build it first (tools/kunit.sh)"
[ $mode = regress ] && rm -f "$RESULTS/libevent"

# Fetch, patch and build, again only when the patches, libkevent or the
# series' UAPI header changed (kevent_inputs_sum).
build_libevent() {
	local stamp sum
	sum=$(kevent_inputs_sum "${PATCHES[@]}")
	stamp=$LEV/stamp
	if [ "$(cat "$stamp" 2>/dev/null)" = "$sum" ] && [ -x "$OBJ/test/.libs/regress" ]; then
		return
	fi
	rm -rf "$SRC" "$OBJ" "$LEV/fetch"
	mkdir -p "$OBJ"
	log "fetching Debian's libevent source"
	apt_source libevent "$LEV/fetch"
	mv "$LEV/fetch"/libevent-*/ "$SRC"
	local p
	for p in "${PATCHES[@]}"; do
		log "applying $(basename "$p")"
		patch -d "$SRC" -p1 --quiet <"$p"
	done
	log "building libevent and its regress suite in $OBJ"
	(cd "$SRC" && autoreconf -fi) >"$LEV/autoreconf.log" 2>&1 ||
		die "autoreconf failed: $LEV/autoreconf.log"
	# -isystem: the series' headers (linux/kevent.h, the system call
	# numbers), not the host's older ones; and libkevent's.
	(cd "$OBJ" && "$SRC/configure" \
		CPPFLAGS="-isystem $HDR -I$KEVROOT/opt/libevent/include" \
		LDFLAGS="-L$KEVROOT/opt/libevent/lib" \
		--disable-samples --disable-doxygen-html) >"$LEV/configure.log" 2>&1 ||
		die "configure failed: $LEV/configure.log"
	grep -q '^#define HAVE_LINUX_KEVENT 1' "$OBJ/config.h" ||
		die "configure found no libkevent in $KEVROOT"
	make -s -C "$OBJ" -j"$JOBS" >"$LEV/make.log" 2>&1 &&
		make -s -C "$OBJ" -j"$JOBS" test/regress >>"$LEV/make.log" 2>&1 ||
		die "build failed: $LEV/make.log"
	echo "$sum" >"$stamp"
}

# Debian's memcached package, unpacked, not installed: no service starts
# on the host. memccapable and memcaslap come installed
# (libmemcached-tools, above).
get_memcached() {
	[ -x "$LEV/memcached/usr/bin/memcached" ] && return
	rm -rf "$LEV/memcached" "$LEV/deb"
	mkdir -p "$LEV/deb"
	(cd "$LEV/deb" && apt-get download memcached)
	dpkg-deb -x "$LEV"/deb/memcached_*.deb "$LEV/memcached"
}

# The initramfs: busybox, the programs, the libraries they load (ldd;
# ours, libevent's and libkevent's, in /opt/libevent/lib), small /etc
# files. gen_init_cpio makes device nodes without root.
LIST=$LEV/initramfs.list
# shellcheck disable=SC2034 # read by add_prog (lib-guest.sh)
GUEST_LD_PATH=$OBJ/.libs:$KEVROOT/opt/libevent/lib
# shellcheck disable=SC2034
GUEST_OWN_LIBS="$OBJ/.libs $KEVROOT"

make_initramfs() {
	local lib
	cpio_begin "$LIST" "$LEV/etc"
	busybox_skeleton "$ROOT/tools/libevent/init.sh"
	for lib in "$OBJ"/.libs/lib*.so.*; do
		[ -L "$lib" ] && [ "${lib##*.so.}" != 7 ] && continue
		add_file "$lib" "/opt/libevent/lib/$(basename "$lib")" 0644
	done
	add_file "$KEVROOT/opt/libevent/lib/libkevent.so.0" \
		/opt/libevent/lib/libkevent.so.0 0644
	add_prog "$OBJ/test/.libs/regress" /opt/libevent/bin/regress
	gcc -O2 -Wall -Wextra -I"$SRC/include" -I"$OBJ/include" \
		-o "$LEV/reopen" "$ROOT/tools/libevent/reopen.c" -L"$OBJ/.libs" -levent \
		-Wl,-rpath-link,"$KEVROOT/opt/libevent/lib"
	add_prog "$LEV/reopen" /opt/libevent/bin/reopen
	# What the fd-number key means after close() and dup(), beside epoll,
	# on libkevent (install_libkevent built libkevent.a there).
	gcc -static -O2 -Wall -Wextra -I"$LEV/libkevent/gen" \
		-I"$ROOT/tools/lib/kevent/include" -o "$LEV/fdkey" \
		"$ROOT/tools/libevent/fdkey.c" "$LEV/libkevent/libkevent.a"
	add_file "$LEV/fdkey" /opt/libevent/bin/fdkey
	# For the "kevent-count" backend.
	gcc -shared -fPIC -O2 -Wall -Wextra -isystem "$HDR" \
		-o "$LEV/ctlcount.so" "$ROOT/tools/libevent/ctlcount.c"
	add_file "$LEV/ctlcount.so" /opt/libevent/lib/ctlcount.so 0644
	if [ $mode = memcached ]; then
		add_prog "$LEV/memcached/usr/bin/memcached" /usr/bin/memcached
		add_prog "$(command -v memccapable)" /usr/bin/memccapable
		add_prog "$(command -v memcaslap)" /usr/bin/memcaslap
	elif [ $mode = memcached-bench ]; then
		add_prog "$LEV/memcached/usr/bin/memcached" /usr/bin/memcached
		gcc -static -O2 -Wall -Wextra -I"$ROOT/tools/libevent" \
			-o "$LEV/memcached-load" "$ROOT/tools/libevent/memcached-load.c"
		add_file "$LEV/memcached-load" /opt/libevent/bin/memcached-load
	fi
	# What the resolver and the tests read: dns and the http tests' fake
	# servers are on 127.0.0.1; memcached runs as user memcache.
	add_etc hosts $'127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback'
	add_etc resolv.conf 'nameserver 127.0.0.1'
	add_etc nsswitch.conf $'passwd: files\ngroup: files\nhosts: files dns\nservices: files\nprotocols: files'
	add_etc passwd $'root:x:0:0:root:/root:/bin/sh\nmemcache:x:100:100:memcached:/nonexistent:/bin/false'
	add_etc group $'root:x:0:\nmemcache:x:100:'
	add_file /etc/services /etc/services 0644
	add_file /etc/protocols /etc/protocols 0644
	cpio_pack "$LEV/initramfs.cpio"
}

guest_prepare
# libkevent, which the backend is written on, installed under $KEVROOT as
# it is in the guest (/opt/libevent).
install_libkevent "$LEV/libkevent" /opt/libevent "$KEVROOT"
build_libevent
[ $mode != regress ] && get_memcached
make_initramfs

# Init's arguments after "--"; its settings as environment variables.
cmdline="console=ttyS0 kunit.enable=0 panic=-1"
cmdline+=" test_timeout=${TEST_TIMEOUT:-300} slap_time=${SLAP_TIME:-30s}"
cmdline+=" mc_conns=$mc_conns mc_reps=$mc_reps"
cmdline+=" mc_time=${MC_TIME:-3} mc_warmup=${MC_WARMUP:-1}"
[ -n "${MC_PROFILE:-}" ] && cmdline+=" mc_profile=${MC_PROFILE// /,} mc_profile_self=${MC_PROFILE_SELF:-0}"
# The tests of tools/libevent/known-failures are skipped (":NAME").
regress_args=${REGRESS_ARGS:-$(sed -n 's/^\([^#].*\)/:\1/p' "$ROOT/tools/libevent/known-failures" | xargs)}
[ -n "$regress_args" ] && cmdline+=" regress_args=${regress_args// /,}"
cmdline+=" -- $mode $backends"
# ICOUNT=S: QEMU counts instructions (-icount shift=S,sleep=off, through
# qemu_boot's QEMU_ICOUNT), so that the guest's clocks, and memcaslap's
# ops/s, do not depend on what else the host runs.
if [ -n "${ICOUNT:-}" ]; then
	export QEMU_ICOUNT=$ICOUNT
	QEMU_MACHINE+=", -icount shift=$ICOUNT,sleep=off"
fi
log "booting $kernel ($QEMU_MACHINE; console log: $log)"
qemu_boot "$kernel" "$LEV/initramfs.cpio" "$cmdline" "$log" "${BOOT_TIMEOUT:-5400}" >&2 || true

splat=0
guest_log_ok "$log" 'libevent-guest: done' || splat=1

grep -aE '^kevent-(fdkey|ctlcount): ' "$log" || true
# The method a kevent backend of init.sh must show.
kevent_method() {
	case $1 in
	kevent-plain*) echo "kevent (plain)" ;;
	*) echo kevent ;;
	esac
}

# memcached-bench: every point of every backend measured, kevent used
# where named; the table of medians.
if [ $mode = memcached-bench ]; then
	bad=$splat
	for b in $backends; do
		[[ $b == kevent* ]] || continue
		grep -aE "^memcached-bench: rep [0-9]+ backend $b method " "$log" >"$LEV/result" || true
		if grep -vqF "method $(kevent_method "$b"):" "$LEV/result"; then
			echo "memcached-bench: $b: the $(kevent_method "$b") backend was not used" >&2
			bad=1
		fi
	done
	bench_verdict memcached-bench "$log" "$backends" "$mc_conns" "$mc_reps" || bad=1
	[ $bad = 0 ]
	exit
fi

# memcached: every backend must have answered, memccapable found nothing
# wrong and memcaslap no bad data.
if [ $mode = memcached ]; then
	bad=$splat
	for b in $backends; do
		grep -aE "^memcached: $b: " "$log" | tail -n 2 >"$LEV/result" || true
		cat "$LEV/result"
		grep -q " memccapable [1-9][0-9]* passed, 0 failed" "$LEV/result" &&
			grep -q " verify_failed 0 " "$LEV/result" || {
			echo "memcached: $b: failed" >&2
			bad=1
		}
		if [[ $b == kevent* ]] && ! grep -qF "method $(kevent_method "$b"):" "$LEV/result"; then
			echo "memcached: $b: the kevent backend was not used" >&2
			bad=1
		fi
	done
	[ $bad = 0 ]
	exit
fi

# One line per backend; the kevent run must really have used kevent.
passed=0 failed=$splat
for b in $backends; do
	guest_result "$log" "libevent-regress: $b: method " || continue
	grep -aE "^libevent-regress: $b: (failed|passed when run again): " "$log" || true
	if [[ $b == kevent* && $GUEST_LINE != *"method $(kevent_method "$b"):"* ]]; then
		echo "libevent-regress: $b: the $(kevent_method "$b") backend was not used" >&2
		failed=$((failed + 1))
	fi
done
report libevent "$passed" "$failed"
[ "$failed" = 0 ]

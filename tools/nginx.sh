#!/bin/bash
# nginx on kevent: Debian's nginx source with the event module of
# tools/nginx/*.patch (src/event/modules/ngx_kevent_module.c, "use
# kevent;"), built on libkevent (tools/lib/kevent) against the series'
# UAPI headers, and run in QEMU (TCG, never KVM) on the test kernel
# (build/kunit): tools/nginx/init.sh serves files on each method, and
# tools/nginx/http-check.c asks for them in every way a server meets and
# checks every response.
#
#   tools/nginx.sh          log in $BUILD/nginx.log, result "nginx"
#   tools/nginx.sh --bench  the benchmark of tools/nginx/bench.sh: nginx
#                           (one worker) on each method, loaded by wrk,
#                           on the production kernel counting
#                           instructions; log in $BUILD/nginx-bench.log,
#                           table in $BUILD/nginx-bench.txt
#
# Environment: METHODS (default "kevent kevent-plain kevent-fallback
# kevent-nomemlock epoll"; for --bench "kevent kevent-plain epoll"; see
# tools/nginx/init.sh), KERNEL (a bzImage; for --bench default
# $BUILD/production's, tools/build-kernel.sh production), UAPI (the UAPI
# headers, default $KDIR/usr/include), BOOT_TIMEOUT (seconds, default
# 1800), GEN_INIT_CPIO; for --bench BENCH_CONNS (default
# 1,2,10,100,1000,10close,100close), BENCH_REPS (5), BENCH_TIME (3),
# BENCH_WARMUP (1), ICOUNT (3: -icount shift=3,sleep=off, 8 ns an
# instruction, so that the guest's clocks do not depend on the host),
# BENCH_PROFILE (globs of kernel functions to profile, on the profiling
# kernel, build/profile, which is then the default: its lines go to
# $BUILD/nginx-profile.txt), BENCH_PROFILE_SELF (1: a function's own
# time, its children's not included).
#
# It fails when a check of a method fails, when a method's summary is
# missing, when a point of the benchmark was not measured or had errors,
# or when the kernel printed a splat. Everything is built under
# $BUILD/nginx.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-guest.sh"

mode=check
case ${1:-} in
"") ;;
--bench) mode=bench ;;
*) die "usage: $0 [--bench]" ;;
esac

# What this script needs beyond the kernel build's packages: Debian's
# nginx source (apt-get source needs dpkg-dev), busybox for the guest;
# for the benchmark wrk's libraries (its own package and LuaJIT's are
# unpacked, not installed). nginx is configured without the modules that
# need PCRE or zlib.
apt_install dpkg-dev patch busybox-static >&2
[ $mode = bench ] && apt_install libssl3 >&2

NGX=$BUILD/nginx
SRC=$NGX/src		# Debian's source, patched
OBJ=$NGX/obj		# the build
KEVROOT=$NGX/libkevent-root	# libkevent, installed as in the guest
HDR=${UAPI:-$KDIR/usr/include}	# the series' UAPI headers
PATCHES=("$ROOT"/tools/nginx/*.patch)
WRKROOT=$NGX/wrk		# Debian's wrk and LuaJIT, unpacked
if [ $mode = bench ]; then
	methods=${METHODS:-kevent kevent-plain epoll}
	kind=production
	[ -n "${BENCH_PROFILE:-}" ] && kind=profile
	kernel=${KERNEL:-$BUILD/$kind/arch/x86/boot/bzImage}
	log=$BUILD/nginx-bench.log
	[ -f "$kernel" ] || die "no kernel $kernel; build it first (tools/build-kernel.sh $kind)"
else
	methods=${METHODS:-kevent kevent-plain kevent-fallback kevent-nomemlock epoll}
	kernel=${KERNEL:-$BZIMAGE}
	log=$BUILD/nginx.log
	[ -f "$kernel" ] || die "no kernel $kernel; build it first (tools/kunit.sh)"
	rm -f "$RESULTS/nginx"
fi

# Fetch, patch and build, again only when the patches, libkevent or the
# series' UAPI header changed (kevent_inputs_sum).
build_nginx() {
	local sum p k=$KEVROOT/opt/nginx
	sum=$(kevent_inputs_sum "${PATCHES[@]}")
	if [ "$(cat "$NGX/stamp" 2>/dev/null)" = "$sum" ] && [ -x "$OBJ/nginx" ]; then
		return
	fi
	rm -rf "$SRC" "$OBJ" "$NGX/fetch"
	log "fetching Debian's nginx source"
	apt_source nginx "$NGX/fetch"
	mv "$NGX"/fetch/nginx-*/ "$SRC"
	for p in "${PATCHES[@]}"; do
		log "applying $(basename "$p")"
		patch -d "$SRC" -p1 --quiet <"$p"
	done
	log "building nginx in $OBJ"
	# -isystem: the series' headers, not the host's older ones; the
	# guest finds libkevent in /opt/nginx/lib.
	(cd "$SRC" && ./configure --prefix=/opt/nginx --builddir="$OBJ" \
		--with-cc-opt="-isystem $HDR -I$k/include" \
		--with-ld-opt="-L$k/lib -Wl,-rpath,/opt/nginx/lib" \
		--without-http_rewrite_module --without-http_gzip_module) \
		>"$NGX/configure.log" 2>&1 ||
		die "configure failed: $NGX/configure.log"
	grep -q '^#define NGX_HAVE_LINUX_KEVENT  1' "$OBJ/ngx_auto_config.h" ||
		die "configure found no libkevent in $KEVROOT: $NGX/configure.log"
	make -C "$SRC" -f "$OBJ/Makefile" -j"$JOBS" >"$NGX/make.log" 2>&1 ||
		die "build failed: $NGX/make.log"
	echo "$sum" >"$NGX/stamp"
}

# wrk 4.1.0 and the LuaJIT it links, Debian's packages unpacked in
# $WRKROOT (downloaded once).
LIBDIR=/usr/lib/x86_64-linux-gnu
get_wrk() {
	local d
	[ -x "$WRKROOT/usr/bin/wrk" ] && return
	rm -rf "$WRKROOT"
	mkdir -p "$WRKROOT/debs"
	log "downloading Debian's wrk"
	(cd "$WRKROOT/debs" && apt-get download wrk libluajit-5.1-2) >&2
	for d in "$WRKROOT"/debs/*.deb; do
		dpkg-deb -x "$d" "$WRKROOT"
	done
}

# The initramfs: busybox, nginx and the libraries it loads (libkevent in
# /opt/nginx/lib), small /etc files; for the benchmark wrk (LuaJIT where
# Debian has it), the counting shim and server-stat.
# shellcheck disable=SC2034 # read by add_prog (lib-guest.sh)
GUEST_LD_PATH=$KEVROOT/opt/nginx/lib:$WRKROOT$LIBDIR
# shellcheck disable=SC2034
GUEST_OWN_LIBS="$KEVROOT $WRKROOT"
make_initramfs() {
	cpio_begin "$NGX/initramfs.list" "$NGX/etc"
	busybox_skeleton "$ROOT/tools/nginx/init.sh"
	add_prog "$OBJ/nginx" /opt/nginx/sbin/nginx
	gcc -static -O2 -Wall -Wextra -o "$NGX/http-check" \
		"$ROOT/tools/nginx/http-check.c"
	add_file "$NGX/http-check" /opt/nginx/bin/http-check
	add_file "$KEVROOT/opt/nginx/lib/libkevent.so.0" \
		/opt/nginx/lib/libkevent.so.0 0644
	add_etc hosts $'127.0.0.1\tlocalhost'
	add_etc passwd $'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false'
	add_etc group $'root:x:0:\nnogroup:x:65534:'
	add_etc nsswitch.conf $'passwd: files\ngroup: files\nhosts: files'
	if [ $mode = bench ]; then
		add_prog "$WRKROOT/usr/bin/wrk" /opt/nginx/bin/wrk
		add_file "$(readlink -f "$WRKROOT$LIBDIR/libluajit-5.1.so.2")" \
			"$LIBDIR/libluajit-5.1.so.2" 0644
		gcc -shared -fPIC -O2 -Wall -Wextra -isystem "$HDR" \
			-o "$NGX/ctlcount.so" "$ROOT/tools/libevent/ctlcount.c"
		add_file "$NGX/ctlcount.so" /opt/nginx/lib/ctlcount.so 0644
		gcc -static -O2 -Wall -Wextra -o "$NGX/server-stat" \
			"$ROOT/tools/nginx/server-stat.c"
		add_file "$NGX/server-stat" /opt/nginx/bin/server-stat
		add_file "$ROOT/tools/nginx/bench.sh" /opt/nginx/bin/bench.sh 0644
	fi
	cpio_pack "$NGX/initramfs.cpio"
}

guest_prepare
# libkevent, which the module is written on, installed under $KEVROOT as
# it is in the guest (/opt/nginx).
install_libkevent "$NGX/libkevent" /opt/nginx "$KEVROOT"
build_nginx
[ $mode = bench ] && get_wrk
make_initramfs

cmdline="console=ttyS0 kunit.enable=0 panic=-1"
if [ $mode = bench ]; then
	conns=${BENCH_CONNS:-1,2,10,100,1000,10close,100close} reps=${BENCH_REPS:-5}
	cmdline+=" bench_conns=$conns bench_reps=$reps"
	cmdline+=" bench_time=${BENCH_TIME:-3} bench_warmup=${BENCH_WARMUP:-1}"
	if [ -n "${BENCH_PROFILE:-}" ]; then
		cmdline+=" bench_profile=${BENCH_PROFILE// /,}"
		cmdline+=" bench_profile_self=${BENCH_PROFILE_SELF:-0}"
	fi
	cmdline+=" -- bench $methods"
	ICOUNT=${ICOUNT:-3}
	export QEMU_ICOUNT=$ICOUNT
	QEMU_MACHINE+=", -icount shift=$ICOUNT,sleep=off"
else
	cmdline+=" -- $methods"
fi
log "booting $kernel ($QEMU_MACHINE; console log: $log)"
qemu_boot "$kernel" "$NGX/initramfs.cpio" "$cmdline" "$log" \
	"${BOOT_TIMEOUT:-1800}" >/dev/null || true

# The benchmark: every point of every method measured without errors,
# on the method named; the table of medians.
if [ $mode = bench ]; then
	bad=0
	guest_log_ok "$log" 'nginx-guest: done' || bad=1
	if grep -aE '^nginx-bench: rep .* errors [1-9]' "$log" >&2; then
		echo "nginx-bench: wrk saw errors at the points above" >&2
		bad=1
	fi
	grep -aE '^nginx-profile: ' "$log" >"$BUILD/nginx-profile.txt" || true
	bench_verdict nginx-bench "$log" "$methods" "$conns" "$reps" || bad=1
	[ $bad = 0 ]
	exit
fi

passed=0 failed=0
guest_log_ok "$log" 'nginx-guest: done' || failed=1
grep -a '^nginx-check: ' "$log" >&2 || true
grep -a '^nginx-wakeups: ' "$log" || true
grep -a '^nginx-time: ' "$log" >"$NGX/times.txt" || true
for m in $methods; do
	guest_result "$log" "nginx: $m: method " || true
done
report nginx "$passed" "$failed"
[ "$failed" = 0 ]

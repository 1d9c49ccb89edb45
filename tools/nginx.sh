#!/bin/bash
# nginx on kevent: Debian's nginx source with the event module of
# tools/nginx/*.patch (src/event/modules/ngx_kevent_module.c, "use
# kevent;"), built on libkevent (tools/lib/kevent) against the series'
# UAPI headers, and run in QEMU (TCG, never KVM) on the test kernel
# (build/kunit): tools/nginx/init.sh serves files on each method, and
# tools/nginx/http-check.c asks for them in every way a server meets and
# checks every response.
#
#   tools/nginx.sh      log in $BUILD/nginx.log, result "nginx"
#
# Environment: METHODS (default "kevent kevent-plain kevent-fallback
# kevent-nomemlock epoll"; see tools/nginx/init.sh), KERNEL (a bzImage), UAPI (the UAPI
# headers, default $KDIR/usr/include), BOOT_TIMEOUT (seconds, default
# 1800), GEN_INIT_CPIO.
#
# It fails when a check of a method fails, when a method's summary is
# missing, or when the kernel printed a splat. Everything is built under
# $BUILD/nginx.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-guest.sh"

[ $# = 0 ] || die "usage: $0"

# What this script needs beyond the kernel build's packages: Debian's
# nginx source (apt-get source needs dpkg-dev), busybox for the guest.
# nginx is configured without the modules that need PCRE or zlib.
apt_install dpkg-dev patch busybox-static >&2

NGX=$BUILD/nginx
SRC=$NGX/src		# Debian's source, patched
OBJ=$NGX/obj		# the build
KEVROOT=$NGX/libkevent-root	# libkevent, installed as in the guest
HDR=${UAPI:-$KDIR/usr/include}	# the series' UAPI headers
PATCHES=("$ROOT"/tools/nginx/*.patch)
methods=${METHODS:-kevent kevent-plain kevent-fallback kevent-nomemlock epoll}
kernel=${KERNEL:-$BZIMAGE}
log=$BUILD/nginx.log
[ -f "$kernel" ] || die "no kernel $kernel; build it first (tools/kunit.sh)"
rm -f "$RESULTS/nginx"

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

# The initramfs: busybox, nginx and the libraries it loads (libkevent in
# /opt/nginx/lib), small /etc files.
# shellcheck disable=SC2034 # read by add_prog (lib-guest.sh)
GUEST_LD_PATH=$KEVROOT/opt/nginx/lib
# shellcheck disable=SC2034
GUEST_OWN_LIBS=$KEVROOT
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
	cpio_pack "$NGX/initramfs.cpio"
}

guest_prepare
# libkevent, which the module is written on, installed under $KEVROOT as
# it is in the guest (/opt/nginx).
install_libkevent "$NGX/libkevent" /opt/nginx "$KEVROOT"
build_nginx
make_initramfs

log "booting $kernel ($QEMU_MACHINE; console log: $log)"
qemu_boot "$kernel" "$NGX/initramfs.cpio" \
	"console=ttyS0 kunit.enable=0 panic=-1 -- $methods" "$log" \
	"${BOOT_TIMEOUT:-1800}" >/dev/null || true

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

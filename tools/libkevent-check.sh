#!/bin/bash
# libkevent on the build machine, where the guest's static programs cannot
# show it: installed as a distribution would (make install DESTDIR=), the
# shared library has its soname and exports exactly what libkevent.map
# lists; a program built with pkg-config links against it, dynamically
# and statically, and runs; the probe's test passes here, on a kernel
# without kevent (no system call made). Its tests in the guest run with
# the kselftests (tools/initramfs.sh).
#
#   tools/libkevent-check.sh    result "libkevent" ("<passed> <failed>")
#
# Needs the UAPI headers of the test kernel (tools/kunit.sh built it).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

LIB=$ROOT/tools/lib/kevent
OUT=$BUILD/libkevent-check
CC=${CC:-gcc}
passed=0 failed=0

need_headers

report_and_exit() {
	report libkevent "$passed" "$failed"
	[ "$failed" = 0 ]
	exit
}

rm -rf "$OUT"
mkdir -p "$OUT"
check "builds warning-free, x86_64 and i386" bash -c '
	for abi in 64 32; do
		make -s -C "$1" CC="$2 -m$abi" KHDR="$3" O="$4/build$abi" \
			CFLAGS="-O2 -g -Werror" all test || exit 1
	done' - "$LIB" "$CC" "$KDIR/usr/include" "$OUT"
[ "$failed" = 0 ] || report_and_exit

check "make install DESTDIR= PREFIX=/usr" \
	make -s -C "$LIB" KHDR="$KDIR/usr/include" O="$OUT/build64" \
		PREFIX=/usr DESTDIR="$OUT/root" install
so=$OUT/root/usr/lib/libkevent.so
check "soname libkevent.so.0" bash -c \
	'readelf -d "$1" | grep -q "SONAME.*\[libkevent\.so\.0\]"' - "$so"
check "exports exactly libkevent.map's list" bash -c '
	diff <(sed -n "s/^\t\t\(kevent_[a-z0-9_]*\);$/\1/p" "$1" | sort) \
	     <(nm -D --defined-only "$2" | sed -n "s/.* \(.*\)@@LIBKEVENT_.*/\1/p" | sort)' \
	- "$LIB/libkevent.map" "$so"

# A program of a user's, built with pkg-config against the installed tree.
cat >"$OUT/prog.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <kevent/kevent.h>

int main(void)
{
	struct kevent_queue q;
	int probe = kevent_probe(), ret = kevent_queue_init(&q, 8, 0);

	printf("libkevent %d.%d: probe %d, queue_init %d\n",
	       kevent_version_major(), kevent_version_minor(), probe, ret);
	/* On this machine's kernel, without kevent: no, and no call made. */
	return probe == -ENOSYS && ret == -ENOSYS ? 0 : 1;
}
EOF
export PKG_CONFIG_PATH=$OUT/root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$OUT/root
check "a program links with pkg-config against libkevent.so.0 and runs" bash -c '
	$1 -Wall -Wextra -Werror -o "$2/prog" "$2/prog.c" \
		$(pkg-config --cflags --libs libkevent) &&
	LD_LIBRARY_PATH="$3" ldd "$2/prog" | grep -q "libkevent\.so\.0 => $3" &&
	LD_LIBRARY_PATH="$3" "$2/prog"' - "$CC" "$OUT" "$OUT/root/usr/lib"
check "a program links statically and runs" bash -c '
	$1 -Wall -Wextra -Werror -static -o "$2/prog-static" "$2/prog.c" \
		$(pkg-config --cflags libkevent) "$3/libkevent.a" && "$2/prog-static"' \
	- "$CC" "$OUT" "$OUT/root/usr/lib"
check "the probe's test, on a kernel without kevent" "$OUT/build64/bin/probe"

# README's example ("Writing a program on kevent") as a reader copies it,
# against the installed library (it also runs in the guest, initramfs.sh).
readme_example >"$OUT/example.c"
check "README's example compiles with pkg-config" bash -c '
	[ -s "$2/example.c" ] &&
	$1 -Wall -Wextra -Werror -o "$2/example" "$2/example.c" \
		$(pkg-config --cflags --libs libkevent)' - "$CC" "$OUT"

check "make install installs the man pages" \
	test -f "$OUT/root/usr/share/man/man3/kevent_batch_submit.3" -a \
	     -f "$OUT/root/usr/share/man/man2/kevent_init.2" -a \
	     -f "$OUT/root/usr/share/man/man7/kevent.7"
check "the probe's test as an i386 program" "$OUT/build32/bin/probe"
report_and_exit

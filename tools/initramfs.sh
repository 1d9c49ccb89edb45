#!/bin/bash
# Pack the initramfs that tools/selftests.sh boots: a static /init
# (tools/initramfs/init.c), the kevent kselftests in /tests, the same
# kselftests built as i386 programs (-m32) in /tests32, and the programs
# of tools/examples and libkevent's tests in /bin, all statically linked
# against the UAPI headers of the test kernel. Needs the kernel built in $KDIR, with
# IA32_EMULATION for the programs of /tests32.
#
#   tools/initramfs.sh      writes $BUILD/initramfs.cpio
#
# KEVENT_TESTS="kevent_socket_test kevent-echo" puts only the programs
# named in /tests and /tests32: a quicker boot while working on one of
# them. KEVENT_EXTRA_TESTS="kevent_faults" adds programs of
# tools/reliability to the tests (tools/reliability.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

KSFT=$BUILD/ksft
CPIO=$BUILD/initramfs.cpio
SELFTESTS=$TREE/tools/testing/selftests/kevent
CC=${CC:-gcc}
# Static: the initramfs has no C library. -isystem: the headers of the
# kernel under test, not the host's older ones.
CFLAGS=(-static -O2 -Wall -Wextra -isystem "$KDIR/usr/include")

need_headers

rm -rf "$KSFT"
mkdir -p "$KSFT/tests" "$KSFT/tests32" "$KSFT/bin"

# lib_mk_var VAR DIR: programs lib.mk would build into DIR, by kind, with
# the DIR/ it prefixes. Asked from make itself, so the Makefile stays the
# one list of tests.
lib_mk_var() {
	make -s --no-print-directory -C "$SELFTESTS" -f Makefile -f - \
		OUTPUT="$2" print-var <<<"print-var: ; @echo \$($1)"
}

# build_selftests DIR HELPERS [FLAGS...]: the kselftests, static, into
# DIR, compiled and linked with FLAGS; the helper programs that tests run
# (TEST_GEN_PROGS_EXTENDED) go to HELPERS, or nowhere if it is "".
build_selftests() {
	local dir=$1 helpers=$2 f p keep scripts
	shift 2
	# lib.mk appends USERCFLAGS and USERLDFLAGS to CFLAGS and LDFLAGS;
	# setting those on the command line would drop the Makefile's own.
	make -s -C "$SELFTESTS" ARCH=x86_64 CC="$CC" OUTPUT="$dir" \
		KHDR_INCLUDES="-isystem $KDIR/usr/include" \
		USERCFLAGS="$*" USERLDFLAGS="-static $*"
	if [ -n "$helpers" ]; then
		for p in $(lib_mk_var TEST_GEN_PROGS_EXTENDED "$dir"); do
			mv "$p" "$helpers/"
		done
	fi
	scripts=$(lib_mk_var TEST_PROGS "$dir")
	[ -z "$scripts" ] || log "warning: no shell in the initramfs; not run: $scripts"
	# Whatever else lib.mk left (objects, generated files) must not be
	# taken for a test by /init.
	keep=" $(lib_mk_var TEST_GEN_PROGS "$dir") $(lib_mk_var TEST_CUSTOM_PROGS "$dir") "
	for f in "$dir"/*; do
		[[ $keep == *" $f "* ]] || rm -rf "$f"
	done
}

if [ -f "$SELFTESTS/Makefile" ]; then
	log "building $SELFTESTS"
	build_selftests "$KSFT/tests" "$KSFT/bin"

	# The same tests as i386 programs, for the kernel's i386 system call
	# table and compat entry points; the x86_64 helpers in /bin serve
	# them too. -Wno-pointer-to-int-cast: the harness's ASSERT_NE(NULL,
	# ptr) casts the pointer to uintmax_t, which warns in every test
	# where pointers are 32 bits wide.
	log "building $SELFTESTS as i386 programs"
	echo 'int main(void) { return 0; }' >"$KSFT/m32.c"
	"$CC" -m32 -static -o "$KSFT/m32" "$KSFT/m32.c" ||
		die "no static i386 build: install gcc-multilib and libc6-dev-i386 (ci/install-packages.sh)"
	rm -f "$KSFT/m32" "$KSFT/m32.c"
	build_selftests "$KSFT/tests32" "" -m32 -Wno-pointer-to-int-cast
else
	log "warning: no $SELFTESTS; the initramfs has no tests"
fi

# libkevent (tools/lib/kevent), static, and its tests, linked against it:
# each test/NAME.c is /bin/libkevent-NAME, run with the tests, and
# /tests32/libkevent-NAME, the same as an i386 program on an i386 build
# of the library. The x86_64 build serves the examples below.
LIBKEVENT=$ROOT/tools/lib/kevent
LIBKEVENT64=$KSFT/libkevent64
examples=()
log "building libkevent and its tests, x86_64 and i386"
for abi in 64 32; do
	make -s -C "$LIBKEVENT" CC="$CC -m$abi" KHDR="$KDIR/usr/include" \
		O="$KSFT/libkevent$abi" TEST_LDFLAGS=-static all test
	for prog in "$KSFT/libkevent$abi/bin"/*; do
		name=libkevent-$(basename "$prog")
		if [ $abi = 64 ]; then
			mv "$prog" "$KSFT/bin/$name"
			examples+=("$name")
		else
			mv "$prog" "$KSFT/tests32/$name"
		fi
	done
done

# Every tools/examples/NAME.c is one program, on libkevent; the demo is
# among them. Each must run to completion and exit 0 when all is well:
# they are run with the tests too (linked into /tests), so the demo
# cannot rot.
for src in "$ROOT"/tools/examples/*.c; do
	[ -e "$src" ] || continue
	name=$(basename "$src" .c)
	log "building example $name"
	"$CC" "${CFLAGS[@]}" -pthread \
		-I"$LIBKEVENT64/gen" -I"$LIBKEVENT/include" \
		-o "$KSFT/bin/$name" "$src" "$LIBKEVENT64/libkevent.a"
	examples+=("$name")
done
# README's example ("Writing a program on kevent"), as a reader copies it.
log "building README's example"
readme_example >"$KSFT/readme-example.c"
"$CC" "${CFLAGS[@]}" -I"$LIBKEVENT64/gen" -I"$LIBKEVENT/include" \
	-o "$KSFT/bin/kevent-readme-example" "$KSFT/readme-example.c" \
	"$LIBKEVENT64/libkevent.a"
examples+=(kevent-readme-example)
# And the man pages' EXAMPLES programs (man_example), as man-NAME: the
# program is /bin/man-NAME.prog, and man-NAME runs it and checks its output
# against the page's shell session (man_example_output), which
# tools/man-check.sh requires of every page with a program.
for page in "$ROOT"/tools/man/man[237]/*.[237]; do
	name=man-$(basename "$page" | tr . -)
	man_example "$page" >"$KSFT/$name.c"
	if [ -s "$KSFT/$name.c" ]; then
		log "building the example of $(basename "$page")"
		"$CC" "${CFLAGS[@]}" -I"$LIBKEVENT64/gen" -I"$LIBKEVENT/include" \
			-o "$KSFT/bin/$name.prog" "$KSFT/$name.c" "$LIBKEVENT64/libkevent.a"
		{
			echo 'static const char man_expected[] = {'
			man_example_output "$page" | od -An -v -tx1 |
				sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'
			echo '0 };'
		} >"$KSFT/$name.h"
		"$CC" "${CFLAGS[@]}" -DEXAMPLE="\"/bin/$name.prog\"" \
			-include "$KSFT/$name.h" -o "$KSFT/bin/$name" \
			"$ROOT/tools/initramfs/man-example.c"
		examples+=("$name")
	fi
	rm -f "$KSFT/$name.c" "$KSFT/$name.h"
done
rm -rf "$KSFT/libkevent64" "$KSFT/libkevent32" "$KSFT/readme-example.c"

# Is program $1 to be run? All are, unless KEVENT_TESTS names some.
selected() {
	[ -z "${KEVENT_TESTS:-}" ] || [[ " $KEVENT_TESTS " == *" $1 "* ]]
}

# tools/reliability/NAME.c: programs for tools/reliability.sh's kernels
# (the fault sweep), built and run only when KEVENT_TESTS names them or
# KEVENT_EXTRA_TESTS adds them to the rest. They use the kselftests'
# system call wrappers (kevent_util.h).
extras=()
for src in "$ROOT"/tools/reliability/*.c; do
	[ -e "$src" ] || continue
	name=$(basename "$src" .c)
	if [[ " ${KEVENT_EXTRA_TESTS:-} " != *" $name "* ]] &&
		{ [ -z "${KEVENT_TESTS:-}" ] || ! selected "$name"; }; then
		continue
	fi
	log "building $name"
	"$CC" "${CFLAGS[@]}" -pthread -I"$SELFTESTS" -o "$KSFT/bin/$name" "$src"
	extras+=("$name")
done

"$CC" "${CFLAGS[@]}" -o "$KSFT/init" "$ROOT/tools/initramfs/init.c"

# An ext4 image that /init mounts on /mnt/ext4 through a loop device, so
# that the inode tests run on ext4 as well as on tmpfs. 1 KiB blocks keep
# it small (4 MiB, its journal included).
rm -f "$KSFT/ext4.img"
truncate -s 4M "$KSFT/ext4.img"
PATH=$PATH:/usr/sbin:/sbin mkfs.ext4 -q -F -b 1024 -N 256 "$KSFT/ext4.img"

gen=$(gen_init_cpio "$KSFT")
{
	initramfs_skeleton "$KSFT/init"
	echo "dir /tests32 0755 0 0"
	echo "file /ext4.img $KSFT/ext4.img 0644 0 0"
	for dir in tests tests32 bin; do
		for f in "$KSFT/$dir"/*; do
			[ -f "$f" ] || continue
			[ $dir = bin ] || selected "$(basename "$f")" || continue
			echo "file /$dir/$(basename "$f") $f 0755 0 0"
		done
	done
	for name in "${examples[@]}" "${extras[@]}"; do
		selected "$name" || continue
		echo "slink /tests/$name /bin/$name 0777 0 0"
	done
} >"$KSFT/initramfs.list"
"$gen" "$KSFT/initramfs.list" >"$CPIO"
log "$CPIO: $(grep -c '^[a-z]* /tests/' "$KSFT/initramfs.list") programs in /tests, $(grep -c '^[a-z]* /tests32/' "$KSFT/initramfs.list") in /tests32"

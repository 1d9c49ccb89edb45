# shellcheck shell=bash disable=SC2034 # the variables are for the scripts that source this
# Common settings for the kevent tools. Sourced, not run.
#
# Environment overrides, for testing the tools themselves without touching
# a developer's tree:
#   KEVENT_BUILD        build folder (default $ROOT/build)
#   KEVENT_MBOX         patch series to apply (default $ROOT/kevent.mbox)
#   KEVENT_KUNITCONFIG  kernel config fragment (default $ROOT/.kunitconfig)
#   JOBS                parallel make jobs (default: all CPUs)
#   KEVENT_MAKE_OPTIONS kernel make variables, X=Y separated by spaces
#                       (tools/reliability.sh gcov: what gcov measures)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${KEVENT_BUILD:-$ROOT/build}
TREE=$BUILD/linux
MBOX=${KEVENT_MBOX:-$ROOT/kevent.mbox}
BRANCH=kevent
BASE_TAG=kevent-base

# The series is made against this exact Debian package; a newer one is
# tried only when this one has left the archive.
SRC_PKG=linux-source-6.12
SRC_VER=6.12.118-1~deb12u1
SRC_TAR=/usr/src/linux-source-6.12.tar.xz

# Fixed identity and dates make the base commit's id the same on every
# machine, so the mbox's base-commit: trailer names it.
export GIT_AUTHOR_NAME="kevent tools" GIT_AUTHOR_EMAIL="kevent@localhost"
export GIT_COMMITTER_NAME="kevent tools" GIT_COMMITTER_EMAIL="kevent@localhost"

JOBS=${JOBS:-$(nproc)}

# One kernel serves KUnit, the userspace tests and the demo: it is built by
# kunit.py from this fragment into $KDIR, so every script agrees on it.
KUNITCONFIG=${KEVENT_KUNITCONFIG:-$ROOT/.kunitconfig}
KDIR=$BUILD/kunit
BZIMAGE=$KDIR/arch/x86/boot/bzImage

# Each test script leaves "<passed> <failed>" in $RESULTS/<name>, so
# test-all.sh can add them up without scraping logs.
RESULTS=$BUILD/results

die() { echo "error: $*" >&2; exit 1; }
log() { echo "==> $*" >&2; }

# apt-get install, as root or through sudo, never asking questions.
apt_install() {
	local sudo=()
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y --no-install-recommends "$@"
}

# The kernel source, pinned; a newer one only when the pin is gone.
install_source() {
	log "installing $SRC_PKG"
	apt_install "$SRC_PKG=$SRC_VER" || apt_install "$SRC_PKG"
}

# Record that branch $BRANCH of $TREE is exactly what $MBOX holds; tree.sh
# then leaves the branch alone until either of them changes.
mbox_sum() { sha256sum <"$MBOX" | cut -d' ' -f1; }
record_applied() {
	git -C "$TREE" config kevent.applied-mbox "$(mbox_sum)"
	git -C "$TREE" config kevent.applied-head "$(git -C "$TREE" rev-parse "$BRANCH")"
}

need_tree() {
	[ -e "$TREE/.git" ] || die "no kernel tree in $TREE; run tools/tree.sh first"
}

# kunit.py SUBCOMMAND [ARGS...]: kunit.py with the options every caller
# shares, so KUnit and the userspace tests always build the same kernel.
# kunit.py wants to run from the top of the source tree. No KVM: results
# must not depend on the host having it, and CI machines may not.
kunit_py() {
	local cmd=$1 build=() opt
	shift
	need_tree
	[ -f "$KUNITCONFIG" ] || die "no $KUNITCONFIG"
	case $cmd in
	run | build)
		build=(--jobs="$JOBS")
		for opt in ${KEVENT_MAKE_OPTIONS:-}; do
			build+=(--make_options="$opt")
		done
		;;
	esac
	(cd "$TREE" && python3 tools/testing/kunit/kunit.py "$cmd" \
		--arch=x86_64 --kunitconfig="$KUNITCONFIG" \
		--build_dir="$KDIR" "${build[@]}" "$@")
}

# How every script boots a test kernel, so that tests, demo and benchmark
# run on the same virtual machine: TCG, never KVM (results must not depend
# on the host having it, and KVM fails on some CI hosts), two CPUs so that
# SMP races can happen, the console on the serial port.
QEMU_CPUS=2
QEMU_MEM=1024
QEMU_MACHINE="TCG (no KVM), -smp $QEMU_CPUS -m $QEMU_MEM"

# qemu_boot BZIMAGE INITRAMFS CMDLINE LOG TIMEOUT: boot, copy the console
# to stdout and LOG, and return QEMU's status (124 after TIMEOUT seconds).
# QEMU_ICOUNT=S: QEMU counts instructions (-icount shift=S,sleep=off), so
# that the guest's clocks measure its own work, not the host's load
# (tools/bench.sh BENCH_ICOUNT, tools/libevent.sh ICOUNT).
# The guest ends the run by rebooting (-no-reboot makes that an exit).
qemu_boot() {
	local rc=0 icount=()
	[ -n "${QEMU_ICOUNT:-}" ] && icount=(-icount "shift=$QEMU_ICOUNT,sleep=off")
	timeout -k 10 "$5" qemu-system-x86_64 "${icount[@]}" \
		-nodefaults -machine pc -m "$QEMU_MEM" -smp "$QEMU_CPUS" \
		-kernel "$1" -initrd "$2" -append "$3" \
		-bios qboot.rom -display none -serial stdio -no-reboot \
		</dev/null 2>&1 | stdbuf -oL tr -d '\r' | tee "$4" || rc=$?
	[ $rc = 124 ] && echo "QEMU timed out after $5 s" >&2
	return $rc
}

# Kernel messages that mean a bug, whatever the tests said. Lines of a log
# that match are printed; the status is 0 when there is at least one.
SPLAT_RE='BUG:|WARNING:|Oops|KASAN:|UBSAN:|Kernel panic|general protection|Call Trace:|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|kmemleak: .*new suspected memory leak|blocked for more than [0-9]+ seconds|detected stalls? on CPU|self-detected stall'
find_splats() {
	grep -aE "$SPLAT_RE" "$1"
}

# failed_cases LOG: each failed kselftest case again, from its "RUN" line to
# its "not ok" line, so the end of a long CI log says what failed and why.
failed_cases() {
	awk '
		/#  RUN / { n = 0 }
		{ if (n < 60) block[n++] = $0 }
		/^# not ok [0-9]+ / {
			print "---- failed:"
			for (i = 0; i < n; i++)
				print block[i]
			n = 0
		}
	' "$1"
}

# initramfs_skeleton INIT: the first lines of a gen_init_cpio list for a
# guest of tools/initramfs/init.c: the console and /dev/null, the mount
# points init uses, /bin and /tests, and INIT as /init.
initramfs_skeleton() {
	printf '%s\n' "dir /dev 0755 0 0" "nod /dev/console 0600 0 0 c 5 1" \
		"nod /dev/null 0666 0 0 c 1 3" "dir /proc 0755 0 0" \
		"dir /sys 0755 0 0" "dir /tmp 1777 0 0" "dir /bin 0755 0 0" \
		"dir /tests 0755 0 0" "file /init $1 0755 0 0"
}

# gen_init_cpio DIR: the path of the kernel's gen_init_cpio, which makes
# device nodes without root; built into DIR when the test kernel's build
# has none.
gen_init_cpio() {
	local gen=$KDIR/usr/gen_init_cpio
	if [ ! -x "$gen" ]; then
		need_tree
		gen=$1/gen_init_cpio
		"${CC:-gcc}" -O2 -o "$gen" "$TREE/usr/gen_init_cpio.c"
	fi
	echo "$gen"
}

# need_headers: the UAPI headers of the test kernel (tools/kunit.sh
# builds it), installed into $KDIR/usr/include and up to date.
need_headers() {
	need_tree
	[ -f "$KDIR/.config" ] || die "no kernel in $KDIR; run tools/kunit.sh first"
	log "installing UAPI headers into $KDIR/usr/include"
	make -s -C "$TREE" ARCH=x86_64 O="$KDIR" headers
}

# check WHAT COMMAND...: run one check of a script that counts in $passed
# and $failed; "ok: WHAT" or "FAILED: WHAT" and the command's output.
check() {
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "ok: $what"
		passed=$((passed + 1))
	else
		echo "FAILED: $what"
		[ -z "$out" ] || sed 's/^/    /' <<<"$out"
		failed=$((failed + 1))
	fi
}

# report NAME PASSED FAILED: the summary line and the result file.
report() {
	mkdir -p "$RESULTS"
	echo "$2 $3" >"$RESULTS/$1"
	echo "$1: $2 passed, $3 failed"
}

# readme_example: README's example program ("Writing a program on
# kevent"), as a reader copies it. tools/libkevent-check.sh compiles it
# against the installed library, tools/initramfs.sh runs it in the guest.
readme_example() {
	awk '/^    \/\* example.c:/ { on = 1 } on { print } on && /^    }$/ { exit }' \
		"$ROOT/README" | sed 's/^    //'
}

# man_unescape: roff text of an .EX block as it prints (\& \e \- undone).
man_unescape() {
	sed -e 's/^\\&//' -e 's/\\e/\\/g' -e 's/\\-/-/g'
}

# man_example PAGE: the program of man page PAGE's EXAMPLES, between the
# man-pages project's markers .\" SRC BEGIN (NAME.c) and .\" SRC END;
# nothing if it has none. tools/man-check.sh compiles them,
# tools/initramfs.sh runs them.
man_example() {
	head -n 1 "$1" | grep -q '^\.so ' && return 0
	awk '/^\.\\" SRC END/ { on = 0 }
		on && !/^\.E[XE]$/ { print }
		/^\.\\" SRC BEGIN/ { on = 1 }' "$1" | man_unescape
}

# man_example_output PAGE: what the shell session of PAGE's EXAMPLES shows
# its program printing: the lines of the first .EX block there that starts
# with a "$" command line, after that line. tools/initramfs.sh checks the
# program's output against it in the guest (tools/initramfs/man-example.c).
man_example_output() {
	awk '/^\.SH EXAMPLES/ { ex = 1; next }
		ex && /^\.SH / { exit }
		ex && /^\.EX$/ { blk = 1; first = 1; next }
		blk && /^\.EE$/ { if (shell) exit; blk = 0; next }
		blk && first { first = 0; shell = /^(\.RB )?"?\$/; next }
		shell { print }' "$1" | man_unescape
}

# shellcheck shell=bash
# What tools/libevent.sh and tools/nginx.sh share: Debian source packages,
# and a guest of busybox and dynamically linked Debian programs, packed
# by the kernel's gen_init_cpio. Sourced after tools/lib.sh.

# apt-get source needs a deb-src entry: one for each deb entry of
# debian.sources (deb822) or sources.list (one-line format), made once.
deb_src() {
	local list=/etc/apt/sources.list.d/kevent-src.sources sudo=()
	# shellcheck disable=SC2016 # apt's template, not the shell's
	if apt-get indextargets --format '$(IDENTIFIER)' 2>/dev/null | grep -qx Sources; then
		return
	fi
	[ "$(id -u)" = 0 ] || sudo=(sudo)
	log "adding deb-src entries in $list"
	{
		if [ -f /etc/apt/sources.list.d/debian.sources ]; then
			sed -n '/^Types:/s/.*/Types: deb-src/p; /^Types:/!p' \
				/etc/apt/sources.list.d/debian.sources
		fi
		if [ -f /etc/apt/sources.list ]; then
			# "deb [opts] URI SUITE COMPONENTS" -> a deb822 stanza
			sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) \([^ ]*\) \(.*\)$/Types: deb-src\nURIs: \2\nSuites: \3\nComponents: \4\n/p' \
				/etc/apt/sources.list
		fi
	} | "${sudo[@]}" tee "$list" >/dev/null
	"${sudo[@]}" apt-get update
}

# apt_source PKG DIR: Debian's source of PKG unpacked (its patches
# applied) in DIR. The newest version first; an older one of the
# archive's when the newest cannot be fetched (a security update whose
# files have left the mirror while its index still names them).
apt_source() {
	local v
	deb_src
	mkdir -p "$2"
	(cd "$2" && apt-get source "$1") && return
	for v in $(apt-cache showsrc "$1" | sed -n 's/^Version: //p' | sort -rV | sed 1d); do
		log "fetching $1 $v instead"
		(cd "$2" && apt-get source "$1=$v") && return
	done
	die "no source of $1 could be fetched"
}

# install_libkevent OUT PREFIX DESTDIR: libkevent built into OUT against
# the series' UAPI headers ($HDR), installed under DESTDIR as the guest
# has it under PREFIX: headers, libkevent.so, libkevent.a in OUT.
install_libkevent() {
	make -s -C "$ROOT/tools/lib/kevent" KHDR="$HDR" O="$1" \
		PREFIX="$2" DESTDIR="$3" install >/dev/null
}

# kevent_inputs_sum FILE...: a checksum of the FILEs (a program's
# patches), the series' UAPI header and libkevent's sources: a program
# built against another struct ukevent or library would talk to the
# kernel in the wrong layout, so it is built again when this changes.
kevent_inputs_sum() {
	cat "$@" "$HDR/linux/kevent.h" \
		"$ROOT"/tools/lib/kevent/include/kevent/kevent.h \
		"$ROOT"/tools/lib/kevent/src/* | sha256sum | cut -d' ' -f1
}

# The initramfs list: cpio_begin LIST ETCDIR, then the add_* helpers;
# "$GEN_INIT_CPIO LIST" packs it. Directories are made as needed, each
# path once.
declare -A cpio_have
CPIO_LIST='' CPIO_ETC=''
cpio_begin() {
	CPIO_LIST=$1 CPIO_ETC=$2
	cpio_have=()
	: >"$CPIO_LIST"
	rm -rf "${CPIO_ETC:?}"
	mkdir -p "$CPIO_ETC"
}
add_dir() {
	[ "$1" = / ] || [ -n "${cpio_have[$1]:-}" ] && return
	add_dir "$(dirname "$1")"
	cpio_have[$1]=1
	echo "dir $1 0755 0 0" >>"$CPIO_LIST"
}
add_file() { # SRC DEST [MODE]
	[ -n "${cpio_have[$2]:-}" ] && return
	add_dir "$(dirname "$2")"
	cpio_have[$2]=1
	echo "file $2 $1 ${3:-0755} 0 0" >>"$CPIO_LIST"
}
add_etc() { # NAME CONTENT
	printf '%s\n' "$2" >"$CPIO_ETC/$1"
	add_file "$CPIO_ETC/$1" "/etc/$1" 0644
}
# add_prog SRC DEST: a program and, at the paths the loader asks for,
# every library it loads, as ldd finds them with LD_LIBRARY_PATH set to
# $GUEST_LD_PATH; those under the directories of $GUEST_OWN_LIBS are
# left to the caller, who puts them where the guest's programs look.
GUEST_LD_PATH='' GUEST_OWN_LIBS=''
add_prog() {
	local lib own
	add_file "$1" "$2"
	for lib in $(LD_LIBRARY_PATH=$GUEST_LD_PATH ldd "$1" | grep -oE '/[^ ]+'); do
		for own in $GUEST_OWN_LIBS; do
			[[ $lib == "$own"/* ]] && continue 2
		done
		add_file "$lib" "$lib"
	done
}
# busybox_skeleton INIT: busybox as /bin/sh, the mount points, the
# console, and the shell script INIT as /init.
busybox_skeleton() {
	local d
	add_file "$1" /init
	add_file /bin/busybox /bin/busybox
	echo "slink /bin/sh /bin/busybox 0777 0 0" >>"$CPIO_LIST"
	for d in /dev /proc /sys /tmp /root; do add_dir $d; done
	echo "nod /dev/console 0600 0 0 c 5 1" >>"$CPIO_LIST"
}

# cpio_pack OUT: the list packed into OUT, by $GEN_INIT_CPIO if set, else
# by the test kernel's gen_init_cpio (built into OUT's folder if need be).
cpio_pack() {
	local gen=${GEN_INIT_CPIO:-}
	[ -n "$gen" ] || gen=$(gen_init_cpio "$(dirname "$1")")
	"$gen" "$CPIO_LIST" >"$1"
}

# guest_prepare: the series' UAPI headers in $KDIR/usr/include, unless
# UAPI names others (make does nothing when they are up to date), and
# busybox on the host for the guest's shell.
guest_prepare() {
	if [ -z "${UAPI:-}" ]; then
		need_tree
		log "installing UAPI headers into $KDIR/usr/include"
		make -s -C "$TREE" ARCH=x86_64 O="$KDIR" headers
	fi
	command -v busybox >/dev/null || die "no busybox: install busybox-static"
}

# guest_log_ok LOG DONE: whether the console LOG is free of kernel splats
# and holds a line starting with DONE, which the guest's init prints at
# its end; what is wrong is said on stderr.
guest_log_ok() {
	local splats ok=0
	if splats=$(find_splats "$1"); then
		printf 'kernel splat in %s:\n%s\n' "$1" "$splats" >&2
		ok=1
	fi
	if ! grep -aq "^$2" "$1"; then
		echo "no \"$2\" in $1: the guest did not finish" >&2
		ok=1
	fi
	return $ok
}

# guest_result LOG PREFIX: the last line of LOG that starts with PREFIX
# (an extended regular expression), printed and kept in $GUEST_LINE, its
# "N passed, N failed" added to $passed and $failed; with none, one
# failure and status 1.
GUEST_LINE=
guest_result() {
	local p f
	GUEST_LINE=$(grep -aE "^$2" "$1" | tail -n 1 || true)
	if [ -z "$GUEST_LINE" ]; then
		echo "no \"$2\" line in $1" >&2
		failed=$((failed + 1))
		return 1
	fi
	echo "$GUEST_LINE"
	read -r p f < <(echo "$GUEST_LINE" | sed 's/.*: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/')
	passed=$((passed + p)) failed=$((failed + f))
}

# bench_verdict NAME LOG ORDER POINTS REPS: a server benchmark's result
# from the guest's "NAME: rep R backend B method M: conns ..." lines in
# LOG (tools/libevent.sh --memcached-bench, tools/nginx.sh --bench): no
# point failed ("NAME: ...: failed"), and each backend of ORDER measured
# at each of the POINTS (comma-separated) in each of REPS repetitions. The
# table of medians (tools/bench/server-table.awk, instructions at 2^ICOUNT
# ns) is printed and kept in $BUILD/NAME.txt. Status 1 if a point failed
# or is missing.
bench_verdict() {
	local name=$1 log=$2 order=$3 want b n bad=0
	if grep -aE "^$name: .*: failed" "$log" >&2; then
		bad=1
	fi
	want=$(( $(echo "$4" | tr , '\n' | wc -l) * $5 ))
	for b in $order; do
		n=$(grep -acE "^$name: rep [0-9]+ backend $b method " "$log" || true)
		if [ "$n" != "$want" ]; then
			echo "$name: $b: $n of $want points measured" >&2
			bad=1
		fi
	done
	grep -aE "^$name: rep " "$log" |
		awk -v shift="${ICOUNT:-}" -v order="$order" \
			-f "$ROOT/tools/bench/server-table.awk" |
		tee "$BUILD/$name.txt"
	return $bad
}

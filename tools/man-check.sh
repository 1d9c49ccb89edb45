#!/bin/bash
# The man pages of tools/man (the system calls', libkevent's, kevent(7)),
# checked as a reader and a maintainer would want them: mandoc -Tlint
# clean with every .so alias resolving; a page for every function of
# libkevent's header; every KEVENT_* constant of the UAPI header named in
# some page; each system call's ERRORS listing every errno of its line in
# tools/man/errnos (kept beside the code); and every EXAMPLES program
# compiling against libkevent, with a shell session showing its output
# (which tools/initramfs.sh checks in the guest, as man-PAGE).
#
#   tools/man-check.sh      result "man" ("<passed> <failed>")
#
# Needs mandoc, and the UAPI headers of the test kernel (tools/kunit.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

MAN=$ROOT/tools/man
LIB=$ROOT/tools/lib/kevent
OUT=$BUILD/man-check
CC=${CC:-gcc}
passed=0 failed=0

command -v mandoc >/dev/null || die "no mandoc (ci/install-packages.sh)"
need_headers
UAPI=$KDIR/usr/include/linux/kevent.h

lint() {
	local f t
	cd "$MAN"
	for f in man2/*.2 man3/*.3 man7/*.7; do
		if head -n 1 "$f" | grep -q '^\.so '; then
			t=$(sed 's/^\.so //' "$f")
			[ -f "$t" ] || { echo "$f: .so $t: missing"; return 1; }
		else
			mandoc -Tlint -W warning "$f" || return 1
		fi
	done
}

functions_have_pages() {
	local f missing=
	for f in $(sed -n 's/^\(static inline \)\?[a-z][a-z0-9_ ]*[ *]\(kevent_[a-z0-9_]*\)(.*/\2/p' \
			"$LIB/include/kevent/kevent.h"); do
		[ -f "$MAN/man3/$f.3" ] || [ -f "$MAN/man2/$f.2" ] ||
			missing="$missing $f"
	done
	[ -z "$missing" ] || { echo "no man page:$missing"; return 1; }
}

constants_named() {
	local c missing=
	for c in $(grep -o '\bKEVENT_[A-Z0-9_]*[A-Z0-9]\b' "$UAPI" | sort -u); do
		grep -rqw -- "$c" "$MAN" || missing="$missing $c"
	done
	[ -z "$missing" ] || { echo "named in no page:$missing"; return 1; }
}

# The ERRORS section of page $1, its errno names one per line.
page_errnos() {
	sed -n '/^\.SH ERRORS/,/^\.SH /p' "$MAN/man2/$1" |
		grep -oE '\bE[A-Z0-9]{2,}\b' | sort -u
}

errnos_listed() {
	local page errs e missing=
	while read -r page errs; do
		[[ -z "$page" || "$page" == \#* ]] && continue
		[ -f "$MAN/man2/$page" ] || { missing="$missing $page(no page)"; continue; }
		for e in $errs; do
			page_errnos "$page" | grep -qx "$e" || missing="$missing $page:$e"
		done
	done <"$MAN/errnos"
	[ -z "$missing" ] || { echo "not in ERRORS:$missing"; return 1; }
}

# EXAMPLES programs (man_example), compiled, each with the shell session
# that shows its output (man_example_output); tools/initramfs.sh runs them
# in the guest and checks that output.
examples_compile() {
	local f n=0
	make -s -C "$LIB" KHDR="$KDIR/usr/include" O="$OUT/lib" \
		"$OUT/lib/libkevent.a" || return 1
	for f in "$MAN"/man[237]/*.[237]; do
		man_example "$f" >"$OUT/$(basename "$f").c"
		[ -s "$OUT/$(basename "$f").c" ] || continue
		"$CC" -Wall -Wextra -Werror -I"$OUT/lib/gen" -I"$LIB/include" \
			-o "$OUT/$(basename "$f").bin" "$OUT/$(basename "$f").c" \
			"$OUT/lib/libkevent.a" || return 1
		[ -n "$(man_example_output "$f")" ] ||
			{ echo "$(basename "$f"): a program without a shell session showing its output"; return 1; }
		n=$((n + 1))
	done
	echo "$n programs"
	[ "$n" -gt 0 ]
}

rm -rf "$OUT"
mkdir -p "$OUT"
check "mandoc -Tlint clean, every .so alias resolving" lint
check "a man page for every function of libkevent's header" functions_have_pages
check "every KEVENT_* constant of <linux/kevent.h> named in a page" constants_named
check "each system call's ERRORS lists tools/man/errnos's errnos" errnos_listed
check "the EXAMPLES programs compile against libkevent, their output shown" examples_compile
report man "$passed" "$failed"
[ "$failed" = 0 ]

#!/bin/bash
# Install every Debian 12 package needed to build kevent and run its tests
# (run by .ci/run on a fresh machine, and with --if-missing by the demo
# and test commands).
set -euo pipefail
. "$(dirname "$0")/../tools/lib.sh"

packages=(
	# kernel build
	build-essential gcc make flex bison bc libelf-dev libssl-dev dwarves
	kmod cpio rsync xz-utils perl python3 git ca-certificates
	# static test programs; the kselftests also as i386 programs:
	# libc6-dev-i386 has the 32-bit static libc (/usr/lib32/libc.a),
	# gcc-multilib the compiler's -m32 support (lib32gcc-12-dev)
	libc6-dev gcc-multilib libc6-dev-i386
	# the test machine: qemu-system-data has qboot.rom
	qemu-system-x86 qemu-system-data
	# the ext4 image of the inode tests
	e2fsprogs
	# libkevent's checks on the build machine (tools/libkevent-check.sh):
	# programs built with pkg-config, the man pages linted
	pkgconf mandoc
)

# --if-missing: do nothing when every package is installed already (the
# demo and test commands call it so; CI installs unconditionally).
if [ "${1:-}" = --if-missing ]; then
	missing=0
	for p in "${packages[@]}" "$SRC_PKG"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing=1
	done
	[ $missing = 1 ] || exit 0
fi

if [ "$(id -u)" = 0 ]; then apt-get update; else sudo apt-get update; fi
apt_install "${packages[@]}"
install_source

#!/bin/bash
# Install every Debian 12 package needed to build kevent and run its tests
# (run by .ci/run on a fresh machine; developers can run it too).
set -euo pipefail
. "$(dirname "$0")/../tools/lib.sh"

packages=(
	# kernel build
	build-essential gcc make flex bison bc libelf-dev libssl-dev dwarves
	kmod cpio rsync xz-utils perl python3 git ca-certificates
	# static test programs
	libc6-dev
	# the test machine: qemu-system-data has qboot.rom
	qemu-system-x86 qemu-system-data
	# the ext4 image of the inode tests
	e2fsprogs
)

if [ "$(id -u)" = 0 ]; then apt-get update; else sudo apt-get update; fi
apt_install "${packages[@]}"
install_source

#!/bin/bash
# Build one of the named kernels of kunit/ from the tree (build/linux, as
# tools/tree.sh makes it) into build/NAME, with kunit.py as the test
# kernel is built, and print the build directory.
#
#   tools/build-kernel.sh debug        kunit/debug.config (CI's; build/kunit)
#   tools/build-kernel.sh production   kunit/production.config
#   tools/build-kernel.sh profile      production.config + profile.config
#   tools/build-kernel.sh check        kunit/check.config (per-patch check)
#
# A fragment whose options olddefconfig drops is refused by kunit.py: the
# fragments spell out every dependency.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

name=${1:-}
fragments=()
case $name in
debug) fragments=("$ROOT/kunit/debug.config") ;;
production | check) fragments=("$ROOT/kunit/$name.config") ;;
profile) fragments=("$ROOT/kunit/production.config" "$ROOT/kunit/profile.config") ;;
*) die "usage: $0 debug|production|profile|check" ;;
esac

# The debug kernel is the one kunit.sh and selftests.sh boot.
dir=$BUILD/$name
[ "$name" = debug ] && dir=$KDIR
need_tree
args=()
for f in "${fragments[@]}"; do
	args+=(--kunitconfig="$f")
done
log "building the $name kernel into $dir"
(cd "$TREE" && python3 tools/testing/kunit/kunit.py build --arch=x86_64 \
	"${args[@]}" --build_dir="$dir" --jobs="$JOBS") >&2
echo "$dir"

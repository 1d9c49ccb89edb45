#!/bin/bash
# Build a kernel with kevent and run the demo program
# (tools/examples/kevent-demo.c) on it in QEMU. The first run unpacks the
# kernel and builds it, which takes a while; later runs reuse both.
#
#   tools/demo.sh
set -euo pipefail
tools=$(dirname "$0")
"$tools/../ci/install-packages.sh" --if-missing
"$tools/tree.sh"
exec "$tools/selftests.sh" --demo

#!/bin/bash
# bench/procmem-guard.sh - the cost of procmem_read's FUSE guard per read
# against the bare read it replaced, with the table alone and with the
# PROCMAP_QUERY just before each read, for a process with few and with
# many mappings (bench/procmem-guard.c; docs/performance.md).
#   bench/procmem-guard.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
[ -f "$B/libfs.a" ] || { echo "build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -Ilib -o "$tmp/procmem-guard" bench/procmem-guard.c "$B/libfs.a"
for maps in 100 3000 20000; do
	"$tmp/procmem-guard" "$maps" 2
done

#!/bin/bash
# bench/localfs.sh - the cost of localfs_check_fd per file with the mount
# table cache against a read of the whole table per file (bench/localfs.c),
# on this host's table and, in a private mount namespace, on one with
# EXTRA_MOUNTS (default 2,000) more tmpfs mounts (a node with many
# containers' mounts). Needs root for the second case (docs/performance.md).
#   bench/localfs.sh [BUILD_DIR] [SECONDS]   (default build, 2)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
SECS=${2:-2}
EXTRA_MOUNTS=${EXTRA_MOUNTS:-2000}
[ -f "$B/libfs.a" ] || { echo "build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -Ilib -o "$tmp/localfs" bench/localfs.c "$B/libfs.a"
echo "bench/localfs.sh: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$tmp/localfs" "$SECS"
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$tmp/m"
	unshare -m --propagation private bash -c '
		for ((i = 0; i < $2; i++)); do
			mkdir -p "$1/m/$i" && mount -t tmpfs -o size=4k t "$1/m/$i"
		done
		"$1/localfs" "$3"' bash "$tmp" "$EXTRA_MOUNTS" "$SECS"
fi

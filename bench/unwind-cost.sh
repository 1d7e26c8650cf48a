#!/bin/bash
# bench/unwind-cost.sh - where the HotSpot unwinder's CPU goes on a big
# application: jetty9 under wrk (tests/lib/apps.bash), no frame pointers,
# `flamesidecar run` for a window under `perf record -g` (the profiler
# profiled). Prints the summary's "us CPU per sample" line of the unwinder
# and perf's hottest functions of the sidecar (self, children). The
# summary's "unwind work" line counts what that CPU is made of (blob
# lookups, cache misses by cause, reads of the JVM's memory): compare
# builds by it, the CPU figure moves by +-30% on a loaded machine.
#
# Usage: bench/unwind-cost.sh [WINDOW_SECONDS [BUILD_DIR]]   (default 10)
#   KIND=jetty|h2|derby (default jetty), FP=1 for -XX:+PreserveFramePointer,
#   JDK_MAJOR=25 for Temurin 25, HZ (default 999), KEEP=FILE keeps perf.data,
#   TOP=N functions listed (0: none)
set -euo pipefail
cd "$(dirname "$0")/.."
WIN=${1:-10}
export FS_TOP=$PWD FS_BUILD=${2:-$PWD/build}
KIND=${KIND:-jetty}
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=tests/lib/apps.bash
. tests/lib/apps.bash
bench_require_root
bench_require_cmd perf linux-perf
bench_require_jdk
[ -x "$FS_SIDECAR" ] || skip "build first (make)"
app_require "$KIND"
bench_setup
opt=()
[ "${FP:-0}" = 1 ] && opt=(--fp)
[ -n "${JDK_MAJOR:-}" ] && opt+=(--jdk "$JDK_MAJOR")
name=benchuw-$$
app_start "$name" "$KIND" "${opt[@]}" || { echo "$BENCH: $KIND did not start" >&2; exit 1; }
app_load_start "$name" $((WIN + 40))
app_warm "$name"
out=$FS_TMP/uw
mkdir -p "$out"
perf record -q -F 2000 -g -o "$out/perf.data" -- \
	"$FS_SIDECAR" run "$name" -F "${HZ:-999}" -d "${WIN}s" -o "$out/ours.svg" >"$out/ours.out" 2>&1 3>&- || true
app_load_stop "$name"
cat "$out/ours.out"
if [ -n "${KEEP:-}" ]; then cp "$out/perf.data" "$KEEP"; fi
perf report -i "$out/perf.data" --no-children --stdio --sort sym 2>/dev/null |
	grep -v '^#' | grep -E '^ +[0-9]' | head -"${TOP:-25}" || true

#!/bin/bash
# bench/run.sh - `flamesidecar run` against the classic pipeline, on the same
# container in the same invocation:
#
#   ours      flamesidecar run NAME -d DURATION -F FREQ -o ours.svg
#             -> "graph written N ms after the window closed" (its summary)
#             -> peak RSS of the whole command (/usr/bin/time -v, else
#                getrusage of the children through bash's `times`-less path)
#   baseline  perf record -F FREQ -g -p PID -- sleep DURATION, then, timed
#             from perf's exit to the SVG on disk:
#             flamesidecar map NAME (the JIT map perf needs, our fastest way)
#             && perf script | flamesidecar collapse | flamesidecar render
#             -> ms, and peak RSS of perf record and of perf script
#
# Prints both figures and the ratio baseline / ours. Needs root, runc,
# openjdk-17, perf and a built tree (make).
#
# Usage: bench/run.sh [DURATION_SECONDS [FREQ [BUILD_DIR]]]   (default 60 999)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-60}
FREQ=${2:-999}
export FS_TOP=$PWD FS_BUILD=${3:-$PWD/build}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_root
bench_require_cmd runc
bench_require_cmd perf linux-perf
bench_require_jdk
bench_require_build
TIME=""
[ -x /usr/bin/time ] && TIME=/usr/bin/time

bench_setup
NAME=benchrun-$$
bench_start_workload "$NAME" -- --threads 2 --syscalls

now_ms() { date +%s%3N; }
# rss_kib FILE: "Maximum resident set size" of a /usr/bin/time -v report
rss_kib() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1" | tail -1; }
# cpu_ms FILE: user + system CPU time of a /usr/bin/time -v report, in ms
cpu_ms() {
	awk -F': ' '/User time|System time/ { s += $2 } END { printf "%d", s * 1000 }' "$1"
}

echo "# bench/run.sh: $DUR s at $FREQ Hz, Workload --threads 2 --syscalls in runc, $(nproc) CPUs,"
echo "# load average before: $(bench_load)"

# ---- ours
(cd "$W" && ${TIME:+$TIME -v -o "$W/ours.time"} "$FS_SIDECAR" run "$NAME" -d "${DUR}s" -F "$FREQ" \
	-o ours.svg >"$W/ours.out" 2>"$W/ours.err")
ours_ms=$(sed -n 's/^graph *written \([0-9]*\) ms after.*/\1/p' "$W/ours.out")
ours_rss=$([ -n "$TIME" ] && rss_kib "$W/ours.time" || echo "?")
ours_samples=$(sed -n 's/^samples *\([0-9]*\).*/\1/p' "$W/ours.out")

# ---- baseline
(cd "$W" && ${TIME:+$TIME -v -o "$W/rec.time"} perf record -q -F "$FREQ" -g -p "$PID" -o perf.data \
	-- sleep "$DUR" >"$W/rec.out" 2>&1)
t0=$(now_ms)
"$FS_SIDECAR" map "$NAME" >"$W/map.out"
(cd "$W" && ${TIME:+$TIME -v -o "$W/script.time"} perf script -i perf.data 2>/dev/null |
	"$FS_SIDECAR" collapse | "$FS_SIDECAR" render -o base.svg)
t1=$(now_ms)
base_ms=$((t1 - t0))
rec_rss=$([ -n "$TIME" ] && rss_kib "$W/rec.time" || echo "?")
script_rss=$([ -n "$TIME" ] && rss_kib "$W/script.time" || echo "?")
base_samples=$(perf script -i "$W/perf.data" -F period 2>/dev/null | wc -l)

echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
ratio=$(awk -v b="$base_ms" -v o="$ours_ms" 'BEGIN { printf "%.1f", (o > 0 ? b / o : 0) }')
printf '%-44s %8s %10s %7s\n' "" "ours" "classic" "ratio"
printf '%-44s %5s ms %7s ms %6sx\n' "end of window -> SVG on disk" "$ours_ms" "$base_ms" "$ratio"
printf '%-44s %4s KiB %6s KiB\n' "peak RSS (classic: perf record)" "$ours_rss" "$rec_rss"
printf '%-44s %8s %6s KiB\n' "peak RSS (classic: perf script pipeline)" "" "$script_rss"
printf '%-44s %8s %10s\n' "samples" "$ours_samples" "$base_samples"
if [ -n "$TIME" ]; then
	printf '%-44s %5s ms %7s ms\n' "CPU time of the profiler (whole command)" \
		"$(cpu_ms "$W/ours.time")" "$(cpu_ms "$W/rec.time")"
	printf '%-44s %8s %7s ms\n' "CPU time of perf script | collapse (perf part)" "" \
		"$(cpu_ms "$W/script.time")"
fi
echo "# classic = flamesidecar map + perf script | flamesidecar collapse | flamesidecar render"
grep '^graph\|^resolved' "$W/ours.out"

#!/bin/bash
# bench/overhead.sh - what profiling costs the profiled workload: throughput
# of the Workload JVM (hotMethod calls per second, from its --ops-file) in a
# runc container, in alternating windows of one invocation:
#
#   none        nothing profiles it (the baseline)
#   run99       flamesidecar run at 99 Hz
#   run999      flamesidecar run at 999 Hz
#   perf99      perf record -g -p PID at 99 Hz
#   perf999     perf record -g -p PID at 999 Hz
#
# The modes rotate ROUNDS times so that drifting machine load hits every mode
# alike; each figure is the median over the rounds, printed with its ratio to
# `none` from the same invocation. Needs root, runc, openjdk-17 and perf
# (perf modes are left out without it).
#
# Usage: bench/overhead.sh [WINDOW_SECONDS [ROUNDS [BUILD_DIR]]]   (default 10 3)
set -euo pipefail
cd "$(dirname "$0")/.."
WIN=${1:-10}
ROUNDS=${2:-3}
export FS_TOP=$PWD FS_BUILD=${3:-$PWD/build}
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_root
bench_require_cmd runc
bench_require_jdk
bench_require_build
MODES="none run99 run999"
command -v perf >/dev/null && MODES="$MODES perf99 perf999"

bench_setup
NAME=benchovh-$$
# one hot thread: the other CPU is left for the profiler, as on a real host
bench_start_workload "$NAME" -- --threads 1 --ops-file /tmp/ops
fs_wait_for 10 test -s "$OPS"

# window MODE: ops per second over WIN seconds while MODE profiles
window() {
	local mode=$1 a b
	PROF=""
	case "$mode" in
	run*)
		"$FS_SIDECAR" run "$NAME" -d "$((WIN + 3))s" -F "${mode#run}" -o "$W/$mode.svg" -q \
			>/dev/null 2>"$W/$mode.err" &
		PROF=$!
		;;
	perf*)
		perf record -q -F "${mode#perf}" -g -p "$PID" -o "$W/$mode.data" -- sleep "$((WIN + 3))" \
			>/dev/null 2>&1 &
		PROF=$!
		;;
	esac
	sleep 1 # let the profiler open its events
	a=$(bench_read_ops)
	sleep "$WIN"
	b=$(bench_read_ops)
	if [ -n "$PROF" ]; then wait "$PROF" || true; fi
	PROF=""
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ");
		printf "%.1f\n", (y[1] - x[1]) * 1000 / (y[2] - x[2]) }'
}

echo "# bench/overhead.sh: $ROUNDS rounds of ${WIN}s windows, modes: $MODES"
echo "# Workload --threads 1 in runc, $(nproc) CPUs, load average $(bench_load)"
for r in $(seq 1 "$ROUNDS"); do
	for m in $MODES; do
		v=$(window "$m")
		echo "$m $v" >>"$W/results"
		echo "# round $r $m: $v ops/s"
	done
done
echo "# load average after: $(bench_load)"
base=$(awk '$1 == "none" { print $2 }' "$W/results" | bench_median)
printf '%-8s %12s %10s %10s\n' mode "ops/s (med)" "vs none" overhead
for m in $MODES; do
	med=$(awk -v m="$m" '$1 == m { print $2 }' "$W/results" | bench_median)
	awk -v m="$m" -v x="$med" -v b="$base" 'BEGIN {
		printf "%-8s %12.1f %9.3fx %9.1f%%\n", m, x, x / b, (1 - x / b) * 100 }'
done

#!/bin/bash
# bench/unwind.sh - what the HotSpot-aware unwinder costs against the kernel's
# frame-pointer chains: the Workload JVM (hotMethod calls per second, from
# its --ops-file) in a runc container WITHOUT -XX:+PreserveFramePointer, in
# alternating windows of one invocation:
#
#   none        nothing profiles it (the baseline)
#   fp99        flamesidecar run -F 99 --unwind fp      (kernel chains only)
#   copy99      flamesidecar run -F 99 --unwind hotspot (32 KiB stack copies)
#   fp999       the same at 999 Hz
#   copy999
#
# Per mode: the workload's ops/s (median over the rounds, with its ratio to
# `none`), its ops per CPU second of the JVM (utime + stime from /proc: less
# sensitive to other load on the machine than wall time, and it includes
# the sampling interrupts charged to the JVM), and the CPU time of the `run`
# process (user + system, /usr/bin/time, median). The modes rotate
# ROUNDS times so drifting load hits every mode alike. Needs root, runc,
# openjdk-17.
#
# Usage: bench/unwind.sh [WINDOW_SECONDS [ROUNDS [BUILD_DIR]]]   (default 8 3)
set -euo pipefail
cd "$(dirname "$0")/.."
WIN=${1:-8}
ROUNDS=${2:-3}
export FS_TOP=$PWD FS_BUILD=${3:-$PWD/build}
COPY=${FS_STACK_COPY:-}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_root
bench_require_cmd runc
[ -x /usr/bin/time ] || skip "/usr/bin/time is not installed"
bench_require_jdk
bench_require_build
MODES="none fp99 copy99 fp999 copy999"

bench_setup
NAME=benchunwind-$$
# one hot thread: the other CPU is left for the profiler, as on a real host
bench_start_workload "$NAME" --jvm-opt -XX:-PreserveFramePointer -- --threads 1 --ops-file /tmp/ops
fs_wait_for 10 test -s "$OPS"

# window MODE: ops per second over WIN seconds while MODE profiles, then
# the profiler's CPU seconds
window() {
	local mode=$1 a b hz unw cpu=0
	PROF=""
	case "$mode" in
	fp* | copy*)
		hz=${mode#fp}
		hz=${hz#copy}
		unw=fp
		[ "${mode#copy}" != "$mode" ] && unw=hotspot
		/usr/bin/time -f "%U %S" -o "$W/$mode.time" "$FS_SIDECAR" run "$NAME" \
			-d "$((WIN + 3))s" -F "$hz" --unwind "$unw" ${COPY:+--stack-copy "$COPY"} \
			-o "$W/$mode.svg" >"$W/$mode.out" 2>"$W/$mode.err" &
		PROF=$!
		;;
	esac
	sleep 1 # let the profiler open its events
	a=$(bench_read_ops)
	local j0 j1
	j0=$(jvm_cpu)
	sleep "$WIN"
	b=$(bench_read_ops)
	j1=$(jvm_cpu)
	if [ -n "$PROF" ]; then
		wait "$PROF" || true
		cpu=$(awk '{ print $1 + $2 }' "$W/$mode.time")
	fi
	PROF=""
	awk -v a="$a" -v b="$b" -v c="$cpu" -v j0="$j0" -v j1="$j1" 'BEGIN { split(a, x, " "); split(b, y, " ");
		printf "%.1f %.2f %.1f\n", (y[1] - x[1]) * 1000 / (y[2] - x[2]), c,
			(y[1] - x[1]) / ((j1 - j0) > 0 ? (j1 - j0) : 1) }'
}

TCK=$(getconf CLK_TCK)
# the JVM's CPU seconds so far (all threads)
jvm_cpu() { awk -v t="$TCK" '{ sub(/.*\) /, ""); printf "%.2f\n", ($12 + $13) / t }' "/proc/$PID/stat"; }

echo "# bench/unwind.sh: $ROUNDS rounds of ${WIN}s windows, modes: $MODES, stack copy ${COPY:-default}"
echo "# Workload --threads 1 in runc without frame pointers, $(nproc) CPUs, load average $(bench_load)"
for r in $(seq 1 "$ROUNDS"); do
	for m in $MODES; do
		v=$(window "$m")
		echo "$m $v" >>"$W/results"
		echo "# round $r $m: $v (ops/s, profiler CPU s, ops per JVM CPU s)"
	done
done
echo "# load average after: $(bench_load)"
grep -h '^unwind\|^unwinder' "$W"/copy*.out | sed 's/^/# /' || true
base=$(awk '$1 == "none" { print $2 }' "$W/results" | bench_median)
basec=$(awk '$1 == "none" { print $4 }' "$W/results" | bench_median)
printf '%-8s %12s %10s %16s %10s %16s\n' mode "ops/s (med)" "vs none" "ops/JVM CPU s" "vs none" "run CPU s (med)"
for m in $MODES; do
	x=$(awk -v m="$m" '$1 == m { print $2 }' "$W/results" | bench_median)
	c=$(awk -v m="$m" '$1 == m { print $3 }' "$W/results" | bench_median)
	e=$(awk -v m="$m" '$1 == m { print $4 }' "$W/results" | bench_median)
	awk -v m="$m" -v x="$x" -v b="$base" -v c="$c" -v e="$e" -v be="$basec" 'BEGIN {
		printf "%-8s %12.1f %9.3fx %16.1f %9.3fx %16.2f\n", m, x, x / b, e, e / be, c }'
done

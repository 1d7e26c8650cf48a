#!/bin/bash
# bench/jit-window.sh - the JIT window on a real application: the H2 database
# engine (Debian's libh2-java) running a SQL workload in a runc container
# (tests/java/flametest/H2Load.java, 2 threads).
#
#   1. end of window -> SVG: `flamesidecar run` (timed agent session over the
#      window, tail read at the end) against the classic pipeline in the same
#      invocation (perf record; then, timed from perf's exit: flamesidecar map
#      (oneshot dump of every JIT method) && perf script | flamesidecar
#      collapse | flamesidecar render). Also prints the JIT method count.
#   2. overhead of the agent's session on the workload: PAIRS alternating
#      windows of WIN seconds, one with `flamesidecar run -F 1 --no-map` (no
#      agent), one with `flamesidecar run -F 1` (the timed session: its dump,
#      its events, the reads every second, stop; sampling at 1 Hz is negligible
#      and the same in both); throughput (H2Load loops/s from its ops file) of
#      the profiled windows / the unprofiled ones, in ABBA order, and the JVM's
#      CPU time per loop. WARMUP (env, default 30) seconds before measuring.
#
# Needs root, runc, openjdk-17, perf, libh2-java and a built tree (make).
# Usage: bench/jit-window.sh [DURATION_SECONDS [PAIRS [WIN [BUILD_DIR]]]]  (default 10 5 10)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10}
PAIRS=${2:-5}
WIN=${3:-10}
export FS_TOP=$PWD FS_BUILD=${4:-$PWD/build}
H2=/usr/share/java/h2.jar

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_root
bench_require_cmd runc
bench_require_cmd perf linux-perf
bench_require_jdk
[ -f "$H2" ] || skip "no $H2 (apt-get install libh2-java)"
bench_require_build
[ -f "$FS_BUILD/java/flametest/H2Load.class" ] || skip "build first (make)"

bench_setup
NAME=benchjit-$$
# not the Workload: fs_start_jvm does not fit, the generic container does
bench_start_container "$NAME" 60 --mount "$FS_BUILD/java:/opt/fsjava" -- \
	"$JDK/bin/java" -XX:+PreserveFramePointer -cp "/opt/fsjava:$H2" flametest.H2Load \
	--threads 2 --ops-file /tmp/ops || { cat "$FS_TMP/$NAME/out.log"; exit 1; }
OPS=/proc/$PID/root/tmp/ops
now_ms() { date +%s%3N; }
ops() { cut -d' ' -f1 "$OPS"; }
sleep "${WARMUP:-30}" # let the JIT compile the engine's hot paths before measuring

echo "# bench/jit-window.sh: H2Load (2 threads) in runc, $(nproc) CPUs, load $(bench_load)"

# ---- 1. end of window -> SVG
(cd "$W" && "$FS_SIDECAR" run "$NAME" -d "${DUR}s" -F 99 -o ours.svg >"$W/ours.out" 2>"$W/ours.err")
ours_ms=$(sed -n 's/^graph *written \([0-9]*\) ms after.*/\1/p' "$W/ours.out")
(cd "$W" && perf record -q -F 99 -g -p "$PID" -o perf.data -- sleep "$DUR" >"$W/rec.out" 2>&1)
t0=$(now_ms)
"$FS_SIDECAR" map "$NAME" >"$W/map.out"
(cd "$W" && perf script -i perf.data 2>/dev/null | "$FS_SIDECAR" collapse |
	"$FS_SIDECAR" render -o base.svg)
base_ms=$(($(now_ms) - t0))
methods=$(grep -c '^[0-9a-f]* [0-9a-f]* [a-z]' "/tmp/perf-$PID.map" || true)
entries=$(sed -n "s/.*: \([0-9]*\) JIT symbols of \([0-9]*\) code loads over the window.*/\1 (\2 code loads)/p" "$W/ours.out")
ratio=$(awk -v b="$base_ms" -v o="$ours_ms" 'BEGIN { printf "%.1f", (o > 0 ? b / o : 0) }')
printf '%-40s %6s ms %8s ms %6sx\n' "end of window -> SVG on disk" "$ours_ms" "$base_ms" "$ratio"
echo "# JIT: $entries entries in the window's log; the classic map has $methods lines"
grep '^graph\|^resolved\|^jvm' "$W/ours.out"

# ---- 2. overhead of the timed agent session, alternating windows
# ABBA order (off on, on off, ...) so that a drift of the workload's speed (the
# JIT still warming up, other load coming and going) cancels out; besides
# loops/s, the JVM's CPU time per loop (utime + stime of the process), which
# other load on the machine disturbs less.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }
# CPU of the JVM's threads other than the workload's (the agent's work runs in
# the attach, compiler and service threads): the agent's own cost, which the
# workload's speed does not blur.
aux_ticks() {
	local n=0 t c
	for t in /proc/"$PID"/task/*; do
		case "$(cat "$t/comm" 2>/dev/null)" in h2-worker*) ;; *)
			c=$(awk '{ print $14 + $15 }' "$t/stat" 2>/dev/null || echo 0)
			n=$((n + c)) ;;
		esac
	done
	echo "$n"
}
off=0 on=0 off_cpu=0 on_cpu=0 off_aux=0 on_aux=0
window() { # window on|off: adds loops and CPU ticks of one window
	local a c b d x y
	a=$(ops); c=$(cpu_ticks); x=$(aux_ticks)
	# Both windows run the sidecar the same way (sampling at 1 Hz, its own
	# CPU on the machine); only "on" has the agent's timed session.
	if [ "$1" = on ]; then
		(cd "$W" && "$FS_SIDECAR" run "$NAME" -d "${WIN}s" -F 1 -o on.svg >/dev/null 2>&1)
	else
		(cd "$W" && "$FS_SIDECAR" run "$NAME" -d "${WIN}s" -F 1 --no-map -o off.svg \
			>/dev/null 2>&1)
	fi
	b=$(ops); d=$(cpu_ticks); y=$(aux_ticks)
	if [ "$1" = on ]; then on=$((on + b - a)); on_cpu=$((on_cpu + d - c)); on_aux=$((on_aux + y - x))
	else off=$((off + b - a)); off_cpu=$((off_cpu + d - c)); off_aux=$((off_aux + y - x)); fi
}
for i in $(seq "$PAIRS"); do
	if [ $((i % 2)) = 1 ]; then window off; window on; else window on; window off; fi
	echo "# pair $i: loops without $off (CPU ticks $off_cpu), with $on (CPU ticks $on_cpu)"
done
awk -v on="$on" -v off="$off" -v onc="$on_cpu" -v offc="$off_cpu" -v ona="$on_aux" \
	-v offa="$off_aux" -v n="$PAIRS" -v win="$WIN" 'BEGIN {
	printf "JVM CPU outside the workload threads per %d s window: with %.1f ms, without %.1f ms; the difference is %.2f%% of the JVM CPU of a window without\n",
		win, ona * 10 / n, offa * 10 / n, 100 * (ona - offa) / offc
	printf "throughput with the agent session / without: %.3f (%d / %d loops, ABBA)\n", on / off, on, off
	printf "JVM CPU per loop with / without: %.3f (%.2f / %.2f ticks per loop)\n",
		(onc / on) / (offc / off), onc / on, offc / off }'

#!/bin/bash
# bench/cgroup-switch.sh - what sampling a container by cgroup costs the
# tasks that switch between its cgroup and another one (a servlet and its
# load generator do, every request): bench/pingpong.c bounces a byte
# between a task moved into the cgroup of an (idle) jetty9 container and
# a task left on the host, both on CPU 0, N round trips per window, while
#
#   none        nothing samples
#   run99       flamesidecar run -F 99          (system-wide per-CPU events,
#               the kernel filter: a BPF program keeps the cgroup's samples)
#   run999      flamesidecar run -F 999         (with 32 KiB stack copies)
#   run99cg     flamesidecar run -F 99 --kernel-filter off  (per-CPU cgroup
#               events, PERF_FLAG_PID_CGROUP)
#   run999cg    flamesidecar run -F 999 --kernel-filter off
#   runfp999    flamesidecar run -F 999 --unwind fp
#   runpid999   flamesidecar run -F 999 --pid JVM (the kernel filter on the
#               JVM's tgid: no cgroup switching)
#   perfcg999   perf record -e cpu-clock -g -a -G CGROUP -F 999 (perf's
#               own cgroup mode: the same kernel mechanism)
#   perf999     perf record -g -F 999 -p JVM    (per-thread events)
#
# in rotated order, ROUNDS times, for each place in PLACES:
#
#   ctr   the child task in the container's cgroup (every round trip
#         crosses into and out of it: what a servlet and wrk do)
#   host  the child task in a new cgroup of the host beside the container:
#         neither task is in scope, so this is what profiling the container
#         costs the rest of the host (the kernel filter prepares and drops
#         their samples; cgroup events switch at their context switches)
#   idle  no ping-pong: IDLE_SECONDS (default 5) of the container and the
#         host doing nothing; the CPU column is then the busy CPU time of
#         all CPUs (/proc/stat) in ns per second of window, the wall column
#         the window: what the sampling costs a quiet host (system-wide
#         events tick on every CPU; cgroup events only where it runs)
#
# Prints wall and CPU (user + system of both tasks) ns per round trip, per
# window and as medians. Needs root,
# runc, jetty9, gcc, perf; cgroup v2 (or the v1 perf_event hierarchy).
#
# Usage: bench/cgroup-switch.sh [ROUND_TRIPS [ROUNDS [BUILD_DIR]]]   (default 100000 3)
#   MODES="none run999 run999cg ..." and PLACES="ctr host idle" select a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100000}
ROUNDS=${2:-3}
export FS_TOP=$PWD FS_BUILD=${3:-$PWD/build}
MODES=${MODES:-none run99 run999 run99cg run999cg runfp999 runpid999 perfcg999 perf999}
PLACES=${PLACES:-ctr host idle}
IDLE_SECONDS=${IDLE_SECONDS:-5}
TCK=$(getconf CLK_TCK)
# busy CPU ticks of all CPUs so far (user nice system irq softirq steal)
busy_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=tests/lib/apps.bash
. tests/lib/apps.bash
bench_require_root
bench_require_cmd runc
bench_require_cmd gcc
bench_require_cmd perf linux-perf
[ -x "$FS_SIDECAR" ] || skip "build first (make)"
app_require jetty

bench_setup
bench_warn_perf_events
gcc -O2 -Wall -o "$W/pingpong" bench/pingpong.c
NAME=benchcgsw-$$
app_start "$NAME" jetty || { echo "$BENCH: jetty did not start" >&2; exit 1; }
PID=$(fs_container_pid "$NAME")
v1=$(awk -F: '$2 ~ /(^|,)perf_event(,|$)/ { print $3 }' "/proc/$PID/cgroup")
v2=$(awk -F: '$1 == "0" { print $3 }' "/proc/$PID/cgroup")
if [ -n "$v1" ]; then
	procs=/sys/fs/cgroup/perf_event$v1/cgroup.procs cgname=${v1#/}
elif [ -d "/sys/fs/cgroup/unified$v2" ]; then
	procs=/sys/fs/cgroup/unified$v2/cgroup.procs cgname=${v2#/}
else
	procs=/sys/fs/cgroup$v2/cgroup.procs cgname=${v2#/}
fi
[ -w "$procs" ] || skip "no writable cgroup.procs for the container ($procs)"
# the host place: a sibling of the container's cgroup (removed at exit)
HOSTCG=$(dirname "$(dirname "$procs")")/benchcgsw-host-$$
mkdir "$HOSTCG"
trap 'rmdir "$HOSTCG" 2>/dev/null; bench_cleanup' EXIT
declare -A PROCS=([ctr]=$procs [host]=$HOSTCG/cgroup.procs)

# window PLACE MODE: "WALL_NS CPU_NS" per round trip while MODE samples
window() {
	local place=$1 m=$2 p=""
	case "$m" in
	run99 | run999) "$FS_SIDECAR" run "$NAME" -d 300s -F "${m#run}" --kernel-filter on -o "$W/x.svg" >/dev/null 2>&1 & p=$! ;;
	run99cg | run999cg)
		hz=${m#run}
		"$FS_SIDECAR" run "$NAME" -d 300s -F "${hz%cg}" --kernel-filter off -o "$W/x.svg" >/dev/null 2>&1 &
		p=$!
		;;
	runfp999) "$FS_SIDECAR" run "$NAME" -d 300s -F 999 --unwind fp -o "$W/x.svg" >/dev/null 2>&1 & p=$! ;;
	runpid999) "$FS_SIDECAR" run "$NAME" -d 300s -F 999 --pid "$PID" -o "$W/x.svg" >/dev/null 2>&1 & p=$! ;;
	perfcg999) perf record -q -e cpu-clock -F 999 -g -a -G "$cgname" -o "$W/p.data" >/dev/null 2>&1 & p=$! ;;
	perf999) perf record -q -F 999 -g -p "$PID" -o "$W/p.data" >/dev/null 2>&1 & p=$! ;;
	esac
	if [ -n "$p" ] && ! fs_wait_for 20 sh -c "[ \$(find /proc/$p/fd -lname 'anon_inode:*perf_event*' 2>/dev/null | wc -l) -gt 0 ]"; then
		echo "$BENCH: $m did not open its events" >&2
		kill -INT "$p" 2>/dev/null
		wait "$p" || true
		return 1
	fi
	if [ "$place" = idle ]; then
		local b0 b1
		b0=$(busy_ticks)
		sleep "$IDLE_SECONDS" # the measured window, not a synchronisation
		b1=$(busy_ticks)
		echo "$((IDLE_SECONDS * 1000000000)) $(((b1 - b0) * 1000000000 / TCK / IDLE_SECONDS))"
	else
		"$W/pingpong" "${PROCS[$place]}" "$N"
	fi
	if [ -n "$p" ]; then
		kill -INT "$p"
		wait "$p" || true
	fi
}

echo "# $BENCH: $ROUNDS rounds of $N round trips, modes: $MODES, places: $PLACES, load average $(bench_load)"
read -r -a MA <<<"$MODES"
nm=${#MA[@]}
for r in $(seq 1 "$ROUNDS"); do
	for place in $PLACES; do
		for k in $(seq 0 $((nm - 1))); do
			m=${MA[$(((k + r - 1) % nm))]}
			v=$(window "$place" "$m")
			echo "$place $m $v" >>"$W/results"
			echo "# round $r $place $m: $v (wall, CPU ns per round trip)"
		done
	done
done
echo "# load average after: $(bench_load)"
printf '%-5s %-10s %14s %14s %10s\n' place mode "wall ns/rt" "CPU ns/rt" "CPU - none"
for place in $PLACES; do
	base=$(awk -v p="$place" '$1 == p && $2 == "none" { print $4 }' "$W/results" | bench_median)
	for m in $MODES; do
		w=$(awk -v p="$place" -v m="$m" '$1 == p && $2 == m { print $3 }' "$W/results" | bench_median)
		c=$(awk -v p="$place" -v m="$m" '$1 == p && $2 == m { print $4 }' "$W/results" | bench_median)
		printf '%-5s %-10s %14d %14d %+10d\n' "$place" "$m" "$w" "$c" "$((c - base))"
	done
done

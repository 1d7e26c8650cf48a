#!/bin/bash
# bench/threads.sh - what per-thread aggregation (thread/tid labels in pprof)
# costs `flamesidecar run`, on one container in one invocation.
#
#   baseline  flamesidecar run NAME -d DURATION -F FREQ -o a.svg
#             (raw samples aggregated by (pid, callchain))
#   threads   the same with --pprof b.pb.gz: aggregated by (pid, thread,
#             callchain), thread names read, modules kept, pprof written
#
# The Workload runs THREADS hot threads with the same code (the worst case:
# every stack is repeated per thread). Alternating runs, ROUNDS each; prints
# the medians of: wall time after the window (whole command minus DURATION),
# CPU time (user + system) and peak RSS of the command (GNU time), the
# distinct stacks in the folded file and the pprof samples, and the ratios
# threads / baseline. Needs root, runc, openjdk-17, go (for the pprof sample
# count; else "-"), /usr/bin/time.
#
# Usage: bench/threads.sh [DURATION_SECONDS [FREQ [THREADS [ROUNDS]]]]
#        (defaults 10 999 8 3)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-10}
FREQ=${2:-999}
THREADS=${3:-8}
ROUNDS=${4:-3}
export FS_TOP=$PWD FS_BUILD=${BUILD:-$PWD/build}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_root
bench_require_cmd runc
bench_require_jdk
bench_require_build
[ -x /usr/bin/time ] || skip "needs GNU time (/usr/bin/time)"

bench_setup
NAME=benchthreads-$$
bench_start_workload "$NAME" -- --threads "$THREADS"

now_ms() { date +%s%3N; }
# one KIND ROUND: a run; appends "wall_ms cpu_ms rss_kib stacks samples" to $W/KIND
one() {
	local kind=$1 i=$2 extra=() t0 t1 cpu rss stacks samples=-
	[ "$kind" = threads ] && extra=(--pprof "$kind$i.pb.gz")
	t0=$(now_ms)
	(cd "$W" && /usr/bin/time -v -o "$W/$kind$i.time" "$FS_SIDECAR" run "$NAME" -d "${DUR}s" \
		-F "$FREQ" -q -o "$kind$i.svg" "${extra[@]}")
	t1=$(now_ms)
	cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%d", s * 1000 }' \
		"$W/$kind$i.time")
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$W/$kind$i.time")
	stacks=$(wc -l <"$W/$kind$i.folded")
	if [ "$kind" = threads ] && command -v go >/dev/null; then
		samples=$(go tool pprof -raw "$W/$kind$i.pb.gz" 2>/dev/null |
			awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
				s && /^ +[0-9]+ +-?[0-9]+:/ { n++ } END { print n + 0 }')
	fi
	echo "$((t1 - t0 - DUR * 1000)) $cpu $rss $stacks $samples" >>"$W/$kind"
}

echo "# bench/threads.sh: $DUR s at $FREQ Hz, Workload --threads $THREADS in runc, $(nproc) CPUs,"
echo "# $ROUNDS rounds each, alternating; load average before: $(bench_load)"
for i in $(seq 1 "$ROUNDS"); do
	one baseline "$i"
	one threads "$i"
done
echo "# load average after: $(bench_load)"

med() { awk -v c="$2" '{ print $c }' "$W/$1" | bench_median; }
printf '%-36s %10s %10s %7s\n' "median of $ROUNDS" baseline threads ratio
for col in 1:"wall after the window (ms)" 2:"CPU time of the command (ms)" \
	3:"peak RSS (KiB)" 4:"folded stacks" 5:"pprof samples"; do
	c=${col%%:*} label=${col#*:}
	b=$(med baseline "$c") t=$(med threads "$c")
	r=-
	[[ "$b" =~ ^[0-9]+$ && "$t" =~ ^[0-9]+$ && "$b" -gt 0 ]] && r=$(bench_ratio "$t" "$b")
	printf '%-36s %10s %10s %7s\n' "$label" "$b" "$t" "$r"
done

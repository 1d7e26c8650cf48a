#!/bin/bash
# bench/fp-cost.sh - what -XX:+PreserveFramePointer costs a JVM: the flag
# flamesidecar appends to JAVA_TOOL_OPTIONS of opted-in containers
# ("preserve_frame_pointer", docs/configuration.md). Two workloads, each as
# a ratio "on / off" measured in the same invocation, alternating:
#
#   workload  the project's Workload JVM (hotMethod calls per second, from its
#             --ops-file), a fresh JVM per window, on and off in ABBA order
#   jetty     Debian's jetty9 serving its default root page on 127.0.0.1
#             under wrk (requests per second): one JVM with the flag and one
#             without, both started and warmed up first, then wrk windows
#             against them in ABBA order
#
# Two figures per workload: throughput (work per wall-clock second) and
# work per CPU-second of the JVM (utime + stime from /proc/PID/stat over the
# same window). On a shared machine the first moves with whatever else runs;
# the second does not care how long the JVM waited for a CPU, so it is the
# one to read when the load average is above the CPU count. Each figure is
# the median over ROUNDS rounds (each round one window of each); the spread
# (min..max of on/off per round) is printed too. The JVMs run on the host:
# the flag's cost does not depend on the container.
#
# FLAG=dns measures -XX:+DebugNonSafepoints instead (also appended at
# creation, "debug_nonsafepoints"): "on" and "off" then both keep frame
# pointers and unlock diagnostic options, and differ only in that flag. A
# third figure, JVM start time ("java -version" to its exit, then jetty's
# start to its first answered request), is printed for either flag.
#
# Usage: [FLAG=fp|dns] bench/fp-cost.sh [WINDOW_SECONDS [ROUNDS [BUILD_DIR]]]   (default 10 6)
set -euo pipefail
cd "$(dirname "$0")/.."
WIN=${1:-10}
ROUNDS=${2:-6}
BUILD_DIR=${3:-$PWD/build}
JETTY_HOME=${JETTY_HOME:-/usr/share/jetty9}
FLAG=${FLAG:-fp}
case "$FLAG" in
fp)
	FP_ON=-XX:+PreserveFramePointer
	FP_OFF=-XX:-PreserveFramePointer
	;;
dns)
	FP_ON="-XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints"
	FP_OFF="-XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:-DebugNonSafepoints"
	;;
*)
	echo "FLAG must be fp or dns" >&2
	exit 2
	;;
esac

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_jdk
[ -d "$BUILD_DIR/java/flametest" ] || skip "build first (make)"

T=$(mktemp -d /tmp/fpcost.XXXXXX)
PIDS=()
cleanup() {
	set +e
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

cpu_ticks() { # utime + stime of a process, in clock ticks
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# ---- Workload: a fresh JVM per window --------------------------------------
# ops_window FLAG: "OPS_PER_S OPS_PER_CPU_S" over WIN seconds, 1 s after READY
ops_window() {
	local flag=$1 ops=$T/ops out=$T/wl.out a b c0 c1
	rm -f "$ops"
	# shellcheck disable=SC2086 # the flags are words
	"$JDK/bin/java" $flag -cp "$BUILD_DIR/java" flametest.Workload --threads 1 \
		--ops-file "$ops" >"$out" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	fs_wait_for 60 grep -q READY "$out" || { cat "$out" >&2; return 1; }
	sleep 1
	a=$(next_ops "$ops")
	c0=$(cpu_ticks "$pid")
	sleep "$WIN"
	b=$(next_ops "$ops")
	c1=$(cpu_ticks "$pid")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	awk -v a="$a" -v b="$b" -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" 'BEGIN {
		split(a, x, " "); split(b, y, " ");
		printf "%.1f %.1f\n", (y[1] - x[1]) * 1000 / (y[2] - x[2]), (y[1] - x[1]) * hz / c }'
}

# the ops file as "OPS MS" right after its next update (every 500 ms)
next_ops() {
	local first
	first=$(cat "$1" 2>/dev/null || true)
	fs_wait_for 5 sh -c "[ -s '$1' ] && [ \"\$(cat '$1')\" != \"$first\" ]"
	cat "$1"
}

# ---- jetty9 under wrk -------------------------------------------------------
# start_jetty NAME PORT FLAG: a jetty base serving the default root page
start_jetty() {
	local base=$T/$1
	mkdir -p "$base/webapps"
	cp -r "$JETTY_HOME/default-root" "$base/webapps/root"
	printf -- '--module=deploy,http\njetty.http.host=127.0.0.1\njetty.http.port=%s\n' "$2" \
		>"$base/start.ini"
	local t0
	t0=$(date +%s%N)
	# shellcheck disable=SC2086 # the flags are words
	(cd "$base" && exec "$JDK/bin/java" $3 -jar "$JETTY_HOME/start.jar" \
		"jetty.home=$JETTY_HOME" "jetty.base=$base" >"$base/jetty.log" 2>&1) &
	PIDS+=("$!")
	echo "$!" >"$base/pid"
	fs_wait_for 60 curl -sf -o /dev/null "http://127.0.0.1:$2/" || {
		tail -5 "$base/jetty.log" >&2
		return 1
	}
	echo "$1 $((($(date +%s%N) - t0) / 1000000))" >>"$T/jetty-start"
}

rps() { # rps PORT SECONDS [PID]: wrk's requests per second [and per CPU-second of PID]
	local c0 c1 out
	[ -z "${3:-}" ] || c0=$(cpu_ticks "$3")
	out=$(wrk -t1 -c16 -d"${2}s" "http://127.0.0.1:$1/")
	[ -z "${3:-}" ] || c1=$(cpu_ticks "$3")
	awk -v c="$((${c1:-1} - ${c0:-0}))" -v hz="$(getconf CLK_TCK)" '
		/ requests in / { n = $1 }
		/^Requests\/sec:/ { r = $2 }
		END { printf "%.1f %.1f\n", r, n * hz / c }' <<<"$out"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# report NAME COLUMN UNIT: medians and the on/off ratio from $T/NAME
# (lines "off|on A B" and "ratio RA RB"; COLUMN 2 is A, 3 is B)
report() {
	local f=$T/$1 k=$2 off on spread
	off=$(awk -v k="$k" '$1 == "off" { print $k }' "$f" | bench_median)
	on=$(awk -v k="$k" '$1 == "on" { print $k }' "$f" | bench_median)
	spread=$(awk -v k="$k" '$1 == "ratio" { print $k }' "$f" | sort -n |
		awk '{ v[NR] = $1 } END { printf "median %.3f, %.3f..%.3f",
			NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }')
	awk -v n="$1" -v u="$3" -v a="$off" -v b="$on" -v s="$spread" 'BEGIN {
		printf "%-9s %-12s off %10.1f  on %10.1f  on/off %.3f (per round: %s)  cost %.1f%%\n",
			n, u, a, b, b / a, s, (1 - b / a) * 100 }'
}

ratio_line() { # the last off and on lines -> "ratio RA RB"
	awk '$1 == "off" { o2 = $2; o3 = $3 } $1 == "on" { n2 = $2; n3 = $3 }
		END { print "ratio", n2 / o2, n3 / o3 }'
}

echo "# bench/fp-cost.sh FLAG=$FLAG: $ROUNDS rounds of ${WIN}s windows, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $("$JDK/bin/java" -version 2>&1 | head -1)"
# JVM start: `java -version` to its exit, alternating, 4 per round
: >"$T/start"
for r in $(seq 1 $((ROUNDS * 4))); do
	order="off on"
	[ $((r % 2)) = 0 ] && order="on off"
	for v in $order; do
		flag=$FP_OFF
		[ "$v" = on ] && flag=$FP_ON
		t0=$(date +%s%N)
		# shellcheck disable=SC2086 # the flags are words
		"$JDK/bin/java" $flag -version >/dev/null 2>&1
		echo "$v $((($(date +%s%N) - t0) / 1000000))" >>"$T/start"
	done
done
for v in off on; do
	echo "# java -version $v: median $(awk -v v="$v" '$1 == v { print $2 }' "$T/start" | bench_median) ms of $((ROUNDS * 4))"
done
: >"$T/workload"
for r in $(seq 1 "$ROUNDS"); do
	order="off on"
	[ $((r % 2)) = 0 ] && order="on off"
	for v in $order; do
		flag=$FP_OFF
		[ "$v" = on ] && flag=$FP_ON
		x=$(ops_window "$flag")
		echo "$v $x" >>"$T/workload"
		echo "# workload round $r $v ($flag): ${x% *} ops/s, ${x#* } ops per CPU-s"
	done
	tail -2 "$T/workload" | ratio_line >>"$T/workload"
done

if command -v wrk >/dev/null && command -v curl >/dev/null && [ -f "$JETTY_HOME/start.jar" ]; then
	: >"$T/jetty"
	# start time: a fresh jetty per try, alternating, to its first answer
	for r in $(seq 1 "$ROUNDS"); do
		order="off on"
		[ $((r % 2)) = 0 ] && order="on off"
		for v in $order; do
			flag=$FP_OFF
			[ "$v" = on ] && flag=$FP_ON
			port=$(free_port)
			start_jetty "start-$v-$r" "$port" "$flag"
			kill "$(cat "$T/start-$v-$r/pid")" 2>/dev/null || true
			wait "$(cat "$T/start-$v-$r/pid")" 2>/dev/null || true
		done
	done
	for v in off on; do
		echo "# jetty start to first answer, $v: median $(awk -v v="start-$v-" 'index($1, v) == 1 { print $2 }' "$T/jetty-start" | bench_median) ms of $ROUNDS"
	done
	P_OFF=$(free_port)
	P_ON=$(free_port)
	start_jetty off "$P_OFF" "$FP_OFF"
	start_jetty on "$P_ON" "$FP_ON"
	# warm both up (JIT) before measuring, alternately
	for _ in 1 2; do rps "$P_OFF" 10 >/dev/null; rps "$P_ON" 10 >/dev/null; done
	PID_OFF=$(cat "$T/off/pid")
	PID_ON=$(cat "$T/on/pid")
	for r in $(seq 1 "$ROUNDS"); do
		order="off on"
		[ $((r % 2)) = 0 ] && order="on off"
		for v in $order; do
			port=$P_OFF pid=$PID_OFF
			[ "$v" = on ] && port=$P_ON pid=$PID_ON
			x=$(rps "$port" "$WIN" "$pid")
			echo "$v $x" >>"$T/jetty"
			echo "# jetty round $r $v: ${x% *} requests/s, ${x#* } requests per CPU-s"
		done
		tail -2 "$T/jetty" | ratio_line >>"$T/jetty"
	done
else
	echo "# jetty: skipped (needs wrk, curl and jetty9 at $JETTY_HOME)"
fi
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
report workload 2 "ops/s"
report workload 3 "ops/CPU-s"
if [ -s "$T/jetty" ]; then
	report jetty 2 "req/s"
	report jetty 3 "req/CPU-s"
fi
exit 0

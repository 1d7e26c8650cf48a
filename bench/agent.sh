#!/bin/bash
# bench/agent.sh - what libflameagent.so costs a JVM, each figure printed
# beside its baseline from the same invocation, as a ratio.
#
#   bench/agent.sh [SECONDS] [REPEATS]     (defaults: 10 s windows, 7 attaches)
#
# 1. throughput of flametest.Workload (hotMethod calls/s, from --ops-file)
#    with -agentpath:...=continuous vs no agent: both JVMs side by side over
#    the same SECONDS window after READY (fair under background load);
# 2. wall time of `jcmd PID JVMTI.agent_load libflameagent.so oneshot`
#    vs `jcmd PID Compiler.perfmap` (the JDK's own map writer, JDK 17+)
#    vs `jcmd PID VM.version` (attach round trip alone), median of REPEATS.
# Needs a built tree (make). Environment: BUILD (default build), JAVA_HOME.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SECS=${1:-10}
REPS=${2:-7}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
AGENT="$PWD/$BUILD/libflameagent.so"
CP="$PWD/$BUILD/java"
[ -f "$AGENT" ] && [ -f "$CP/flametest/Workload.class" ] || { echo "build first: make" >&2; exit 1; }
TMP=$(mktemp -d /tmp/bench-agent.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; rm -f "/tmp/perf-$p.map"; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# start NAME [JVM options...]: a Workload with an ops file; sets PID.
start() {
	local name=$1
	shift
	env --default-signal=QUIT "$JAVA_HOME/bin/java" -XX:+PreserveFramePointer "$@" -cp "$CP" \
		flametest.Workload --ops-file "$TMP/$name.ops" --exit-after $((SECS + 60)) \
		>"$TMP/$name.out" 2>&1 &
	PID=$!
	PIDS+=("$PID")
	local end=$((SECONDS + 60))
	until grep -q '^READY$' "$TMP/$name.out" 2>/dev/null; do
		[ "$SECONDS" -lt "$end" ] || { cat "$TMP/$name.out" >&2; exit 1; }
		sleep 0.1
	done
}

# rates NAME...: hotMethod calls per second of each, over the same SECS
# seconds (the JVMs run side by side, so both see the same machine load).
rates() {
	local n o t
	declare -A o1 t1
	for n in "$@"; do
		until [ -s "$TMP/$n.ops" ]; do sleep 0.1; done
		read -r o t <"$TMP/$n.ops"
		o1[$n]=$o t1[$n]=$t
	done
	sleep "$SECS"
	for n in "$@"; do
		read -r o t <"$TMP/$n.ops"
		awk -v o1="${o1[$n]}" -v t1="${t1[$n]}" -v o2="$o" -v t2="$t" \
			'BEGIN { printf "%.1f ", (o2 - o1) * 1000 / (t2 - t1) }'
	done
	echo
}

median_ms() { # command...: median wall ms of REPS runs
	local i t0 t1 all=()
	for ((i = 0; i < REPS; i++)); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s%N)
		all+=($(((t1 - t0) / 1000000)))
	done
	printf '%s\n' "${all[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

echo "== throughput, side by side over $SECS s, $(nproc) CPUs, $("$JAVA_HOME/bin/java" -version 2>&1 | head -1)"
start base
base_pid=$PID
start agent "-agentpath:$AGENT=continuous"
agent_pid=$PID
read -r base agent < <(rates base agent)
lines=$(wc -l <"/tmp/perf-$agent_pid.map")
kill "$base_pid" "$agent_pid"
printf 'no agent:          %10s calls/s\n' "$base"
printf 'agent, continuous: %10s calls/s   ratio %.3f  (map: %s lines)\n' "$agent" \
	"$(awk -v a="$agent" -v b="$base" 'BEGIN { print a / b }')" "$lines"

echo "== attach, median of $REPS"
start attach
jcmd=$JAVA_HOME/bin/jcmd
rt=$(median_ms "$jcmd" "$PID" VM.version)
jdk=$(median_ms "$jcmd" "$PID" Compiler.perfmap)
jdk_lines=$(wc -l <"/tmp/perf-$PID.map")
ours=$(median_ms "$jcmd" "$PID" JVMTI.agent_load "$AGENT" oneshot)
our_lines=$(wc -l <"/tmp/perf-$PID.map")
ours_flat=$(median_ms "$jcmd" "$PID" JVMTI.agent_load "$AGENT" oneshot,nounfold)
for ((i = 0; i < REPS; i++)); do
	"$jcmd" "$PID" JVMTI.agent_load "$AGENT" oneshot,verbose >/dev/null
done
inside=$(grep -o 'in [0-9.]* ms' "$TMP/attach.out" | awk '{ print $2 }' | sort -n |
	awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
printf 'jcmd VM.version (round trip):     %5d ms\n' "$rt"
printf 'jcmd Compiler.perfmap (JDK):      %5d ms  %6d lines\n' "$jdk" "$jdk_lines"
printf 'agent oneshot (unfoldall):        %5d ms  %6d lines  ratio to Compiler.perfmap %.2f, beyond round trip %+d ms\n' \
	"$ours" "$our_lines" "$(awk -v a="$ours" -v b="$jdk" 'BEGIN { print a / b }')" $((ours - rt))
printf 'agent oneshot, inside the JVM:    %7.1f ms (its own report, option verbose)\n' "$inside"
printf 'agent oneshot,nounfold:           %5d ms          ratio to Compiler.perfmap %.2f\n' \
	"$ours_flat" "$(awk -v a="$ours_flat" -v b="$jdk" 'BEGIN { print a / b }')"

#!/bin/bash
# bench/rtmaps.sh - end of window -> SVG for a container holding a JVM (the
# Workload), a node process and a busy bash loop, with node's JIT frames named
# from its perf map (docs/runtimes.md) against the same container where node
# writes no map (the baseline: nothing to read for it), in the same
# invocation. node runs a script of FUNCS generated functions, called in a
# loop, so its map is of a real application's size (FUNCS lines and more).
#
#   RUNS alternating windows of DUR seconds each: `run` with the map, `run`
#   without it (two containers, ABAB); the median of "graph written N ms after
#   the window closed" and of its "JIT maps" phase (where the maps are read)
#   of each, and the ratio.
#
# Needs root, runc, openjdk-17, node and a built tree (make).
# Usage: bench/rtmaps.sh [DURATION_SECONDS [RUNS [FUNCS [BUILD_DIR]]]]  (default 5 5 20000)
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-5}
RUNS=${2:-5}
FUNCS=${3:-20000}
export FS_TOP=$PWD FS_BUILD=${4:-$PWD/build}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_root
bench_require_cmd runc
bench_require_cmd node nodejs
bench_require_jdk
bench_require_build
[ -f "$FS_BUILD/java/flametest/Workload.class" ] || skip "build first (make)"

bench_setup
mkdir -p "$W/app"
# FUNCS small functions, each compiled once (a map line each), and a hot loop
awk -v n="$FUNCS" 'BEGIN {
	for (i = 0; i < n; i++) printf "function f%d(x) { return (x * %d + 7) %% 1009; }\n", i, i
	printf "const fs = ["; for (i = 0; i < n; i++) printf "f%d,", i; print "];"
	print "let s = 0;"
	print "for (let r = 0; r < 3; r++) for (const f of fs) for (let k = 0; k < 20; k++) s += f(k);"
	print "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }"
	print "console.log(\"READY\");"
	print "for (;;) s += fib(25);"
}' >"$W/app/app.js"
chmod -R a+rX "$W/app"

# start NAME NODE_OPTS: the Workload JVM, node and a bash loop in one container
start() {
	bench_start_container "$1" 90 --mount "$FS_BUILD/java:/opt/fsjava" --mount "$W/app:/app" -- \
		/bin/sh -c "bash -c 'while :; do :; done' & node $2 /app/app.js & exec \"\$@\"" sh \
		"$JDK/bin/java" -XX:+PreserveFramePointer -cp /opt/fsjava flametest.Workload --threads 1
	fs_wait_for 60 sh -c "[ \$(grep -c READY '$FS_TMP/$1/out.log') -ge 2 ]"
}
A=benchrt-map-$$
B=benchrt-none-$$
start "$A" --perf-basic-prof
start "$B" ""

echo "# bench/rtmaps.sh: JVM + node ($FUNCS functions) + bash in runc, $(nproc) CPUs, load $(bench_load)"
for i in $(seq "$RUNS"); do
	for c in "$A" "$B"; do
		(cd "$W" && "$FS_SIDECAR" run "$c" -d "${DUR}s" -F 99 -o "$c.svg" >"$W/$c.$i.out" 2>/dev/null)
		sed -n 's/^graph *written \([0-9]*\) ms after.*(JIT maps \([0-9.]*\) ms.*/\1 \2/p' \
			"$W/$c.$i.out" >>"$W/$c.ms"
	done
done
ma=$(cut -d' ' -f1 "$W/$A.ms" | bench_median)
mb=$(cut -d' ' -f1 "$W/$B.ms" | bench_median)
ja=$(cut -d' ' -f2 "$W/$A.ms" | bench_median)
jb=$(cut -d' ' -f2 "$W/$B.ms" | bench_median)
printf '%-48s %6s ms (JIT maps %s ms)\n' "end of window -> SVG, node named from its map" "$ma" "$ja"
printf '%-48s %6s ms (JIT maps %s ms)\n' "the same, node without a map (baseline)" "$mb" "$jb"
echo "ratio with / without: $(bench_ratio "$ma" "$mb")"
grep '^perf map' "$W/$A.$RUNS.out" || echo "# no perf map line: see $W/$A.$RUNS.out"
grep '^graph' "$W/$A.$RUNS.out" "$W/$B.$RUNS.out"

#!/bin/bash
# bench/hotspot.sh - `flamesidecar map --mode vmstructs` (the code cache read
# from the host) against the attach modes on the same warm JVM, in the same
# invocation: the agent (baseline: the default) and jcmd Compiler.perfmap.
# The JVM is a real application with a large code cache: javac (the JDK's
# own compiler, in process through javax.tools) compiling the test workload
# in a loop, in a runc container. Prints median wall times and the map
# entries of each mode. Needs root, runc, openjdk-17 and a built tree (make).
# Usage: bench/hotspot.sh [BUILD_DIR]; another JDK: JAVA_HOME_17=/usr/lib/jvm/X bench/hotspot.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export FS_TOP=$PWD FS_BUILD=${1:-$PWD/build}
RUNS=${RUNS:-11}
WARM_S=${WARM_S:-20}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_root
bench_require_cmd runc
[ -x "$JDK/bin/javac" ] || skip "no javac in $JDK"
bench_require_build

bench_setup
PID=

# The application: javac in a loop, compiled on the host, mounted read-only.
app=$FS_TMP/app
mkdir -p "$app"
cat >"$app/JavacLoop.java" <<'JAVA'
import javax.tools.ToolProvider;
public class JavacLoop {
	public static void main(String[] a) throws Exception {
		var c = ToolProvider.getSystemJavaCompiler();
		for (long i = 0;; i++) {
			c.run(null, null, null, "-d", "/tmp/out", a[0]);
			if (i == 3) System.out.println("READY");
		}
	}
}
JAVA
"$JDK/bin/javac" -d "$app" "$app/JavacLoop.java"
cp tests/java/flametest/Workload.java "$app/"

NAME=bench-hs-$$
bench_start_container "$NAME" 120 --mount "$app:/opt/app" -- \
	"$JDK/bin/java" -cp /opt/app JavacLoop /opt/app/Workload.java ||
	skip "javac loop did not start: $(cat "$FS_TMP/$NAME/out.log")"
sleep "$WARM_S" # let the JIT compile the application's hot code (a warm-up, not a synchronisation)

echo "bench/hotspot.sh: $(nproc) CPUs, load average $(bench_load)," \
	"$($JDK/bin/java -version 2>&1 | head -1)"
declare -A t e
for mode in agent jcmd vmstructs; do
	"$FS_SIDECAR" map "$NAME" --mode "$mode" >/dev/null # warm: listener running, agent loaded
	v=()
	for _ in $(seq "$RUNS"); do v+=("$(bench_ms "$FS_SIDECAR" map "$NAME" --mode "$mode")"); done
	t[$mode]=$(printf '%s\n' "${v[@]}" | bench_median_mean)
	e[$mode]=$(wc -l <"/tmp/perf-$PID.map")
done
inl=$(grep -c -- '->' "/tmp/perf-$PID.map" || true)
printf '\n%-32s %10s %10s %10s\n' "map mode (median of $RUNS)" "ms" "entries" "vs agent"
for mode in agent jcmd vmstructs; do
	printf '%-32s %10s %10s %9sx\n' "$mode" "${t[$mode]}" "${e[$mode]}" \
		"$(awk -v a="${t[$mode]}" -v b="${t[agent]}" 'BEGIN { printf "%.2f", a / b }')"
done
echo "vmstructs map: $inl inlined ranges"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

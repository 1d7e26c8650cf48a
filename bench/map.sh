#!/bin/bash
# bench/map.sh - wall time of `flamesidecar map <id>` against its baseline,
# `jcmd <host pid> Compiler.perfmap` (the JDK's own attach client), measured
# in the same invocation on the same kind of container:
#   warm:  the JVM's attach listener already runs (median of WARM_RUNS)
#   first: the first attach to a freshly started JVM (SIGQUIT, listener
#          start), a new container per sample (median of FIRST_RUNS)
# and the map entries each produced. Needs root, runc, openjdk-17 and a
# built tree (make). Usage: bench/map.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
export FS_TOP=$PWD FS_BUILD=${1:-$PWD/build}
WARM_RUNS=${WARM_RUNS:-21}
FIRST_RUNS=${FIRST_RUNS:-5}
JCMD_WARM_RUNS=${JCMD_WARM_RUNS:-7}

# shellcheck source=bench/lib.sh
. bench/lib.sh
JCMD=$JDK/bin/jcmd
bench_require_root
bench_require_cmd runc
[ -x "$JCMD" ] || skip "no jcmd in $JDK"
bench_require_build

bench_setup
n=0
# start_jvm: a fresh container running the Workload JVM; sets NAME and PID.
start_jvm() {
	n=$((n + 1))
	NAME=bench$n-$$
	bench_start_workload "$NAME" -- --warmup 1
}

stop_jvm() {
	runc kill "$NAME" KILL >/dev/null 2>&1 || true
	fs_wait_for 10 sh -c "! runc state $NAME 2>/dev/null | grep -q running"
	runc delete -f "$NAME" >/dev/null 2>&1 || true
	rm -f "/tmp/perf-$PID.map"
}

entries_ours() { wc -l <"/tmp/perf-$1.map"; }
entries_jcmd() { wc -l <"/proc/$1/root/tmp/perf-1.map"; }

echo "bench/map.sh: $(nproc) CPUs, load average $(bench_load)," \
	"$($JDK/bin/java -version 2>&1 | head -1)"

# ---- first attach: a fresh JVM per sample --------------------------------
first_ours=() first_jcmd=()
for _ in $(seq "$FIRST_RUNS"); do
	start_jvm
	first_ours+=("$(bench_ms "$FS_SIDECAR" map "$NAME")")
	stop_jvm
	start_jvm
	first_jcmd+=("$(bench_ms "$JCMD" "$PID" Compiler.perfmap)")
	stop_jvm
done

# ---- warm: one JVM whose listener already runs ---------------------------
start_jvm
"$FS_SIDECAR" map "$NAME" >/dev/null
"$JCMD" "$PID" Compiler.perfmap >/dev/null
warm_ours=() warm_jcmd=()
for _ in $(seq "$JCMD_WARM_RUNS"); do warm_jcmd+=("$(bench_ms "$JCMD" "$PID" Compiler.perfmap)"); done
ent_jcmd=$(entries_jcmd "$PID")
for _ in $(seq "$WARM_RUNS"); do warm_ours+=("$(bench_ms "$FS_SIDECAR" map "$NAME")"); done
ent_agent=$(entries_ours "$PID")
"$FS_SIDECAR" map "$NAME" --mode jcmd >/dev/null
ent_ours_jcmd=$(entries_ours "$PID")
warm_ours_jcmd=()
for _ in $(seq "$WARM_RUNS"); do warm_ours_jcmd+=("$(bench_ms "$FS_SIDECAR" map "$NAME" --mode jcmd)"); done

fo=$(printf '%s\n' "${first_ours[@]}" | bench_median_mean)
fj=$(printf '%s\n' "${first_jcmd[@]}" | bench_median_mean)
wo=$(printf '%s\n' "${warm_ours[@]}" | bench_median_mean)
woj=$(printf '%s\n' "${warm_ours_jcmd[@]}" | bench_median_mean)
wj=$(printf '%s\n' "${warm_jcmd[@]}" | bench_median_mean)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", b / a }'; }

printf '\n%-44s %10s %10s %8s\n' "case (median wall time)" "ours ms" "jcmd ms" "speedup"
printf '%-44s %10s %10s %8s\n' "first attach, fresh JVM (n=$FIRST_RUNS)" "$fo" "$fj" "$(ratio "$fo" "$fj")"
printf '%-44s %10s %10s %8s\n' "warm, agent mode (n=$WARM_RUNS / $JCMD_WARM_RUNS)" "$wo" "$wj" "$(ratio "$wo" "$wj")"
printf '%-44s %10s %10s %8s\n' "warm, --mode jcmd (n=$WARM_RUNS / $JCMD_WARM_RUNS)" "$woj" "$wj" "$(ratio "$woj" "$wj")"
echo "load average after: $(bench_load)"
printf 'map entries: ours (agent) %s, ours (--mode jcmd) %s, jcmd Compiler.perfmap %s\n' \
	"$ent_agent" "$ent_ours_jcmd" "$ent_jcmd"

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
JDK=${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}
JCMD=$JDK/bin/jcmd

skip() { echo "bench/map.sh: skipped: $*" >&2; exit 0; }
# shellcheck source=../tests/lib/containers.bash
. tests/lib/containers.bash
[ "$(id -u)" = 0 ] || skip "needs root"
command -v runc >/dev/null || skip "runc is not installed"
[ -x "$JCMD" ] || skip "no jcmd in $JDK"
[ -x "$FS_SIDECAR" ] && [ -d "$FS_BUILD/java/flametest" ] || skip "build first (make)"

fs_setup
PIDS=()
cleanup() {
	set +e # fs_cleanup expects errors from runc state of deleted containers
	for p in "${PIDS[@]}"; do rm -f "/tmp/perf-$p.map"; done
	fs_cleanup
}
trap cleanup EXIT

n=0
# start_jvm: a fresh container running the Workload JVM; sets NAME and PID.
start_jvm() {
	n=$((n + 1))
	NAME=bench$n-$$
	local dir=$FS_TMP/$NAME args
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true -- true
	args=$(printf '%s\n' "$JDK/bin/java" -XX:+PreserveFramePointer -cp /opt/fsjava \
		flametest.Workload --warmup 1 | jq -R . | jq -cs .)
	jq --arg s "$FS_BUILD/java" --argjson a "$args" '.process.args = $a |
		.mounts += [{destination: "/opt/fsjava", type: "bind", source: $s, options: ["rbind", "ro"]}]' \
		"$dir/config.json" >"$dir/c.json" && mv "$dir/c.json" "$dir/config.json"
	fs_runc_run "$NAME" "$dir"
	PID=$(fs_container_pid "$NAME")
	PIDS+=("$PID")
	fs_wait_for 30 grep -q READY "$dir/out.log"
	fs_wait_for 10 test -f "$FS_RUN/containers/$NAME.json"
}

stop_jvm() {
	runc kill "$NAME" KILL >/dev/null 2>&1 || true
	fs_wait_for 10 sh -c "! runc state $NAME 2>/dev/null | grep -q running"
	runc delete -f "$NAME" >/dev/null 2>&1 || true
	rm -f "/tmp/perf-$PID.map"
}

# ms CMD...: run CMD, print its wall time in milliseconds (fails if CMD does).
ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	awk -v d=$((t1 - t0)) 'BEGIN { printf "%.2f\n", d / 1e6 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

entries_ours() { wc -l <"/tmp/perf-$1.map"; }
entries_jcmd() { wc -l <"/proc/$1/root/tmp/perf-1.map"; }

echo "bench/map.sh: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
	"$($JDK/bin/java -version 2>&1 | head -1)"

# ---- first attach: a fresh JVM per sample --------------------------------
first_ours=() first_jcmd=()
for _ in $(seq "$FIRST_RUNS"); do
	start_jvm
	first_ours+=("$(ms "$FS_SIDECAR" map "$NAME")")
	stop_jvm
	start_jvm
	first_jcmd+=("$(ms "$JCMD" "$PID" Compiler.perfmap)")
	stop_jvm
done

# ---- warm: one JVM whose listener already runs ---------------------------
start_jvm
"$FS_SIDECAR" map "$NAME" >/dev/null
"$JCMD" "$PID" Compiler.perfmap >/dev/null
warm_ours=() warm_jcmd=()
for _ in $(seq "$JCMD_WARM_RUNS"); do warm_jcmd+=("$(ms "$JCMD" "$PID" Compiler.perfmap)"); done
ent_jcmd=$(entries_jcmd "$PID")
for _ in $(seq "$WARM_RUNS"); do warm_ours+=("$(ms "$FS_SIDECAR" map "$NAME")"); done
ent_agent=$(entries_ours "$PID")
"$FS_SIDECAR" map "$NAME" --mode jcmd >/dev/null
ent_ours_jcmd=$(entries_ours "$PID")
warm_ours_jcmd=()
for _ in $(seq "$WARM_RUNS"); do warm_ours_jcmd+=("$(ms "$FS_SIDECAR" map "$NAME" --mode jcmd)"); done

fo=$(printf '%s\n' "${first_ours[@]}" | median)
fj=$(printf '%s\n' "${first_jcmd[@]}" | median)
wo=$(printf '%s\n' "${warm_ours[@]}" | median)
woj=$(printf '%s\n' "${warm_ours_jcmd[@]}" | median)
wj=$(printf '%s\n' "${warm_jcmd[@]}" | median)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", b / a }'; }

printf '\n%-44s %10s %10s %8s\n' "case (median wall time)" "ours ms" "jcmd ms" "speedup"
printf '%-44s %10s %10s %8s\n' "first attach, fresh JVM (n=$FIRST_RUNS)" "$fo" "$fj" "$(ratio "$fo" "$fj")"
printf '%-44s %10s %10s %8s\n' "warm, agent mode (n=$WARM_RUNS / $JCMD_WARM_RUNS)" "$wo" "$wj" "$(ratio "$wo" "$wj")"
printf '%-44s %10s %10s %8s\n' "warm, --mode jcmd (n=$WARM_RUNS / $JCMD_WARM_RUNS)" "$woj" "$wj" "$(ratio "$woj" "$wj")"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'map entries: ours (agent) %s, ours (--mode jcmd) %s, jcmd Compiler.perfmap %s\n' \
	"$ent_agent" "$ent_ours_jcmd" "$ent_jcmd"

#!/bin/bash
# bench/map.sh - wall time of `flamesidecar map <id>` against its baseline,
# `jcmd <host pid> Compiler.perfmap` (the JDK's own attach client), measured
# in the same invocation on the same kind of container:
#   warm:  the JVM's attach listener already runs (median of WARM_RUNS)
#   first: the first attach to a freshly started JVM (SIGQUIT, listener
#          start), a new container per sample (median of FIRST_RUNS)
# and the map entries each produced. Then the whole process on a node with
# many containers: the warm JVM's `map` (agent and --mode jcmd) and a miss
# (`map` of an unknown name: process start, config, registry, no attach)
# with 0 and REGISTERED (default 1,000) other containers registered (live
# entries with names, as the hook writes them), rounds interleaved, against
# jcmd in the same run; FS_BENCH_BASE_SIDECAR=/path/to/an/older/flamesidecar
# adds its rows (e.g. one built from before the name index). With perf, the
# same cases' CPU time too (task-clock of the process tree: ours and the
# sandboxed child, not the JVM), which other load disturbs far less. The run
# directory is a tmpfs, as /run is on hosts.
# Needs root, runc, openjdk-17 and a built tree (make).
# Usage: bench/map.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
export FS_TOP=$PWD FS_BUILD=${1:-$PWD/build}
WARM_RUNS=${WARM_RUNS:-21}
FIRST_RUNS=${FIRST_RUNS:-5}
JCMD_WARM_RUNS=${JCMD_WARM_RUNS:-7}
SCALE_ROUNDS=${SCALE_ROUNDS:-21}
SCALE_CPU_ROUNDS=${SCALE_CPU_ROUNDS:-11}
REGISTERED=${REGISTERED:-1000}
BASE=${FS_BENCH_BASE_SIDECAR:-}

# shellcheck source=bench/lib.sh
. bench/lib.sh
JCMD=$JDK/bin/jcmd
bench_require_root
bench_require_cmd runc
[ -x "$JCMD" ] || skip "no jcmd in $JDK"
bench_require_build

bench_setup
mkdir -p "$FS_RUN"
mount -t tmpfs -o mode=0700,size=64m fsbenchmap "$FS_RUN" # fs_cleanup unmounts it
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

# ---- many containers on the node ----------------------------------------
# ms CMD...: wall time of CMD in ms, timed in-process (no date fork).
ms() {
	local t0=$EPOCHREALTIME t1
	"$@" >/dev/null 2>&1 || true
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", (b - a) * 1000 }'
}
# register COUNT: COUNT live containers named svc-N (a sleeping process's
# pid and start time, in our pid namespace) besides the JVM's.
register() {
	sleep 3600 &
	SLEEPER=$!
	trap 'kill $SLEEPER 2>/dev/null; bench_cleanup' EXIT
	local st ns i id tail=c0ffee0123456789abcdef0123456789abcdef0123456789abcdef0123
	st=$(awk '{print $22}' "/proc/$SLEEPER/stat")
	ns=$(stat -L -c %i /proc/self/ns/pid)
	for ((i = 0; i < $1; i++)); do
		printf -v id '%04x%s' "$i" "$tail"
		printf '{"id":"%s","pid":%d,"start_time":%s,"ns_pid":1,"pid_ns":1,"mnt_ns":1,"host_pid_ns":%s,"uid":1000,"gid":1000,"rootfs":"/x","bundle":"/x","mount_point":"","created":1700000000,"hook_version":"b","annotations":{"profile":"","delay":"","frequency":""},"names":{"engine":"docker","name":"svc-%d","pod":"","namespace":"","container":""}}\n' \
			"$id" "$SLEEPER" "$st" "$ns" "$i" >"$FS_RUN/containers/$id.json"
	done
	chmod 0600 "$FS_RUN/containers"/*.json
}
# cpu CMD...: CPU time of CMD's process tree in ms (perf stat task-clock:
# the sandboxed child counted, the JVM not), far less disturbed by other
# load than wall time.
PERF=$(command -v perf || true)
cpu() {
	"$PERF" stat -x, -e task-clock -o "$FS_TMP/perf.out" -- "$@" >/dev/null 2>&1 || true
	awk -F, '/task-clock/ {printf "%.3f\n", $1; exit}' "$FS_TMP/perf.out"
}
# scale_round TAG ROUND [cpu]: one timing of each case (order rotated by
# round) into $FS_TMP/scale.TAG.BIN.CASE (wall ms), or with cpu into
# $FS_TMP/cpu.TAG.BIN.CASE (CPU ms).
scale_round() {
	local tag=$1 round=$2 how=${3:-ms} cases=(agent jcmdmode miss) k c bin
	for ((k = 0; k < ${#cases[@]}; k++)); do
		c=${cases[$(((k + round) % ${#cases[@]}))]}
		for bin in ours ${BASE:+base}; do
			local exe=$FS_SIDECAR out="$FS_TMP/scale.$tag.$bin.$c"
			[ "$bin" = base ] && exe=$BASE
			[ "$how" = cpu ] && out="$FS_TMP/cpu.$tag.$bin.$c"
			case $c in
			agent) "$how" "$exe" map "$NAME" ;;
			jcmdmode) "$how" "$exe" map "$NAME" --mode jcmd ;;
			miss) "$how" "$exe" map svc-nosuch ;;
			esac >>"$out"
		done
	done
}
# scale_rounds TAG: the wall rounds, then (with perf) the CPU rounds.
scale_rounds() {
	local r
	for ((r = 0; r < SCALE_ROUNDS; r++)); do scale_round "$1" "$r"; done
	[ -z "$PERF" ] || for ((r = 0; r < SCALE_CPU_ROUNDS; r++)); do scale_round "$1" "$r" cpu; done
}
scale_med() { bench_median_mean <"$FS_TMP/${4:-scale}.$1.$2.$3"; }

"$FS_SIDECAR" gc >/dev/null
others0=$(($(find "$FS_RUN/containers" -maxdepth 1 -name '*.json' | wc -l) - 1))
scale_rounds 0
scale_jcmd=()
for _ in $(seq "$JCMD_WARM_RUNS"); do scale_jcmd+=("$(ms "$JCMD" "$PID" Compiler.perfmap)"); done
register "$REGISTERED"
if [ -n "$BASE" ]; then
	base_first=$(ms "$BASE" map svc-nosuch)
fi
first_build=$(ms "$FS_SIDECAR" map svc-nosuch) # no index yet: reads all, builds it
scale_rounds many
for _ in $(seq "$JCMD_WARM_RUNS"); do scale_jcmd+=("$(ms "$JCMD" "$PID" Compiler.perfmap)"); done
sj=$(printf '%s\n' "${scale_jcmd[@]}" | bench_median_mean)
sjc=-
if [ -n "$PERF" ]; then
	for _ in 1 2 3; do cpu "$JCMD" "$PID" Compiler.perfmap; done >"$FS_TMP/cpu.jcmd"
	sjc=$(bench_median_mean <"$FS_TMP/cpu.jcmd")
fi

printf '\nwhole process, warm JVM; jcmd Compiler.perfmap %s ms (median of %d)\n' "$sj" "${#scale_jcmd[@]}"
printf '%-34s %14s %14s %9s\n' "case (median of $SCALE_ROUNDS)" "$others0 others ms" "$REGISTERED others ms" "vs jcmd"
for bin in ours ${BASE:+base}; do
	for c in agent jcmdmode miss; do
		a=$(scale_med 0 "$bin" "$c")
		b=$(scale_med many "$bin" "$c")
		label="$bin: map $NAME"
		[ "$c" = jcmdmode ] && label="$bin: map --mode jcmd"
		[ "$c" = miss ] && label="$bin: map of an unknown name"
		vs=$(ratio "$b" "$sj")
		[ "$c" = miss ] && vs=-
		printf '%-34s %14s %14s %9s\n' "$label" "$a" "$b" "$vs"
	done
done
if [ -n "$PERF" ]; then
	printf '\nCPU (perf stat task-clock of the process tree, median of %d); jcmd itself: %s ms\n' \
		"$SCALE_CPU_ROUNDS" "$sjc"
	printf '%-34s %14s %14s\n' "case" "$others0 others ms" "$REGISTERED others ms"
	for bin in ours ${BASE:+base}; do
		for c in agent jcmdmode miss; do
			label="$bin: map $NAME"
			[ "$c" = jcmdmode ] && label="$bin: map --mode jcmd"
			[ "$c" = miss ] && label="$bin: map of an unknown name"
			printf '%-34s %14s %14s\n' "$label" "$(scale_med 0 "$bin" "$c" cpu)" \
				"$(scale_med many "$bin" "$c" cpu)"
		done
	done
fi
printf 'first lookup with %d others and no name index yet (reads all, builds it): %s ms\n' \
	"$REGISTERED" "$first_build"
[ -z "$BASE" ] || printf 'base: its first lookup with %d others: %s ms\n' "$REGISTERED" "$base_first"
echo "load average after: $(bench_load)"

#!/bin/bash
# bench/map-fixed.sh - where the fixed cost of one `flamesidecar map` goes,
# in CPU time (perf stat -e task-clock of the process tree: ours and the
# sandboxed child, never the JVM; far less disturbed by other load than wall
# time), each step against the one before it in the same run:
#   /bin/true                         exec of any process (the floor)
#   flamesidecar --version            exec of our static binary
#   map of an unknown name            + config, registry lookup (a miss)
#   map of a container without a JVM  + lookup hit, the scan of /proc for JVMs
#   map JVM --pid P --mode jcmd       no scan: sandbox fork, attach, map copy,
#                                     host map write
#   map JVM --mode jcmd / agent       the whole command
# then the two map-of-a-container rows again with EXTRA_PROCS (default
# 1,000) more processes on the host, as on a node with that many containers:
# the JVM scan stats /proc/<pid>/ns/pid of every host process (main before
# lib/ctprocs.c), where the cgroup walk should not grow.
# FS_BENCH_BASE_SIDECAR=/path/to/an/older/flamesidecar adds its rows for
# the map-of-a-container cases, in the same run (the ratio against it).
# Needs root, runc, perf, openjdk-17 and a built tree (make).
# Usage: bench/map-fixed.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
export FS_TOP=$PWD FS_BUILD=${1:-$PWD/build}
RUNS=${RUNS:-30}
EXTRA_PROCS=${EXTRA_PROCS:-1000}
BASE=${FS_BENCH_BASE_SIDECAR:-}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_root
bench_require_cmd runc
bench_require_cmd perf linux-perf
bench_require_jdk
bench_require_build

bench_setup
SLEEPERS=()
fixed_cleanup() {
	local p
	for p in "${SLEEPERS[@]}"; do kill "$p" 2>/dev/null || true; done
	bench_cleanup
}
trap fixed_cleanup EXIT
mkdir -p "$FS_RUN"
mount -t tmpfs -o mode=0700,size=16m fsbenchfixed "$FS_RUN" # as /run; fs_cleanup unmounts it
NAME=fixed-$$
bench_start_workload "$NAME" -- --warmup 1
# A registered container whose pid namespace holds no JVM: a live process
# of ours (pid, start time), recorded in our pid namespace.
sleep 3600 &
SLEEPERS+=($!)
st=$(awk '{print $22}' "/proc/$!/stat")
ns=$(stat -L -c %i /proc/self/ns/pid)
NOJVM=nojvm-$$
printf '{"id":"%s","pid":%d,"start_time":%s,"ns_pid":1,"pid_ns":1,"mnt_ns":1,"host_pid_ns":%s,"uid":1000,"gid":1000,"rootfs":"/x","bundle":"/x","mount_point":"","created":1700000000,"hook_version":"b","annotations":{"profile":"","delay":"","frequency":""},"names":{"engine":"","name":"","pod":"","namespace":"","container":""}}\n' \
	"$NOJVM" "$!" "$st" "$ns" >"$FS_RUN/containers/$NOJVM.json"
chmod 0600 "$FS_RUN/containers/$NOJVM.json"
"$FS_SIDECAR" gc >/dev/null
"$FS_SIDECAR" map "$NAME" >/dev/null # the attach listener runs from here on
"$FS_SIDECAR" map "$NAME" --mode jcmd >/dev/null

# cpu CMD...: "CPU ms, wall ms" (perf stat -r RUNS means).
cpu() {
	perf stat -r "$RUNS" "$@" 2>&1 >/dev/null |
		awk '/task-clock/ {c = $1} /elapsed/ {e = $1 * 1000} END {printf "%8.3f %9.2f", c, e}'
}
procs() { find /proc -maxdepth 1 -name '[0-9]*' 2>/dev/null | wc -l; }

echo "bench/map-fixed.sh: $(nproc) CPUs, load average $(bench_load), $(procs) processes"
printf '%-44s %8s %9s\n' "step (mean of $RUNS)" "CPU ms" "wall ms"
printf '%-44s %s\n' "/bin/true" "$(cpu /bin/true)"
printf '%-44s %s\n' "flamesidecar --version" "$(cpu "$FS_SIDECAR" --version)"
printf '%-44s %s\n' "map of an unknown name" "$(cpu "$FS_SIDECAR" map nosuch-$$)"
printf '%-44s %s\n' "map of a container without a JVM" "$(cpu "$FS_SIDECAR" map "$NOJVM")"
printf '%-44s %s\n' "map JVM --pid P --mode jcmd (no scan)" "$(cpu "$FS_SIDECAR" map "$NAME" --pid "$PID" --mode jcmd)"
printf '%-44s %s\n' "map JVM --mode jcmd" "$(cpu "$FS_SIDECAR" map "$NAME" --mode jcmd)"
printf '%-44s %s\n' "map JVM (agent)" "$(cpu "$FS_SIDECAR" map "$NAME")"
base_rows() {
	[ -n "$BASE" ] || return 0
	printf '%-44s %s\n' "  base: map of a container without a JVM" "$(cpu "$BASE" map "$NOJVM")"
	printf '%-44s %s\n' "  base: map JVM --mode jcmd" "$(cpu "$BASE" map "$NAME" --mode jcmd)"
}
base_rows
for ((i = 0; i < EXTRA_PROCS; i++)); do
	sleep 3600 &
	SLEEPERS+=($!)
done
echo "with $EXTRA_PROCS more processes on the host ($(procs)):"
printf '%-44s %s\n' "map of a container without a JVM" "$(cpu "$FS_SIDECAR" map "$NOJVM")"
printf '%-44s %s\n' "map JVM --mode jcmd" "$(cpu "$FS_SIDECAR" map "$NAME" --mode jcmd)"
printf '%-44s %s\n' "map JVM --pid P --mode jcmd (no scan)" "$(cpu "$FS_SIDECAR" map "$NAME" --pid "$PID" --mode jcmd)"
base_rows
echo "load average after: $(bench_load)"

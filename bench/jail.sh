#!/bin/bash
# bench/jail.sh - what the attach child's jail costs: `flamesidecar map
# --mode jcmd` on one warm JVM, alternating a baseline build (before lib/jail:
# no private mount copy, no network namespace) and this one, ROUNDS pairs in
# the same run. Wall time per map and CPU time of map and its children
# (task-clock of `perf stat`, which counts the jailed child too), medians
# and the median of the per-pair ratios.
# Usage: bench/jail.sh BASE_BUILD_DIR [ROUNDS] [BUILD_DIR]
# (BASE_BUILD_DIR: e.g. `git archive main | tar -x -C /tmp/base && make -C /tmp/base`)
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:?usage: bench/jail.sh BASE_BUILD_DIR [ROUNDS] [BUILD_DIR]}
ROUNDS=${2:-31}
export FS_TOP=$PWD FS_BUILD=${3:-$PWD/build}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_root
bench_require_cmd runc
bench_require_cmd perf
bench_require_build
[ -x "$BASE/flamesidecar" ] || skip "no baseline build in $BASE"

bench_setup
NAME=benchjail-$$
bench_start_workload "$NAME" -- --warmup 1
"$FS_SIDECAR" map "$NAME" --mode jcmd >/dev/null

# One map: "wall_ms cpu_ms" (perf stat's task-clock counts the children).
one() {
	perf stat -x, -e task-clock -o "$FS_TMP/stat" -- "$1/flamesidecar" map "$NAME" \
		--mode jcmd >/dev/null 2>&1
	local t0 t1 cpu
	cpu=$(awk -F, '/task-clock/ { printf "%.3f", $1 }' "$FS_TMP/stat")
	t0=$(date +%s%N)
	"$1/flamesidecar" map "$NAME" --mode jcmd >/dev/null
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000))" "$cpu"
}

echo "bench/jail.sh: $(nproc) CPUs, load average $(bench_load), $ROUNDS pairs"
: >"$FS_TMP/pairs"
for i in $(seq "$ROUNDS"); do
	if ((i % 2)); then
		b=$(one "$BASE") n=$(one "$FS_BUILD")
	else
		n=$(one "$FS_BUILD") b=$(one "$BASE")
	fi
	echo "$b $n" >>"$FS_TMP/pairs"
done
med() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
bw=$(awk '{ print $1 / 1000 }' "$FS_TMP/pairs" | med)
nw=$(awk '{ print $3 / 1000 }' "$FS_TMP/pairs" | med)
bc=$(awk '{ print $2 }' "$FS_TMP/pairs" | med)
nc=$(awk '{ print $4 }' "$FS_TMP/pairs" | med)
rw=$(awk '{ print $3 / $1 }' "$FS_TMP/pairs" | med)
rc=$(awk '{ print $4 / $2 }' "$FS_TMP/pairs" | med)
printf '%-28s %10s %10s %10s\n' "map --mode jcmd, warm" "base" "jail" "ratio"
printf '%-28s %10.2f %10.2f %10.3f\n' "wall ms (median)" "$bw" "$nw" "$rw"
printf '%-28s %10.2f %10.2f %10.3f\n' "CPU ms, with children" "$bc" "$nc" "$rc"
echo "(ratio: median of the per-pair ratios) load average after: $(bench_load)"

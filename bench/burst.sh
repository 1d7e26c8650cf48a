#!/usr/bin/env bash
# bench/burst.sh [N] [TIMEOUT_MS] - N annotated runc containers started at
# once (default 200), the hook at createRuntime with --timing and
# hook_timeout_ms TIMEOUT_MS (default: the config default, 2000). Reports
# how many were registered with their bundle mounted, how many hit the
# deadline (and after which phase), where the hook's time went (median and
# p90 of each phase over the hooks that finished) and the wall time of the
# whole burst against the same burst with /bin/true as the hook (the
# baseline of the same run: runc's own cost of N starts with one hook).
# Run as root from the repo after `make`.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200}
TMO=${2:-2000}
export FS_TOP=$PWD FS_BUILD=$PWD/build
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_containers_setup
mkdir -p "$FS_RUN"
mount -t tmpfs -o mode=0700,size=64m fsburstrun "$FS_RUN"
fs_config_set '.hook_timeout_ms = $t' --argjson t "$TMO"

# One bundle each (an engine writes a fresh one per container), hook
# with --timing; the baseline's copy runs /bin/true instead.
for i in $(seq 1 "$N"); do
	fs_make_bundle "$FS_TMP/c$i" --no-poststart --no-poststop --annotate flamesidecar.io/enable=true -- sleep 1000
	jq '.hooks.createRuntime[0].args |= (.[0:1] + ["--timing"] + .[1:])' "$FS_TMP/c$i/config.json" >"$FS_TMP/c$i/hook.json"
	jq '.hooks.createRuntime[0].path = "/bin/true" | .hooks.createRuntime[0].args = ["true"]' \
		"$FS_TMP/c$i/config.json" >"$FS_TMP/c$i/true.json"
done

burst() { # burst VARIANT: wall ms of N concurrent runc run -d
	local v=$1 i t0 t1
	for i in $(seq 1 "$N"); do cp "$FS_TMP/c$i/$v.json" "$FS_TMP/c$i/config.json"; done
	t0=$(date +%s%N)
	for i in $(seq 1 "$N"); do fs_runc_run "b$v$$-$i" "$FS_TMP/c$i" & done
	wait
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
stop_all() {
	local v=$1 i
	for i in $(seq 1 "$N"); do fs_stop_containers runc "b$v$$-$i" & done
	wait
}

echo "N=$N hook_timeout_ms=$TMO, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
base_ms=$(burst true)
stop_all true
hook_ms=$(burst hook)
ok=0 late=0 none=0
for i in $(seq 1 "$N"); do
	id=bhook$$-$i
	pid=$(runc state "$id" | jq -r .pid)
	if [ -f "$FS_RUN/containers/$id.json" ] && grep -q " /opt/flamesidecar " "/proc/$pid/mountinfo"; then
		ok=$((ok + 1))
	elif grep -q " $id: deadline of" "$FS_RUN/hook.log"; then
		late=$((late + 1))
	else
		none=$((none + 1))
	fi
done
stop_all hook
echo "burst wall time: hook $hook_ms ms, /bin/true hook $base_ms ms (ratio $(echo "$hook_ms / $base_ms" | bc -l | xargs printf '%.2f'))"
echo "registered+mounted $ok, deadline line $late, neither $none (of $N)"
echo "deadline after phase:"
grep -o "deadline of [0-9]* ms reached after phase [a-z+]*" "$FS_RUN/hook.log" | awk '{print $NF}' | sort | uniq -c || true
echo "phase (us): median p90 max, over the hooks that finished"
grep -o "timing: .*" "$FS_RUN/hook.log" | sed 's/timing: //; s/, /\n/g' |
	awk '{ name = $1; for (i = 2; i < NF - 1; i++) name = name "_" $i; print name, $(NF - 1) }' |
	sort -k1,1 -k2,2n | awk '
	function out(p) { p = int(m * 0.9 + 0.5); if (p < 1) p = 1
		if (m) printf "  %-14s %8d %8d %8d\n", cur, v[int((m + 1) / 2)], v[p], v[m] }
	$1 != cur { out(); cur = $1; m = 0 }
	{ v[++m] = $2 }
	END { out() }'

#!/usr/bin/env bash
# bench/hook.sh [PAIRS] - what flamesidecar costs on the container-start path.
#
# Every figure is a ratio against a baseline run in the same rounds: PAIRS
# rounds (default 30), the order of the variants rotated each round so none
# profits from another's warm-up; medians of each, and the median of the
# per-round differences. With perf installed, also the CPU time of each run
# (perf stat -e task-clock of the whole process tree: runc, runc init, the
# hooks it waits for), which a busy machine disturbs far less than wall time.
#
#  1. hooks.d path (Podman, CRI-O): `runc run` of a trivial container (true),
#     no hooks / what our default hooks.d install gives an enabled container
#     (createRuntime only: mount + registry; stale entries are swept by the
#     sidecar's verbs) / the same plus the optional poststop entry
#     (share/flamesidecar/hooks.d-optional: immediate unregister) / /bin/true
#     as createRuntime + poststop (runc's own cost of running any two hooks) /
#     /bin/true as createRuntime only (of any one hook: what running none at
#     all could gain).
#     FS_BENCH_BASE_HOOK=/path/to/an/older/flamehook adds that binary as the
#     same one createRuntime hook as the default install's. FS_BENCH_NAMED=1
#     gives those containers a pod's names and the registry its name index,
#     so each registration also writes its index file. FS_BENCH_CSTORAGE=N
#     puts those bundles in c/storage's layout beside a containers.json of N
#     containers (the hook then reads Podman's record at each start).
#  2. wrapper path (containerd, Docker: create + start, later delete): `run
#     -d` then, once the container stopped, `delete`, each timed, through
#     flamesidecar-runtime --opt-in (one createRuntime hook; delete
#     unregisters in-process), through it not opted in, and runc direct. The
#     bundle's original config.json is put back before every run, as an
#     engine writes a fresh one for every container.
#  3. The non-opted-in path of the hook alone (one parse, exit 0) against
#     /bin/true spawned the same way.
#  4. Docker (when dockerd is installed, FS_BENCH_DOCKER=1): a private
#     dockerd (tests/lib/docker.bash), `docker run --rm ... true` through
#     runc, the wrapper without opt-in and the wrapper with --opt-in.
# Ends with a markdown table of every ratio, ready for docs/performance.md.
# Run as root from the repo after `make`; about 3 minutes with PAIRS=30 on an
# idle 2-CPU machine (most of it the Docker part).
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-30}
FS_BENCH_DOCKER=${FS_BENCH_DOCKER:-1}
export FS_TOP=$PWD FS_BUILD=$PWD/build
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_containers_setup
# The run directory (registry, hook.log) on a tmpfs, as /run is on every
# systemd host (FS_BENCH_RUN_TMPFS=0: wherever the test temp dir is; on a
# disk, creating each entry file costs a journal write). fs_cleanup
# unmounts it.
if [ "${FS_BENCH_RUN_TMPFS:-1}" = 1 ]; then
	mkdir -p "$FS_RUN"
	mount -t tmpfs -o mode=0700,size=16m fsbenchrun "$FS_RUN"
fi
echo "run dir $FS_RUN on $(stat -f -c %T "$FS_RUN")"
# The agent as `make install` puts it in the bundle: debug sections stripped.
[ ! -f "$FS_BUNDLE_DIR/libflameagent.so" ] || strip --strip-debug "$FS_BUNDLE_DIR/libflameagent.so"
echo "agent bundle: $(du -sk "$FS_BUNDLE_DIR" | cut -f1) KiB"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $LOAD0, $(nproc) CPUs"
cc -O2 -o "$FS_TMP/spawn-time" bench/spawn-time.c
WRAPPER="$FS_BUILD/flamesidecar-runtime"
PERF=$(command -v perf || true)

# --- bundles -----------------------------------------------------------
# hooksd: the hooks an enable-only container gets from our default hooks.d
# install (createRuntime only); --timing makes each createRuntime log its
# phases (summarised below). poststop: the same plus the optional poststop.
# with_timing DIR: --timing on the bundle's createRuntime flamehook (every
# flamehook row gets it, so they stay comparable).
with_timing() {
	fs_bundle_set "$1" '.hooks.createRuntime[0].args |= (.[0:1] + ["--timing"] + .[1:])'
}
fs_make_bundle "$FS_TMP/hooksd" --annotate flamesidecar.io/enable=true --no-poststart --no-poststop -- true
with_timing "$FS_TMP/hooksd"
fs_make_bundle "$FS_TMP/poststop" --annotate flamesidecar.io/enable=true --no-poststart -- true
with_timing "$FS_TMP/poststop"
fs_make_bundle "$FS_TMP/none" --no-hooks -- true
fs_make_bundle "$FS_TMP/noop" --annotate flamesidecar.io/enable=true --no-poststart -- true
fs_bundle_set "$FS_TMP/noop" '.hooks |= with_entries(.value |= map(.path = "/bin/true" | .args = ["true"]))'
# noop1: one /bin/true hook: what runc pays for starting any one hook
# process, i.e. the most a start could gain from running none at all.
fs_make_bundle "$FS_TMP/noop1" -- true
fs_bundle_set "$FS_TMP/noop1" '.hooks = {createRuntime: [{path: "/bin/true", args: ["true"]}]}'
BASE=${FS_BENCH_BASE_HOOK:-}
kinds1="none hooksd poststop noop noop1"
if [ -n "$BASE" ]; then
	fs_make_bundle "$FS_TMP/base" --annotate flamesidecar.io/enable=true --no-poststart --no-poststop -- true
	fs_bundle_set "$FS_TMP/base" '.hooks |= with_entries(.value |= map(.path = $h))' --arg h "$BASE"
	# An older hook without --timing would log "unknown option" and exit 0
	# at once: give it the flag only if it knows it.
	if "$BASE" --help 2>&1 | grep -q -- --timing; then with_timing "$FS_TMP/base"; fi
	kinds1="$kinds1 base"
fi
# FS_BENCH_NAMED=1: the flamehook bundles carry a pod's names (containerd's
# CRI annotations) and the registry has its name index, so that every
# registration also adds the pod's name to it (what a Kubernetes, Docker or
# Podman node pays; unnamed containers skip the index).
if [ "${FS_BENCH_NAMED:-0}" = 1 ]; then
	for k in hooksd poststop ${BASE:+base}; do
		fs_bundle_set "$FS_TMP/$k" '.annotations += {"io.kubernetes.cri.container-type": "container",
			"io.kubernetes.cri.sandbox-name": "bench-7d9f",
			"io.kubernetes.cri.sandbox-namespace": "bench",
			"io.kubernetes.cri.container-name": "app"}'
	done
	mkdir -m 0700 "$FS_RUN/containers" "$FS_RUN/containers/names" # before any entry
	echo "named containers (a pod's), name index present"
fi
# FS_BENCH_CSTORAGE=N: the flamehook bundles are found where c/storage
# (Podman, CRI-O) keeps them, <graphroot>/overlay-containers/<id>/userdata,
# beside a containers.json of N containers (this run's among them), so the
# hook reads Podman's record of each start: with FS_BENCH_NAMED=1 too, the
# CRI-O case (annotation names and the engine's record both present).
CSTORAGE=${FS_BENCH_CSTORAGE:-0}
CS="$FS_TMP/cstorage/overlay-containers"
if [ "$CSTORAGE" -gt 0 ]; then
	mkdir -p "$CS"
	# The store's older containers first, this run's last: c/storage
	# appends a new container at the end, where a scan finds it last.
	{
		for i in $(seq 1 "$((CSTORAGE > 3 * PAIRS ? CSTORAGE - 3 * PAIRS : 0))"); do
			printf 'f%063x\n' "$i"
		done
		for kind in hooksd poststop base; do
			for i in $(seq 1 "$PAIRS"); do echo "fsbench-$$-$kind-$i"; done
		done
	} |
		jq -R '{id: ., names: ["n-" + .[0:12]], image: ("0" * 64), layer: ("1" * 64),
			metadata: "{\"image-name\":\"docker.io/library/x:latest\",\"name\":\"n\"}",
			created: "2026-11-28T00:00:00.000000000Z", flags: {MountLabel: "", ProcessLabel: ""}}' |
		jq -cs . >"$CS/containers.json"
	echo "c/storage layout: containers.json of $(jq length "$CS/containers.json") containers, $(stat -c %s "$CS/containers.json") bytes"
fi
# bundle_of KIND ID: the bundle path runc is given for KIND's container ID
# (under c/storage's layout: KIND's config.json, its rootfs by absolute
# path; runc records the bundle with symlinks resolved, so no symlink).
bundle_of() {
	case "$CSTORAGE:$1" in
	0:*) echo "$FS_TMP/$1" ;;
	*:hooksd | *:poststop | *:base)
		mkdir -p "$CS/$2/userdata"
		jq --arg r "$FS_TMP/$1/rootfs" '.root.path = $r' "$FS_TMP/$1/config.json" \
			>"$CS/$2/userdata/config.json"
		echo "$CS/$2/userdata"
		;;
	*) echo "$FS_TMP/$1" ;;
	esac
}
# The wrapper path: plain bundles (no hooks, no annotation); the wrapper
# adds what it adds. --opt-in opts them in, as Docker's runtimeArgs does.
# On a tmpfs, as containerd and Docker keep bundles under /run (the wrapper
# fsyncs the config.json it rewrites; free on tmpfs, not on ext4).
# fs_cleanup unmounts it.
mkdir "$FS_TMP/lc"
mount -t tmpfs -o mode=0755,size=16m fsbench "$FS_TMP/lc"
for k in lc-runc lc-wrapper lc-plain; do
	fs_make_bundle "$FS_TMP/lc/$k" --no-hooks -- true
	cp "$FS_TMP/lc/$k/config.json" "$FS_TMP/lc/$k/orig.json"
done

# --- measuring ---------------------------------------------------------
declare -A WALL CPU
now_us() { echo "${EPOCHREALTIME/./}"; }
# measure KEY CMD...: run CMD once (output discarded), append its wall time
# (us) and CPU time (ms, perf stat task-clock) to WALL[KEY] and CPU[KEY].
measure() {
	local key=$1 t0 t1 cpu=0
	shift
	t0=$(now_us)
	# perf stat cannot run a shell function (dk): wall time only there.
	if [ -n "$PERF" ] && ! declare -F "$1" >/dev/null; then
		"$PERF" stat -x, -e task-clock -o "$FS_TMP/perf.out" -- "$@" >/dev/null 2>&1 </dev/null || true
	else
		"$@" >/dev/null 2>&1 </dev/null || true
	fi
	t1=$(now_us)
	[ -z "$PERF" ] || declare -F "$1" >/dev/null ||
		cpu=$(awk -F, '/task-clock/ {print $1; exit}' "$FS_TMP/perf.out")
	WALL[$key]+=" $((t1 - t0))"
	CPU[$key]+=" ${cpu:-0}"
}
# rotate I WORDS...: WORDS rotated by I (each round starts elsewhere).
rotate() {
	local i=$1
	shift
	local r=$((i % $#))
	echo "${*:r+1} ${*:1:r}"
}
median() { tr ' ' '\n' | awk 'NF {a[++n] = $1} END {
	if (!n) { print 0; exit }
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	print (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }'; }
# pairdiff A B: the median of the per-round differences A - B (same rounds).
pairdiff() { paste -d' ' <(tr ' ' '\n' <<<"$1" | awk NF) <(tr ' ' '\n' <<<"$2" | awk NF) |
	awk '{print $1 - $2}' | tr '\n' ' ' | median; }

ROWS=()
# row LABEL KEY BASEKEY UNIT: one table row (UNIT us -> printed in ms).
row() {
	local label=$1 k=$2 b=$3 mk mb d ck cb
	mk=$(median <<<"${WALL[$k]}")
	mb=$(median <<<"${WALL[$b]}")
	d=$(pairdiff "${WALL[$k]}" "${WALL[$b]}")
	ck=$(median <<<"${CPU[$k]}")
	cb=$(median <<<"${CPU[$b]}")
	ROWS+=("$(awk -v l="$label" -v mk="$mk" -v mb="$mb" -v d="$d" -v ck="$ck" -v cb="$cb" -v p="$PERF" 'BEGIN {
		cpu = (p != "" && cb > 0) ? sprintf("%.2f ms | %.2f ms | %.3f", cb, ck, ck / cb) : "- | - | -"
		printf "| %s | %.2f ms | %.2f ms | %.3f | %+.2f ms | %s |", l, mb / 1000, mk / 1000, mk / mb, d / 1000, cpu }')")
}

# --- 1. hooks.d path: runc run -----------------------------------------
for i in $(seq 1 "$PAIRS"); do
	for kind in $(rotate "$i" $kinds1); do
		measure "$kind" runc run --bundle "$(bundle_of "$kind" "fsbench-$$-$kind-$i")" "fsbench-$$-$kind-$i"
	done
done
row "hooks.d, default install: createRuntime only (\`runc run true\`)" hooksd none
row "hooks.d + optional poststop: createRuntime + poststop" poststop none
row "runc's own cost: \`/bin/true\` as createRuntime + poststop" noop none
row "runc's own cost of one hook: \`/bin/true\` as createRuntime" noop1 none
row "flamehook vs \`/bin/true\` as the same one hook" hooksd noop1
row "flamehook vs \`/bin/true\` as the same two hooks" poststop noop
[ -z "$BASE" ] || row "this flamehook vs the older one (\`$BASE\`)" hooksd base

# --- 2. wrapper path: run -d, delete -----------------------------------
lc_cmd() {
	case $1 in
	lc-runc) echo runc ;;
	lc-wrapper) echo "$WRAPPER --opt-in" ;;
	lc-plain) echo "$WRAPPER" ;;
	esac
}
stopped() { [ "$(runc state "$1" 2>/dev/null | jq -r .status)" = stopped ]; }
for i in $(seq 1 "$PAIRS"); do
	for kind in $(rotate "$i" lc-runc lc-wrapper lc-plain); do
		id="fsbench-$$-$kind-$i"
		cp "$FS_TMP/lc/$kind/orig.json" "$FS_TMP/lc/$kind/config.json"
		echo "runc $id" >>"$FS_TMP/containers"
		# shellcheck disable=SC2046 # the runtime command is two words for --opt-in
		measure "$kind-start" $(lc_cmd "$kind") run -d --bundle "$FS_TMP/lc/$kind" "$id"
		fs_wait_for 10 stopped "$id"
		# shellcheck disable=SC2046
		measure "$kind-delete" $(lc_cmd "$kind") delete "$id"
	done
done
left=$(find "$FS_RUN/containers" -name "fsbench-$$-lc-*" 2>/dev/null | wc -l)
[ "$left" = 0 ] || echo "warning: $left registry entries left behind by the wrapper path"
# The default hooks.d install leaves its entries to the next reader: one
# `list` sweeps them (those of exited, reaped containers).
stale=$(find "$FS_RUN/containers" -name "fsbench-$$-hooksd-*" | wc -l)
"$FS_SIDECAR" list >/dev/null 2>&1 || true
echo "hooks.d default install: $stale of $PAIRS entries stale after the runs, $(find "$FS_RUN/containers" -name "fsbench-$$-hooksd-*" | wc -l) after one \`flamesidecar list\`"
row "wrapper --opt-in: \`run -d\` (create + start; one hook)" lc-wrapper-start lc-runc-start
row "wrapper --opt-in: \`delete\` (unregisters in-process)" lc-wrapper-delete lc-runc-delete
row "wrapper, not opted in: \`run -d\`" lc-plain-start lc-runc-start
row "wrapper, not opted in: \`delete\`" lc-plain-delete lc-runc-delete

# Where flamehook's own time goes (its --timing lines, median per phase;
# the process start before main() is not in them).
# phases KIND: the median per phase of that bundle's createRuntime lines.
phases() {
	grep -h "createRuntime fsbench-.*-$1-.*timing:" "$FS_RUN/hook.log" | sed 's/.*timing: //' |
		tr ',' '\n' | awk '{ $1 = $1; if (NF == 3) { n[$1]++; v[$1, n[$1]] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } } }
	END {
		for (i = 1; i <= k; i++) {
			p = order[i]; c = n[p]
			for (a = 1; a <= c; a++) x[a] = v[p, a]
			for (a = 1; a <= c; a++) for (b = a + 1; b <= c; b++) if (x[b] < x[a]) { t = x[a]; x[a] = x[b]; x[b] = t }
			m = (c % 2) ? x[(c + 1) / 2] : (x[c / 2] + x[c / 2 + 1]) / 2
			printf "  %-14s %8.0f us\n", p, m
		}
	}'
}
echo "flamehook createRuntime phases (median of $PAIRS, from its --timing log lines):"
phases hooksd
if [ -n "$BASE" ] && grep -q "createRuntime fsbench-.*-base-.*timing:" "$FS_RUN/hook.log"; then
	echo "the older flamehook's (\`$BASE\`):"
	phases base
fi

# --- 3. the hook, not opted in -----------------------------------------
echo '{"ociVersion":"1.0.2","id":"benchcontainer","status":"creating","pid":1234,"bundle":"/nonexistent","annotations":{"io.kubernetes.pod.name":"x"}}' >"$FS_TMP/state.json"
"$FS_TMP/spawn-time" 500 "$FS_TMP/state.json" /bin/true >"$FS_TMP/spawn.true"
"$FS_TMP/spawn-time" 500 "$FS_TMP/state.json" "$FS_HOOK" --config "$FS_CONFIG" prestart >"$FS_TMP/spawn.hook"
echo "non-opted-in hook path, 500 spawns each: /bin/true: $(cat "$FS_TMP/spawn.true"); flamehook prestart: $(cat "$FS_TMP/spawn.hook")"

# --- 4. Docker ---------------------------------------------------------
docker_rows() {
	[ "$FS_BENCH_DOCKER" = 1 ] || { echo "docker path: not run (FS_BENCH_DOCKER=0)"; return 0; }
	command -v dockerd >/dev/null 2>&1 || { echo "docker path: skipped (no dockerd)"; return 0; }
	# shellcheck source=../tests/lib/docker.bash
	source tests/lib/docker.bash
	trap 'dockerd_stop; bench_cleanup' EXIT
	dockerd_start || { echo "docker path: skipped (dockerd did not start)"; return 0; }
	local i rt
	for i in $(seq 1 "$PAIRS"); do
		for rt in $(rotate "$i" runc flamesidecar-plain flamesidecar); do
			measure "docker-$rt" dk run --rm --network none --runtime "$rt" -v /usr:/usr:ro \
				fstest:tiny /usr/bin/true
		done
	done
	# A failing docker run is fast: make sure these were real starts.
	dk run --rm --network none --runtime flamesidecar -v /usr:/usr:ro fstest:tiny /usr/bin/true ||
		echo "warning: docker run through flamesidecar fails; the Docker figures are meaningless"
	grep -q "flamesidecar-runtime\[[0-9]*\] delete [0-9a-f]*: unregistered" "$FS_RUN/hook.log" ||
		echo "warning: no Docker container was unregistered by the wrapper's delete"
	left=$(find "$FS_RUN/containers" -name "*.json" ! -name "fsbench-*" 2>/dev/null | wc -l)
	[ "$left" = 0 ] || echo "warning: $left registry entries left behind by docker run --rm"
	DOCKER_VERSION=$(dk version -f '{{.Server.Version}}')
	row "Docker $DOCKER_VERSION \`docker run --rm true\`, wrapper --opt-in" docker-flamesidecar docker-runc
	row "Docker, wrapper not opted in" docker-flamesidecar-plain docker-runc
}
docker_rows

# --- the table ---------------------------------------------------------
echo
echo "$PAIRS rounds; load average before $LOAD0, after $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs); $(uname -r); runc $(runc --version | awk 'NR == 1 {print $3}')"
echo "CPU: perf stat -e task-clock of the command's process tree (for Docker: of the docker client only, so not shown)."
echo
echo "| case | baseline wall | wall | ratio | added (median of pairs) | baseline CPU | CPU | CPU ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for r in "${ROWS[@]}"; do
	case $r in
	"| Docker"*) echo "$r" | awk -F'|' -v OFS='|' '{$7 = " - "; $8 = " - "; $9 = " - "; print}' ;;
	*) echo "$r" ;;
	esac
done
th=$(sed -n 's/.*median_us=\([0-9.]*\).*/\1/p' "$FS_TMP/spawn.true")
hh=$(sed -n 's/.*median_us=\([0-9.]*\).*/\1/p' "$FS_TMP/spawn.hook")
echo "| flamehook not opted in (spawn, parse, exit; 500 spawns) | ${th:-?} us | ${hh:-?} us | $(awk -v a="${hh:-0}" -v b="${th:-1}" 'BEGIN {printf "%.3f", a / b}') | | | | |"

#!/usr/bin/env bash
# bench/hook.sh [PAIRS] - what the hook costs on the container-start path.
#  1. `runc run` of a trivial container (true), with and without our hooks
#     (annotated: createRuntime mount + registry, poststop), PAIRS alternating
#     rounds; median of each, median ratio, median added ms. A third variant
#     runs /bin/true as the same hooks: runc's own cost of running any hook,
#     so "flamehook - noop" is what our code adds. With perf installed, the
#     CPU time of each start (runc, runc init, the hooks: perf stat task-clock
#     of the whole tree) too: far less sensitive than wall time to a busy
#     machine, and what the hook really costs the node.
#     FS_BENCH_BASE_HOOK=/path/to/an/older/flamehook adds a fourth variant,
#     the same hooks running that binary: this hook against an older one,
#     in the same rounds.
#  2. The non-opted-in path of the hook alone (one parse, exit 0) against
#     /bin/true spawned the same way: median wall time.
#  3. The Docker path (when dockerd is installed): a private dockerd
#     (tests/lib/docker.bash), `docker run --rm ... true` through runc, through
#     flamesidecar-runtime without opt-in, and through it with --opt-in
#     (runtimeArgs), PAIRS alternating rounds; medians and ratios.
# Run as root from the repo after `make`. Prints baselines beside figures.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-30}
FS_BENCH_DOCKER=${FS_BENCH_DOCKER:-1}
export FS_TOP=$PWD FS_BUILD=$PWD/build
# shellcheck source=../tests/lib/containers.bash
source tests/lib/containers.bash
skip() { echo "skip: $*"; exit 0; }
fs_require_root
fs_setup
trap 'fs_cleanup' EXIT
# Ratios are only meaningful on a quiet machine: say how busy this one is.
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
cc -O2 -o "$FS_TMP/spawn-time" bench/spawn-time.c

# The hooks an enable-only container gets from our hooks.d files: the
# mount + registry at creation and the cleanup at poststop.
fs_make_bundle "$FS_TMP/with" --annotate flamesidecar.io/enable=true --no-poststart -- true
# --timing: each flamehook run logs how long its phases took (summarised below).
jq '.hooks.createRuntime[0].args |= (.[0:1] + ["--timing"] + .[1:])' "$FS_TMP/with/config.json" \
	>"$FS_TMP/with.json" && mv "$FS_TMP/with.json" "$FS_TMP/with/config.json"
fs_make_bundle "$FS_TMP/without" --no-hooks -- true
fs_make_bundle "$FS_TMP/noop" --annotate flamesidecar.io/enable=true --no-poststart -- true
jq '.hooks |= with_entries(.value |= map(.path = "/bin/true" | .args = ["true"]))' \
	"$FS_TMP/noop/config.json" >"$FS_TMP/noop.json" && mv "$FS_TMP/noop.json" "$FS_TMP/noop/config.json"

BASE=${FS_BENCH_BASE_HOOK:-}
kinds="with without noop"
if [ -n "$BASE" ]; then
	fs_make_bundle "$FS_TMP/base" --annotate flamesidecar.io/enable=true --no-poststart -- true
	jq --arg h "$BASE" '.hooks |= with_entries(.value |= map(.path = $h))' \
		"$FS_TMP/base/config.json" >"$FS_TMP/base.json" && mv "$FS_TMP/base.json" "$FS_TMP/base/config.json"
	kinds="$kinds base"
fi

now_ns() { date +%s%N; }
declare -a with without noop base diffs ndiffs cwith cwithout cnoop cbase
PERF=$(command -v perf || true)
# CPU milliseconds of the tree, from perf stat -x, (first field of task-clock).
cpu_ms() { awk -F, '/task-clock/ {print $1; exit}' "$1"; }
for i in $(seq 1 "$PAIRS"); do
	# Rotate which goes first, so none profits from another's warm-up.
	set -- $kinds
	r=$((i % $#))
	order="${*:r+1} ${*:1:r}"
	for kind in $order; do
		t0=$(now_ns)
		if [ -n "$PERF" ]; then
			"$PERF" stat -x, -e task-clock -o "$FS_TMP/perf.$kind" \
				runc run --bundle "$FS_TMP/$kind" "fsbench-$$-$kind-$i" >/dev/null 2>&1 </dev/null
		else
			runc run --bundle "$FS_TMP/$kind" "fsbench-$$-$kind-$i" >/dev/null 2>&1 </dev/null
		fi
		t1=$(now_ns)
		us=$(((t1 - t0) / 1000))
		cpu=$([ -n "$PERF" ] && cpu_ms "$FS_TMP/perf.$kind" || echo 0)
		case $kind in
		with) with+=("$us"); cwith+=("$cpu") ;;
		without) without+=("$us"); cwithout+=("$cpu") ;;
		noop) noop+=("$us"); cnoop+=("$cpu") ;;
		base) base+=("$us"); cbase+=("$cpu") ;;
		esac
	done
	diffs+=($((with[-1] - without[-1])))
	ndiffs+=($((with[-1] - noop[-1])))
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mw=$(median "${with[@]}")
mo=$(median "${without[@]}")
md=$(median "${diffs[@]}")
mn=$(median "${noop[@]}")
mnd=$(median "${ndiffs[@]}")
echo "container start (runc run true), $PAIRS rounds, load average $(cut -d' ' -f1 /proc/loadavg):"
echo "  baseline without hook:       median ${mo} us"
echo "  /bin/true as the same hooks: median ${mn} us"
echo "  with flamehook:              median ${mw} us"
awk -v w="$mw" -v o="$mo" -v d="$md" -v n="$mn" -v nd="$mnd" 'BEGIN {
	printf "  flamehook vs none: ratio %.3f, median added %.2f ms (pairwise)\n", w/o, d/1000
	printf "  flamehook vs noop hooks: ratio %.3f, median added %.2f ms (pairwise)\n", w/n, nd/1000 }'
if [ -n "$PERF" ]; then
	cw=$(median "${cwith[@]}")
	co=$(median "${cwithout[@]}")
	cn=$(median "${cnoop[@]}")
	echo "  CPU of the start (perf stat task-clock of runc and its children), medians:"
	awk -v w="$cw" -v o="$co" -v n="$cn" 'BEGIN {
		printf "    none %.2f ms, noop hooks %.2f ms, flamehook %.2f ms\n", o, n, w
		printf "    flamehook vs none: ratio %.3f; vs noop hooks: ratio %.3f (+%.2f ms)\n", w/o, w/n, w-n }'
fi
if [ -n "$BASE" ]; then
	mb=$(median "${base[@]}")
	echo "  older hook ($BASE): median ${mb} us; this hook / older: ratio $(awk -v w="$mw" -v b="$mb" 'BEGIN {printf "%.3f", w/b}')"
	if [ -n "$PERF" ]; then
		cb=$(median "${cbase[@]}")
		awk -v w="$cw" -v b="$cb" 'BEGIN {printf "    CPU: older %.2f ms, this %.2f ms, ratio %.3f\n", b, w, w/b}'
	fi
fi

# Where flamehook's own time goes (its --timing lines, median per phase;
# the process start before main() is not in them).
echo "  flamehook createRuntime phases (median of $PAIRS, from its --timing log lines):"
grep -h 'createRuntime fsbench-.*-with-.*timing:' "$FS_RUN/hook.log" | sed 's/.*timing: //' |
	tr ',' '\n' | awk '{ $1 = $1; if (NF == 3) { n[$1]++; v[$1, n[$1]] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } } }
	END {
		for (i = 1; i <= k; i++) {
			p = order[i]; c = n[p]
			for (a = 1; a <= c; a++) x[a] = v[p, a]
			asort_n = c
			for (a = 1; a <= c; a++) for (b = a + 1; b <= c; b++) if (x[b] < x[a]) { t = x[a]; x[a] = x[b]; x[b] = t }
			m = (c % 2) ? x[(c + 1) / 2] : (x[c / 2] + x[c / 2 + 1]) / 2
			printf "    %-14s %8.0f us\n", p, m
		}
	}'

echo '{"ociVersion":"1.0.2","id":"benchcontainer","status":"creating","pid":1234,"bundle":"/nonexistent","annotations":{"io.kubernetes.pod.name":"x"}}' >"$FS_TMP/state.json"
echo "non-opted-in hook path (state JSON without our annotation), 500 spawns:"
printf '  baseline /bin/true:  '
"$FS_TMP/spawn-time" 500 "$FS_TMP/state.json" /bin/true
printf '  flamehook prestart:  '
"$FS_TMP/spawn-time" 500 "$FS_TMP/state.json" "$FS_HOOK" --config "$FS_CONFIG" prestart

[ "$FS_BENCH_DOCKER" = 1 ] || exit 0
command -v dockerd >/dev/null 2>&1 || { echo "docker path: skipped (no dockerd)"; exit 0; }
# shellcheck source=../tests/lib/docker.bash
source tests/lib/docker.bash
trap 'dockerd_stop; fs_cleanup' EXIT
dockerd_start || { echo "docker path: skipped (dockerd did not start)"; exit 0; }
declare -a druns dplain dopt
for i in $(seq 1 "$PAIRS"); do
	case $((i % 3)) in
	0) order="runc flamesidecar-plain flamesidecar" ;;
	1) order="flamesidecar-plain flamesidecar runc" ;;
	2) order="flamesidecar runc flamesidecar-plain" ;;
	esac
	for rt in $order; do
		t0=$(now_ns)
		dk run --rm --network none --runtime "$rt" -v /usr:/usr:ro fstest:tiny /usr/bin/true \
			>/dev/null 2>&1 </dev/null
		t1=$(now_ns)
		us=$(((t1 - t0) / 1000))
		case $rt in
		runc) druns+=("$us") ;;
		flamesidecar-plain) dplain+=("$us") ;;
		flamesidecar) dopt+=("$us") ;;
		esac
	done
done
[ -z "$(ls -A "$FS_RUN/containers" 2>/dev/null)" ] || echo "  (warning: registry entries left behind)"
mr=$(median "${druns[@]}")
mp=$(median "${dplain[@]}")
mo=$(median "${dopt[@]}")
echo "docker run --rm true (dockerd $(dk version -f '{{.Server.Version}}')), $PAIRS rounds, load average $(cut -d' ' -f1 /proc/loadavg):"
echo "  --runtime runc:                       median ${mr} us"
echo "  --runtime flamesidecar-plain (no opt-in): median ${mp} us"
echo "  --runtime flamesidecar (--opt-in):    median ${mo} us"
awk -v r="$mr" -v p="$mp" -v o="$mo" 'BEGIN {
	printf "  wrapper, not opted in / runc: ratio %.3f\n", p/r
	printf "  wrapper, opted in / runc:     ratio %.3f\n", o/r }'

#!/usr/bin/env bash
# bench/hook.sh [PAIRS] - what the hook costs on the container-start path.
#  1. `runc run` of a trivial container (true), with and without our hooks
#     (annotated: createRuntime mount + registry, poststop), PAIRS alternating
#     rounds; median of each, median ratio, median added ms. A third variant
#     runs /bin/true as the same hooks: runc's own cost of running any hook,
#     so "flamehook - noop" is what our code adds.
#  2. The non-opted-in path of the hook alone (one parse, exit 0) against
#     /bin/true spawned the same way: median wall time.
# Run as root from the repo after `make`. Prints baselines beside figures.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-30}
export FS_TOP=$PWD FS_BUILD=$PWD/build
# shellcheck source=../tests/lib/containers.bash
source tests/lib/containers.bash
skip() { echo "skip: $*"; exit 0; }
fs_require_root
fs_setup
trap 'fs_cleanup' EXIT
cc -O2 -o "$FS_TMP/spawn-time" bench/spawn-time.c

# The hooks an enable-only container gets from our hooks.d files: the
# mount + registry at creation and the cleanup at poststop.
fs_make_bundle "$FS_TMP/with" --annotate flamesidecar.io/enable=true --no-poststart -- true
fs_make_bundle "$FS_TMP/without" --no-hooks -- true
fs_make_bundle "$FS_TMP/noop" --annotate flamesidecar.io/enable=true --no-poststart -- true
jq '.hooks |= with_entries(.value |= map(.path = "/bin/true" | .args = ["true"]))' \
	"$FS_TMP/noop/config.json" >"$FS_TMP/noop.json" && mv "$FS_TMP/noop.json" "$FS_TMP/noop/config.json"

now_ns() { date +%s%N; }
declare -a with without noop diffs ndiffs
for i in $(seq 1 "$PAIRS"); do
	# Rotate which goes first, so none profits from another's warm-up.
	case $((i % 3)) in
	0) order="with without noop" ;;
	1) order="without noop with" ;;
	2) order="noop with without" ;;
	esac
	for kind in $order; do
		t0=$(now_ns)
		runc run --bundle "$FS_TMP/$kind" "fsbench-$$-$kind-$i" >/dev/null 2>&1 </dev/null
		t1=$(now_ns)
		us=$(((t1 - t0) / 1000))
		case $kind in
		with) with+=("$us") ;;
		without) without+=("$us") ;;
		noop) noop+=("$us") ;;
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

echo '{"ociVersion":"1.0.2","id":"benchcontainer","status":"creating","pid":1234,"bundle":"/nonexistent","annotations":{"io.kubernetes.pod.name":"x"}}' >"$FS_TMP/state.json"
echo "non-opted-in hook path (state JSON without our annotation), 500 spawns:"
printf '  baseline /bin/true:  '
"$FS_TMP/spawn-time" 500 "$FS_TMP/state.json" /bin/true
printf '  flamehook prestart:  '
"$FS_TMP/spawn-time" 500 "$FS_TMP/state.json" "$FS_HOOK" --config "$FS_CONFIG" prestart

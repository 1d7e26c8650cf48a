#!/bin/bash
# bench/endwin.sh - end of window -> SVG on disk on every application of
# tests/lib/apps.bash (jetty9 under wrk, H2, Derby, and the big one: javac
# compiling the JDK's sources in-process with H2 and Derby in the same JVM),
# with the JIT counts of each window: `flamesidecar run -d SECS` and the
# summary's "graph written N ms after the window closed (JIT maps, symbols)"
# line (its "CPU" is the end's CPU time, this process and the sandboxed
# readers, which waiting for a CPU does not inflate). With a second build directory, each application's window is also
# profiled by that build (the baseline, e.g. main built apart) right after,
# on the same JVM, in ABAB order over ROUNDS rounds.
#
# Usage: bench/endwin.sh [SECS [BUILD_DIR [BASE_BUILD_DIR]]]   (default 20)
#   KINDS="jetty h2 derby big" (default), ROUNDS (default 2), HZ (default 99)
# Needs root, runc, openjdk-17 (and openjdk-17-source for big), jetty9, wrk,
# libh2-java, libderby-java and a built tree (make).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-20}
export FS_TOP=$PWD FS_BUILD
FS_BUILD=$(realpath "${2:-$PWD/build}")
BASE=${3:-}
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=tests/lib/apps.bash
. tests/lib/apps.bash
bench_require_root
bench_require_jdk
[ -x "$FS_SIDECAR" ] || skip "build first (make)"
[ -z "$BASE" ] || [ -x "$BASE/flamesidecar" ] || skip "no $BASE/flamesidecar"
bench_setup
echo "# $BENCH: ${SECS} s windows at ${HZ:-99} Hz, $(nproc) CPUs, load $(bench_load)"
printf '%-6s %-5s %8s %10s %8s %8s %12s %10s\n' app build "end ms" "JIT maps" symbols "end CPU" "JIT symbols" "code loads"
# one WHICH BIN: one window of app $name with binary BIN, one row
one() {
	local which=$1 bin=$2 out="$W/$name-$1.out"
	"$bin" run "$name" -F "${HZ:-99}" -d "${SECS}s" -o "$W/$name-$1.svg" >"$out" 2>&1 3>&- || {
		cat "$out" >&2
		return 1
	}
	sed -n 's/^graph *written \([0-9]*\) ms after the window closed (JIT maps \([0-9.]*\) ms, symbols \([0-9.]*\) ms, CPU \([0-9.]*\) ms.*/\1 \2 \3 \4/p' "$out" |
		head -1 >"$W/t"
	local jit
	jit=$(sed -n 's/.*: \([0-9]*\) JIT symbols of \([0-9]*\) code loads.*/\1 \2/p' "$out" | head -1)
	# word splitting wanted: four figures, two counts (or "- -")
	# shellcheck disable=SC2046,SC2086
	printf '%-6s %-5s %8s %10s %8s %8s %12s %10s\n' "$kind" "$which" $(cat "$W/t") ${jit:-- -}
}
for kind in ${KINDS:-jetty h2 derby big}; do
	( app_require "$kind" ) >/dev/null 2>&1 || { echo "# $kind: skipped (app_require)"; continue; }
	name=benchew-$kind-$$
	app_start "$name" "$kind" >/dev/null || { echo "# $kind did not start" >&2; continue; }
	app_load_start "$name" $(((SECS + 5) * 2 * ${ROUNDS:-2} + 30))
	app_warm "$name"
	for _ in $(seq "${ROUNDS:-2}"); do
		one new "$FS_SIDECAR"
		[ -z "$BASE" ] || one base "$BASE/flamesidecar"
	done
	app_load_stop "$name"
	fs_stop_containers runc "$name" >/dev/null 2>&1 || true
done

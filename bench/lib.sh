# shellcheck shell=bash
# bench/lib.sh - the pieces the bash benchmarks in bench/ share: requirement
# checks, the temp dir and its cleanup, starting the JVM under test in a runc
# container, reading the Workload's ops file, medians and timings, and the
# folded corpus of the render/export benchmarks, and the servlet under wrk
# of the servlet benchmarks.
#
# Source it from the top of the tree (every script cds there first), after
# setting FS_BUILD if the script takes a build directory:
#
#   cd "$(dirname "$0")/.."
#   export FS_TOP=$PWD FS_BUILD=${3:-$PWD/build}
#   . bench/lib.sh
#
# It loads tests/lib/containers.bash, so a benchmark builds its containers
# exactly the way the integration tests do (fs_setup, fs_start_jvm,
# fs_wait_for, fs_cleanup...). Functions only exit the script through skip.

BENCH=bench/$(basename "$0")
JDK=${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}
# shellcheck source=tests/lib/containers.bash
. tests/lib/containers.bash

# skip REASON: a benchmark that cannot run here says why and exits 0.
skip() {
	echo "$BENCH: skipped: $*" >&2
	exit 0
}

bench_require_root() { [ "$(id -u)" = 0 ] || skip "needs root"; }

# bench_require_cmd CMD [HINT]: skip unless CMD is on PATH.
bench_require_cmd() {
	command -v "$1" >/dev/null || skip "$1 is not installed${2:+ ($2)}"
}

# bench_require_jdk: skip unless $JDK (JAVA_HOME_17 or Debian's 17) has java.
bench_require_jdk() { [ -x "$JDK/bin/java" ] || skip "no JDK 17 at $JDK"; }

# bench_require_build: skip unless the CLI and the test Java classes are built.
bench_require_build() {
	if [ ! -x "$FS_SIDECAR" ] || [ ! -d "$FS_BUILD/java/flametest" ]; then
		skip "build first (make)"
	fi
}

# bench_warn_perf_events: warn when other processes hold perf events. They
# distort every row: cgroup events among them make each cgroup switch
# reschedule every event of their PMU on that CPU, the system-wide ones of
# `run`'s kernel filter included (docs/perf-run.md).
bench_warn_perf_events() {
	local d others=""
	for d in /proc/[0-9]*; do
		[ "${d#/proc/}" = $$ ] && continue
		find "$d/fd" -lname 'anon_inode:*perf_event*' 2>/dev/null | grep -q . && others="$others ${d#/proc/}"
	done
	[ -z "$others" ] || echo "# WARNING: processes$others hold perf events: the figures are not comparable" >&2
}

# bench_setup: fs_setup (temp dir $FS_TMP, hook config), an empty work dir
# $W, and an EXIT trap running bench_cleanup.
bench_setup() {
	fs_setup
	PROF=""
	W=$FS_TMP/work
	mkdir -p "$W"
	trap bench_cleanup EXIT
}

# bench_containers_setup [CMD...]: the preamble of a benchmark that starts
# runc containers: skip unless root, runc, jq and each CMD are there, then
# bench_setup.
bench_containers_setup() {
	local c
	bench_require_root
	for c in runc jq "$@"; do bench_require_cmd "$c"; done
	bench_setup
}

# bench_cleanup: stop the profiler $PROF if one still runs, remove the host
# perf maps (/tmp/perf-PID.map) of the JVMs started (PID and those recorded
# by fs_start_jvm), then fs_cleanup (containers, mounts, $FS_TMP).
bench_cleanup() {
	set +e
	[ -n "${PROF:-}" ] && kill "$PROF" 2>/dev/null && wait "$PROF" 2>/dev/null
	local p
	for p in ${PID:-} $(cat "$FS_TMP/jvm-pids" 2>/dev/null); do
		rm -f "/tmp/perf-$p.map"
	done
	fs_cleanup
}

# bench_servlet_require: skip unless this machine can run the servlet
# benchmarks (bench/overhead-servlet.sh, bench/offcpu.sh): root, runc, wrk,
# curl, perf, /usr/bin/time, the JDK, a built CLI and Debian's jetty9 with
# the servlet API (tests/lib/apps.bash, sourced here). Then bench_setup and
# the warning about other perf events.
bench_servlet_require() {
	bench_require_root
	bench_require_cmd runc
	bench_require_cmd wrk
	bench_require_cmd curl
	bench_require_cmd perf linux-perf
	[ -x /usr/bin/time ] || skip "/usr/bin/time is not installed"
	bench_require_jdk
	[ -x "$FS_SIDECAR" ] || skip "build first (make)"
	# shellcheck source=tests/lib/apps.bash
	. tests/lib/apps.bash
	app_require jetty
	bench_setup
	bench_warn_perf_events
}

# bench_servlet_start NAME [app_start options: --fp ...]: jetty9 serving
# /app/hello (tests/lib/apps.bash) in the runc container NAME, registered
# and answering; SERVLET_PID is its host pid, SERVLET_URL the URL to load.
# Exits the script when it does not start.
bench_servlet_start() {
	local name=$1
	shift
	app_start "$name" jetty "$@" || {
		echo "$BENCH: jetty ($name) did not start" >&2
		exit 1
	}
	# shellcheck disable=SC2034 # read by the caller
	SERVLET_PID=$(fs_container_pid "$name")
	# shellcheck disable=SC2034
	SERVLET_URL="http://127.0.0.1:$(cat "$FS_TMP/$name/port")/app/hello"
}

# bench_servlet_warm ROUNDS URL...: ROUNDS times 5 s of wrk (-t1
# -c$CONNS, default 16) on each URL in turn, so that the JIT settles on the
# load before any window.
bench_servlet_warm() {
	local n=$1 u
	shift
	for _ in $(seq 1 "$n"); do
		for u in "$@"; do wrk -t1 -c"${CONNS:-16}" -d5s "$u" >/dev/null; done
	done
}

# bench_tree_ticks PID: the CPU of PID and everything it runs (the
# sandboxed ELF and attach children): utime + stime + the reaped children's
# cutime + cstime, of PID and of its live descendants, in clock ticks.
bench_tree_ticks() {
	local t c
	t=$(awk '{ sub(/.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0)
	for c in $(pgrep -P "$1"); do t=$((t + $(bench_tree_ticks "$c"))); done
	echo "$t"
}

# bench_start_workload NAME [fs_jvm_bundle options] -- [Workload args]: the
# Workload JVM of $JDK in the runc container NAME (fs_start_jvm: bundle
# $FS_TMP/NAME, /opt/fsjava bound, READY and registered), with PID its host
# pid and OPS the path of its --ops-file /tmp/ops seen from the host.
bench_start_workload() {
	local name=$1
	shift
	fs_start_jvm "$name" --java "$JDK/bin/java" "$@"
	OPS=/proc/$PID/root/tmp/ops
}

# bench_start_container NAME SECONDS [--mount SRC:DST]... -- ARGS...: the
# opted-in container NAME (bundle $FS_TMP/NAME) running ARGS, for a JVM that
# is not the Workload (fs_start_jvm only runs that one); SRC is bound
# read-only at DST. Waits SECONDS for a READY line in its output and 10 s
# for its registry entry; sets PID. Fails (output left in
# $FS_TMP/NAME/out.log) if READY does not come.
bench_start_container() {
	local name=$1 secs=$2 dir=$FS_TMP/$1 mounts=()
	shift 2
	while [ "$1" = --mount ]; do
		mounts+=(--mount "$2")
		shift 2
	done
	[ "$1" = -- ] && shift
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true "${mounts[@]}" -- "$@"
	fs_runc_run "$name" "$dir"
	PID=$(fs_container_pid "$name")
	fs_wait_for "$secs" grep -q READY "$dir/out.log" || return 1
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
}

# bench_read_ops: the ops file $OPS as "OPS MS", after its next update (the
# Workload rewrites it every 500 ms).
bench_read_ops() {
	local first
	first=$(cat "$OPS")
	fs_wait_for 5 sh -c "[ \"\$(cat $OPS)\" != \"$first\" ]"
	cat "$OPS"
}

# bench_median: the middle one of the numbers on stdin (one a line; the
# lower middle of an even count).
bench_median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# bench_median_mean: the median of the numbers on stdin, the mean of the
# two middle ones for an even count.
bench_median_mean() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_ms CMD...: run CMD (output discarded), print its wall time in ms.
bench_ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	awk -v d=$((t1 - t0)) 'BEGIN { printf "%.2f\n", d / 1e6 }'
}

# bench_load: the 1, 5 and 15 minute load averages.
bench_load() { cut -d' ' -f1-3 /proc/loadavg; }

# bench_corpus STACKS SEED: the render benchmarks' input. Checks that
# $BUILD/flamesidecar (FS) and perl exist (else exits 1), makes the temp dir
# $dir (removed on exit) and writes the seeded folded file $in there
# (bench/render-corpus.pl).
bench_corpus() {
	FS="$BUILD/flamesidecar"
	[ -x "$FS" ] || { echo "$BENCH: build first (make): $FS missing" >&2; exit 1; }
	command -v perl >/dev/null || { echo "$BENCH: needs perl" >&2; exit 1; }
	dir=$(mktemp -d)
	# shellcheck disable=SC2064 # $dir is fixed now
	trap "rm -rf '$dir'" EXIT
	in="$dir/in.folded"
	perl bench/render-corpus.pl "$1" "$2" >"$in"
}

# bench_best 'SHELL COMMAND': "WALL CPU", the lowest wall and CPU (user +
# system) seconds of 3 runs of the command (sh -c, stdout discarded).
bench_best() {
	local bw="" bc="" t w c
	for _ in 1 2 3; do
		t=$( { TIMEFORMAT='%R %U %S'; time sh -c "$1" >/dev/null; } 2>&1 | tail -1)
		w=$(echo "$t" | cut -d' ' -f1)
		c=$(echo "$t" | awk '{ print $2 + $3 }')
		if [ -z "$bw" ] || [ "$(echo "$w < $bw" | bc -l)" = 1 ]; then bw=$w; fi
		if [ -z "$bc" ] || [ "$(echo "$c < $bc" | bc -l)" = 1 ]; then bc=$c; fi
	done
	printf '%.3f %.3f' "$bw" "$bc"
}

# bench_ratio A B: A / B with two decimals.
bench_ratio() { echo "$1 / $2" | bc -l | xargs printf '%.2f'; }

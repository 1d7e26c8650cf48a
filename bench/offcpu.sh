#!/bin/bash
# bench/offcpu.sh - what `run --event offcpu|wall` costs a servlet under
# load (a context-switch-heavy JVM), against no profiling and against
# perf's sched_switch recording on the same JVM: Debian's jetty9 serving
# /app/hello (tests/lib/apps.bash) in a runc container WITHOUT
# -XX:+PreserveFramePointer, loaded with wrk from the host, alternating
# windows of one invocation, each round in a shuffled order. Modes:
#
#   none, none2  nothing profiles it (none2: the A/A control, what two
#                identical windows differ by)
#   offcpu       flamesidecar run NAME --event offcpu (99 Hz thread-state reads)
#   wall         flamesidecar run NAME --event wall
#   sched        perf record -e sched:sched_switch -g -p PID
#   offcpu-base  with BASE_SIDECAR=path: that (older) flamesidecar's
#                --event offcpu, to measure a change of the poller in the
#                same run (add it to MODES)
#
# Per window: wrk's requests/s, the JVM's context switches per second
# (voluntary + involuntary, all threads), the profiler's CPU seconds in the
# window (its process tree, /proc/PID/stat) and that CPU per context switch
# of the JVM in microseconds, and the CPU per request in microseconds of
# the JVM (utime + stime of all its threads: what perf's in-kernel work at
# each switch adds lands there) and of the JVM and the profiler together.
# On a machine shared with other load the requests/s move with it; the CPU
# per request much less. Prints per-round lines, then medians and
# ratios to none, and a markdown table for docs/performance.md.
#
# Usage: bench/offcpu.sh [WINDOW_SECONDS [ROUNDS [BUILD_DIR]]]  (default 6 3)
set -euo pipefail
cd "$(dirname "$0")/.."
WIN=${1:-6}
ROUNDS=${2:-3}
export FS_TOP=$PWD FS_BUILD=${3:-$PWD/build}
MODES=${MODES:-none none2 offcpu wall sched}
CONNS=${CONNS:-16}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_servlet_require
TCK=$(getconf CLK_TCK)
NAME=benchoff-$$
bench_servlet_start "$NAME"
PID=$SERVLET_PID
URL=$SERVLET_URL

# csw PID: context switches of all of PID's threads so far
csw() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}

bench_servlet_warm 3 "$URL"

# window MODE: "req/s csw/s profiler-CPU-s us-per-switch"
window() {
	local mode=$1 f=$W/$1 tpid="" prof="" p0=0 p1=0
	rm -f "$f".*
	case "$mode" in
	offcpu | wall | offcpu-base)
		local bin=$FS_SIDECAR ev=$mode
		[ "$mode" = offcpu-base ] && bin=${BASE_SIDECAR:?offcpu-base needs BASE_SIDECAR} ev=offcpu
		"$bin" run "$NAME" -d 600s --event "$ev" -o "$f.svg" >"$f.out" 2>"$f.err" &
		tpid=$!
		fs_wait_for 20 grep -q 'recording' "$f.err" || { cat "$f.err" >&2; return 1; }
		prof=$tpid
		;;
	sched)
		perf record -e sched:sched_switch -g -p "$PID" -o "$f.data" >"$f.out" 2>"$f.err" &
		tpid=$!
		fs_wait_for 20 sh -c "[ \$(find /proc/$tpid/fd -lname 'anon_inode:*perf_event*' 2>/dev/null | wc -l) -gt 0 ]" ||
			{ cat "$f.err" >&2; return 1; }
		prof=$tpid
		;;
	esac
	[ -n "$prof" ] && p0=$(bench_tree_ticks "$prof")
	local c0 c1 out j0 j1
	c0=$(csw "$PID")
	j0=$(bench_tree_ticks "$PID")
	out=$(wrk -t1 -c"$CONNS" -d"${WIN}s" "$URL")
	j1=$(bench_tree_ticks "$PID")
	c1=$(csw "$PID")
	if [ -n "$prof" ]; then
		p1=$(bench_tree_ticks "$prof")
		kill -INT "$prof" 2>/dev/null || true
		wait "$tpid" || true
		rm -f "$f.data"
	fi
	awk -v o="$out" -v c="$((c1 - c0))" -v p="$((p1 - p0))" -v j="$((j1 - j0))" -v hz="$TCK" -v w="$WIN" 'BEGIN {
		n = split(o, L, "\n")
		for (i = 1; i <= n; i++) {
			if (L[i] ~ /^Requests\/sec:/) { split(L[i], a, " "); rps = a[2] }
			if (L[i] ~ / requests in /) { split(L[i], a, " "); req = a[1] }
		}
		if (c < 0) c = 0 # threads that exited took their counts along
		printf "%.1f %.0f %.3f %.2f %.1f %.1f\n", rps, c / w, p / hz, (c > 0 ? p / hz * 1e6 / c : 0),
			(req > 0 ? j / hz * 1e6 / req : 0), (req > 0 ? (j + p) / hz * 1e6 / req : 0) }'
}

echo "# $BENCH: $ROUNDS rounds of ${WIN}s wrk windows (-t1 -c$CONNS), modes: $MODES"
echo "# jetty9 in runc without frame pointers, $(nproc) CPUs, load average $(bench_load)"
LOAD0=$(bench_load)
read -r -a MA <<<"$MODES"
order() {
	printf '%s\n' "${MA[@]}" | awk -v seed="$1" 'BEGIN { srand(seed + 0) } { a[NR] = $0 }
		END { for (i = NR; i > 1; i--) { j = int(rand() * i) + 1; t = a[i]; a[i] = a[j]; a[j] = t }
		      for (i = 1; i <= NR; i++) print a[i] }'
}
for r in $(seq 1 "$ROUNDS"); do
	for m in $(order "$r"); do
		v=$(window "$m") || v=$(window "$m") || { echo "$BENCH: window $m failed twice" >&2; exit 1; }
		echo "$r $m $v" >>"$W/results"
		echo "# round $r $m: $v"
	done
done
LOAD1=$(bench_load)
echo "# columns: req/s, JVM context switches/s, profiler CPU s in the window, profiler CPU us per JVM context switch, JVM CPU us per request, JVM + profiler CPU us per request"
echo
echo "Markdown ($ROUNDS rounds of ${WIN}s, \`$BENCH $WIN $ROUNDS\`, load average $LOAD0 -> $LOAD1):"
echo
awk -v modes="$MODES" '
function med(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ R[$1, $2] = $0; rounds[$1] = 1 }
END {
	print "| mode | req/s (median) | vs none | per-round ratio min..max | JVM switches/s | profiler CPU s / window | profiler CPU us per switch | JVM CPU us / request | JVM + profiler CPU us / request | vs none |"
	print "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"
	nm = split(modes, M, " ")
	nb = 0; for (r in rounds) if ((r, "none") in R) { split(R[r, "none"], y, " "); b[++nb] = y[3]; bj[nb] = y[8] }
	base = med(b, nb); basej = med(bj, nb)
	for (mi = 1; mi <= nm; mi++) {
		m = M[mi]; n = 0; lo = 1e9; hi = 0
		for (r in rounds) {
			if (!((r, m) in R)) continue
			split(R[r, m], x, " "); n++
			rps[n] = x[3]; cs[n] = x[4]; pc[n] = x[5]; us[n] = x[6]; jr[n] = x[7]; tr[n] = x[8]
			if ((r, "none") in R) { split(R[r, "none"], y, " "); q = y[3] > 0 ? x[3] / y[3] : 0; if (q < lo) lo = q; if (q > hi) hi = q }
		}
		if (!n) continue
		mt = med(tr, n)
		printf "| %s | %.0f | %.3f | %.3f..%.3f | %.0f | %.3f | %.2f | %.1f | %.1f | %.3f |\n", m, med(rps, n), med(rps, n) / base, lo, hi,
			med(cs, n), med(pc, n), med(us, n), med(jr, n), mt, (basej > 0 ? mt / basej : 0)
	}
}' "$W/results"

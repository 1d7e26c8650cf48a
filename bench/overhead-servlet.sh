#!/bin/bash
# bench/overhead-servlet.sh - what profiling costs a real servlet container
# under load: Debian's jetty9 serving a small servlet (tests/lib/apps.bash,
# /app/hello) in a runc container, loaded with wrk from the host, requests
# per second in alternating windows of one invocation. Two JVMs, started
# side by side and warmed up first:
#
#   nofp  started WITHOUT -XX:+PreserveFramePointer (the production case):
#         `run` uses --unwind auto, i.e. stack copies + the HotSpot unwinder
#   fp    started with -XX:+PreserveFramePointer: `run --unwind fp`
#
# Modes, on the same JVM pid, each round in a shuffled order:
#
#   none      nothing profiles it (the baseline)
#   run99     flamesidecar run NAME -F 99   (--kernel-filter on: system-wide
#             per-CPU events, a BPF program keeps the container's samples)
#   run999    flamesidecar run NAME -F 999
#   run99cg   flamesidecar run NAME -F 99 --kernel-filter off (per-CPU
#             cgroup events, switched at every context switch in or out)
#   run999cg  flamesidecar run NAME -F 999 --kernel-filter off
#   perf99    perf record -g -F 99 -p PID   (per-thread inherited events)
#   perf999   perf record -g -F 999 -p PID
#
# Per window: wrk's requests/s, requests per CPU second of the JVM (utime +
# stime: does not move with other load on the machine), the profiler's CPU
# during the window (/proc/PID/stat of it and its sandboxed children, from
# the events' opening to just before it is stopped: what competes with the
# workload) and in all (/usr/bin/time: with its work after the
# window, the SVG for `run`, perf.data's header for perf), its voluntary
# context switches per second of window (how often the poll loop wakes), its
# lost samples, and for perf the CPU of `perf script` over its perf.data
# (the fair pipeline comparison: perf record alone names nothing).
#
# Prints per-round lines, then per configuration the medians, ratios to
# `none` of the same invocation, the per-round spread of the ratio, and the
# load average, and a markdown table ready for docs/performance.md. Needs
# root, runc, jetty9, libservlet-api-java, wrk, curl, openjdk-17, perf.
#
# Usage: bench/overhead-servlet.sh [WINDOW_SECONDS [ROUNDS [BUILD_DIR]]]  (default 6 5)
#   CONFIGS="nofp fp" and MODES="none run99 run999 run99cg run999cg perf99 perf999"
#   select a subset (the default leaves out the two cgroup-event modes).
#   Defaults finish in about 8-9 minutes on 2 CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
WIN=${1:-6}
ROUNDS=${2:-5}
export FS_TOP=$PWD FS_BUILD=${3:-$PWD/build}
CONFIGS=${CONFIGS:-nofp fp}
MODES=${MODES:-none run99 run999 perf99 perf999}
CONNS=${CONNS:-16}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_servlet_require
TCK=$(getconf CLK_TCK)
declare -A PIDOF URLOF
for c in $CONFIGS; do
	opt=()
	[ "$c" = fp ] && opt=(--fp)
	bench_servlet_start "benchsrv-$c-$$" "${opt[@]}"
	PIDOF[$c]=$SERVLET_PID
	URLOF[$c]=$SERVLET_URL
done

url() { echo "${URLOF[$1]}"; }
# ticks PID: utime + stime of PID in clock ticks (0 when gone)
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# vcsw PID: voluntary context switches of PID so far, all its threads
vcsw() {
	cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}

# warm up both JVMs (the JIT settles on the load), alternately
# shellcheck disable=SC2046 # one URL per configuration
bench_servlet_warm 2 $(for c in $CONFIGS; do url "$c"; done)

# window CONFIG MODE: one line of figures (see the header) for MODE on CONFIG
window() {
	local c=$1 mode=$2 pid=${PIDOF[$1]} name=benchsrv-$1-$$ hz f=$W/$1-$2
	local tpid="" prof="" unw=auto p0=0 p1=0 v0=0 v1=0 kf=on
	hz=${mode#run}
	hz=${hz#perf}
	case "$hz" in *cg) hz=${hz%cg} kf=off ;; esac
	[ "$c" = fp ] && unw=fp
	rm -f "$f".*
	case "$mode" in
	run*)
		/usr/bin/time -f "%U %S" -o "$f.time" "$FS_SIDECAR" run "$name" -d 600s -F "$hz" \
			--unwind "$unw" --kernel-filter "$kf" -o "$f.svg" >"$f.out" 2>"$f.err" &
		tpid=$!
		;;
	perf*)
		/usr/bin/time -f "%U %S" -o "$f.time" perf record -F "$hz" -g -p "$pid" \
			-o "$f.data" >"$f.out" 2>"$f.err" &
		tpid=$!
		;;
	esac
	if [ -n "$tpid" ]; then
		prof=""
		fs_wait_for 10 sh -c "pgrep -P $tpid >/dev/null" && prof=$(pgrep -P "$tpid")
		# the events are open (run: one per CPU; perf: one per thread)
		if [ -z "$prof" ] || ! fs_wait_for 20 sh -c "[ \$(find /proc/$prof/fd -lname 'anon_inode:*perf_event*' 2>/dev/null | wc -l) -gt 0 ]"; then
			[ -n "$prof" ] && kill -INT "$prof"
			wait "$tpid" || true
			cat "$f.err" >&2
			return 1
		fi
		p0=$(bench_tree_ticks "$prof")
		v0=$(vcsw "$prof")
	fi
	local j0 j1 out
	j0=$(ticks "$pid")
	out=$(wrk -t1 -c"$CONNS" -d"${WIN}s" "$(url "$c")")
	j1=$(ticks "$pid")
	if [ -n "$tpid" ]; then
		p1=$(bench_tree_ticks "$prof")
		v1=$(vcsw "$prof")
		if ! kill -INT "$prof" 2>/dev/null; then
			wait "$tpid" || true
			echo "$BENCH: the profiler of window $c $mode ended early:" >&2
			cat "$f.err" "$f.time" >&2
			return 1
		fi
		wait "$tpid" || true
	fi
	local tot=0 pscr=0 lost=0
	[ -s "$f.time" ] && tot=$(awk 'END { print $1 + $2 }' "$f.time")
	case "$mode" in
	run*) lost=$(awk '/^samples / { gsub(/[(,]/, " "); for (i = 1; i <= NF; i++) if ($i == "lost") print $(i + 1) }' "$f.out") ;;
	perf*)
		/usr/bin/time -f "%U %S" -o "$f.stime" perf script -i "$f.data" >/dev/null 2>"$f.serr" || true
		lost=$(grep -ho 'lost [0-9]* chunks' "$f.err" "$f.serr" | awk '{ n += $2 } END { print n + 0 }')
		pscr=$(awk 'END { print $1 + $2 }' "$f.stime")
		rm -f "$f.data"
		;;
	esac
	awk -v o="$out" -v j="$((j1 - j0))" -v p="$((p1 - p0))" -v v="$((v1 - v0))" -v t="$tot" \
		-v s="$pscr" -v l="${lost:-0}" -v hz="$TCK" -v w="$WIN" 'BEGIN {
		n = split(o, L, "\n")
		for (i = 1; i <= n; i++) {
			if (L[i] ~ / requests in /) { split(L[i], a, " "); req = a[1] }
			if (L[i] ~ /^Requests\/sec:/) { split(L[i], a, " "); rps = a[2] }
		}
		printf "%.1f %.1f %.3f %.3f %.1f %d %.3f\n", rps, (j > 0 ? req * hz / j : 0),
			p / hz, t, v / w, l, s }'
}

echo "# $BENCH: $ROUNDS rounds of ${WIN}s wrk windows (-t1 -c$CONNS), configs: $CONFIGS, modes: $MODES"
echo "# jetty9 in runc, $("$JDK/bin/java" -version 2>&1 | head -1), $(nproc) CPUs, load average $(bench_load)"
LOAD0=$(bench_load)
read -r -a MA <<<"$MODES"
# order ROUND: the modes in an order shuffled per round (seeded by the round:
# reproducible). A rotation kept each mode's predecessor fixed, and a window
# right after a profiler's exit ran slower: two identical modes next to each
# other differed by 4-11% (run F, docs/perf-run.md).
order() {
	printf '%s\n' "${MA[@]}" | awk -v seed="$1" 'BEGIN { srand(seed + 0) } { a[NR] = $0 }
		END { for (i = NR; i > 1; i--) { j = int(rand() * i) + 1; t = a[i]; a[i] = a[j]; a[j] = t }
		      for (i = 1; i <= NR; i++) print a[i] }'
}
for r in $(seq 1 "$ROUNDS"); do
	ci=0
	for c in $CONFIGS; do
		ci=$((ci + 1))
		for m in $(order "$((r * 10 + ci))"); do
			# one retry: a profiler can fail to start on a machine where
			# others lock perf buffers too (perf_event_mlock_kb is per user)
			v=$(window "$c" "$m") || v=$(window "$c" "$m") ||
				{ echo "$BENCH: window $c $m failed twice" >&2; exit 1; }
			echo "$r $c $m $v" >>"$W/results"
			echo "# round $r $c $m: $v"
		done
	done
done
LOAD1=$(bench_load)
echo "# columns: req/s, req per JVM CPU s, profiler CPU s in window, profiler CPU s in all, profiler wakeups/s, lost, perf script CPU s"
echo "# load average before: $LOAD0, after: $LOAD1"

# per configuration and mode: medians, ratios to none, per-round spread of
# the ratio (each round's mode against that round's none)
summary() {
	awk -v modes="$MODES" -v configs="$CONFIGS" -v md="$1" '
	function med(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{ R[$1, $2, $3] = $0; rounds[$1] = 1 }
	END {
		nc = split(configs, C, " "); nmod = split(modes, M, " ")
		if (md) {
			print "| JVM | mode | req/s (median) | vs none | per-round ratio min..max | req per JVM CPU s | vs none | profiler CPU s / window (in all) | + perf script CPU s | profiler wakeups/s | lost |"
			print "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"
		} else {
			printf "%-5s %-8s %10s %8s %15s %10s %8s %14s %9s %8s %6s\n", "jvm", "mode", "req/s", "vs none",
				"round ratios", "req/JVMs", "vs none", "prof CPU (all)", "script", "wakeup/s", "lost"
		}
		for (ci = 1; ci <= nc; ci++) for (mi = 1; mi <= nmod; mi++) {
			c = C[ci]; m = M[mi]; n = 0
			for (r in rounds) {
				if (!((r, c, m) in R)) continue
				split(R[r, c, m], x, " "); n++
				rps[n] = x[4]; eff[n] = x[5]; pc[n] = x[6]; pt[n] = x[7]; wk[n] = x[8]; lo[n] = x[9]; sc[n] = x[10]
				rat[n] = 0
				if ((r, c, "none") in R) { split(R[r, c, "none"], y, " "); if (y[4] > 0) rat[n] = x[4] / y[4] }
				nb = 0
			}
			if (!n) continue
			nb = 0; for (r in rounds) if ((r, c, "none") in R) { split(R[r, c, "none"], y, " "); nb++; b[nb] = y[4]; be[nb] = y[5] }
			base = med(b, nb); baseeff = med(be, nb)
			mr = med(rps, n); me = med(eff, n)
			lo_r = 1e9; hi_r = 0; for (i = 1; i <= n; i++) { if (rat[i] < lo_r) lo_r = rat[i]; if (rat[i] > hi_r) hi_r = rat[i] }
			label = m; cg = sub(/cg$/, "", label); sub(/^run/, "run ", label); sub(/^perf/, "perf record -g ", label); if (m != "none") label = label " Hz"; if (cg) label = label " (cgroup events)"
			if (md)
				printf "| %s | %s | %.0f | %.3f | %.3f..%.3f | %.0f | %.3f | %.3f (%.3f) | %s | %s | %d |\n", c, label, mr, mr / base,
					lo_r, hi_r, me, me / baseeff, med(pc, n), med(pt, n), m ~ /^perf/ ? sprintf("%.3f", med(sc, n)) : "-",
					m == "none" ? "-" : sprintf("%.1f", med(wk, n)), med(lo, n)
			else
				printf "%-5s %-8s %10.1f %7.3fx %7.3f..%-7.3f %10.1f %7.3fx %7.3f (%5.3f) %9.3f %8.1f %6d\n", c, m, mr, mr / base,
					lo_r, hi_r, me, me / baseeff, med(pc, n), med(pt, n), med(sc, n), med(wk, n), med(lo, n)
		}
	}' "$W/results"
}
summary 0
echo
echo "Markdown ($ROUNDS rounds of ${WIN}s, \`$BENCH $WIN $ROUNDS\`, load average $LOAD0 -> $LOAD1):"
echo
summary 1

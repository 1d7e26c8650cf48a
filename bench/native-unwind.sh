#!/bin/bash
# bench/native-unwind.sh - per-sample CPU of the native unwinder (stack
# copies walked by .eh_frame CFI, docs/unwind.md) against perf's own
# answer to the same question, `perf record --call-graph dwarf` + `perf
# script`, on the same processes in the same invocation: a runc container
# running the C program of tests/integration/native-unwind.bats (built
# -O2 -fomit-frame-pointer), Debian's bash and python3 in busy loops.
#
#   flamesidecar  `run -F HZ -d WIN`: CPU (user + system) of the whole run
#                 (open, sampling, unwinding, symbolizing, SVG), and the
#                 unwinder's own CPU per sample from the summary
#   perf          `perf record --call-graph dwarf -F HZ -p PIDS -- sleep WIN`
#                 then `perf script` (the unwinding happens there): CPU of both
#
# Per tool and round: samples, CPU seconds, microseconds of CPU per sample;
# the median over ROUNDS rounds (tools alternate, so drifting load hits both
# alike) and the ratio perf / flamesidecar. Needs root, runc, gcc, perf.
#
# Usage: bench/native-unwind.sh [WINDOW_SECONDS [ROUNDS [HZ [BUILD_DIR]]]]   (default 5 3 199)
set -euo pipefail
cd "$(dirname "$0")/.."
WIN=${1:-5}
ROUNDS=${2:-3}
HZ=${3:-199}
export FS_TOP=$PWD FS_BUILD=${4:-$PWD/build}

# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_require_root
bench_require_cmd runc
bench_require_cmd gcc
bench_require_cmd perf linux-perf
[ -x /usr/bin/time ] || skip "/usr/bin/time is not installed"
[ -x "$FS_SIDECAR" ] || skip "build first (make)"
bench_warn_perf_events

bench_setup
cat >"$W/deep.c" <<'C'
#include <stdio.h>
volatile unsigned long sink;
#define NI __attribute__((noinline, noclone))
NI void spin(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * 7; }
NI void level3(unsigned long n) { unsigned long a[8]; for (int i = 0; i < 8; i++) a[i] = sink + n + i; spin(n + (a[n % 8] & 1)); sink -= a[2]; }
NI void level2(unsigned long n) { unsigned long b[4] = {n, sink, n + 2, n + 3}; level3(n + (b[1] & 1)); sink -= b[n % 4]; }
NI void level1(unsigned long n) { sink += n; level2(n ^ 1); sink -= 3; }
int main(int argc, char **argv) { (void)argv; puts("READY"); fflush(stdout); for (;;) level1(200000 + (unsigned long)argc); }
C
gcc -O2 -fomit-frame-pointer -o "$W/deep" "$W/deep.c"
NAME=benchnative-$$
bench_start_container "$NAME" 10 --mount "$W:/opt/bench" -- /bin/sh -c \
	'/bin/bash -c "while :; do x=\$((x+1)); done" & /usr/bin/python3 -c "
x = 0
while True: x += 1" & exec /opt/bench/deep'
PIDS=$(pgrep -d, -P "$PID")
PIDS="$PID${PIDS:+,$PIDS}"
sleep 1 # python3 and bash past their start

echo "# $BENCH: ${WIN} s windows at $HZ Hz, $ROUNDS rounds, $(nproc) CPUs, load average before: $(bench_load)"
echo "# processes: $PIDS ($(ps -o comm= -p "${PIDS//,/ }" | tr '\n' ' '))"
printf '%-14s %5s %8s %8s %10s\n' tool round samples cpu_s us/sample

ours() {
	local r=$1 t samples
	/usr/bin/time -f "%U %S" -o "$W/ours.time" "$FS_SIDECAR" run "$NAME" -d "${WIN}s" -F "$HZ" \
		-o "$W/ours.svg" >"$W/ours.out" 2>"$W/ours.err"
	samples=$(awk '/^samples/ {print $2}' "$W/ours.out")
	t=$(awk '{print $1 + $2}' "$W/ours.time")
	printf '%-14s %5s %8s %8s %10.1f\n' flamesidecar "$r" "$samples" "$t" \
		"$(awk -v t="$t" -v s="$samples" 'BEGIN {print s ? t * 1e6 / s : 0}')"
	echo "$t $samples" >>"$W/ours.rows"
	grep '^unwinder' "$W/ours.out" | sed 's/^/#   /'
}

theirs() {
	local r=$1 t1 t2 samples
	/usr/bin/time -f "%U %S" -o "$W/rec.time" perf record -q --call-graph dwarf -F "$HZ" \
		-p "$PIDS" -o "$W/p.data" -- sleep "$WIN" >/dev/null 2>&1
	/usr/bin/time -f "%U %S" -o "$W/scr.time" perf script -i "$W/p.data" >"$W/p.txt" 2>/dev/null
	samples=$(grep -c '^[^ 	]' "$W/p.txt" || true)
	t1=$(awk '{print $1 + $2}' "$W/rec.time")
	t2=$(awk '{print $1 + $2}' "$W/scr.time")
	local t
	t=$(awk -v a="$t1" -v b="$t2" 'BEGIN {print a + b}')
	printf '%-14s %5s %8s %8s %10.1f   (record %s s, script %s s)\n' "perf dwarf" "$r" "$samples" "$t" \
		"$(awk -v t="$t" -v s="$samples" 'BEGIN {print s ? t * 1e6 / s : 0}')" "$t1" "$t2"
	echo "$t $samples" >>"$W/perf.rows"
	rm -f "$W/p.data" "$W/p.txt"
}

for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		ours "$r"
		theirs "$r"
	else
		theirs "$r"
		ours "$r"
	fi
done

per_sample() { awk '{ print $2 ? $1 * 1e6 / $2 : 0 }' "$1" | bench_median_mean; }
o=$(per_sample "$W/ours.rows")
p=$(per_sample "$W/perf.rows")
echo "# median us of CPU per sample: flamesidecar $o, perf record + script $p, ratio perf/flamesidecar $(awk -v a="$p" -v b="$o" 'BEGIN {printf "%.1f", b ? a / b : 0}')"

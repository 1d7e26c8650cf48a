#!/bin/sh
# sampler-overhead.sh - how much a recording slows a CPU-bound program.
#
# The same fixed amount of work (2 threads of integer mixing, compiled here)
# runs three ways in this one invocation, each REPEAT times, best time kept:
#   baseline   nothing recording
#   ours       flamesidecar's sampler + symbolizer (build/tests/test_sampler.t
#              --profile, scope: the workload's pid) at FREQ Hz
#   perf       `perf record -F FREQ -a -g` (system-wide, like ours) if perf works
# and prints each time and its ratio to the baseline, plus the CPU time the
# recorder itself used (utime+stime from /proc, sampled just before it is
# stopped), which is robust to other load on the machine. Needs root.
#
#   bench/sampler-overhead.sh [FREQ] [REPEAT]      (defaults 99 and 3)
set -eu
cd "$(dirname "$0")/.."
FREQ=${1:-99}
REPEAT=${2:-3}
BUILD=${BUILD:-build}
PROFILE="$BUILD/tests/test_sampler.t"
[ -x "$PROFILE" ] || { echo "build first: make $PROFILE" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/work.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 1000; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17; x += (unsigned long)i;
	}
	return x;
}
static void *worker(void *arg)
{
	unsigned long x = (unsigned long)arg | 1, n = strtoul(getenv("WORK_N"), NULL, 10);
	for (unsigned long i = 0; i < n; i++)
		x = mix(x);
	sink = x;
	return NULL;
}
int main(void)
{
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
C
gcc -O2 -fno-omit-frame-pointer -pthread -o "$tmp/work" "$tmp/work.c"
export WORK_N=${WORK_N:-400000}
TCK=$(getconf CLK_TCK)

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc; }

# cpu_of PID: user+system seconds of PID so far
cpu_of() { awk -v t="$TCK" '{ sub(/.*\) /, ""); printf "%.3f\n", ($12 + $13) / t }' "/proc/$1/stat"; }

# run_once MODE: prints seconds of one workload run under MODE
run_once() {
	mode=$1
	case $mode in
	baseline)
		t0=$(now); "$tmp/work"; t1=$(now) ;;
	ours)
		# the workload waits for the profiler: start it stopped, sample it, continue it
		sh -c 'kill -STOP $$; exec "$0"' "$tmp/work" &
		w=$!
		"$PROFILE" --profile --pid "$w" --seconds 600 --frequency "$FREQ" >"$tmp/ours.folded" 2>"$tmp/ours.err" &
		p=$!
		until grep -q '^sampling$' "$tmp/ours.err" 2>/dev/null; do sleep 0.01; done
		t0=$(now); kill -CONT "$w"; wait "$w"; t1=$(now)
		cpu_of "$p" >"$tmp/cpu.ours"
		kill "$p"; wait "$p" 2>/dev/null || true ;;
	perf)
		perf record -q -F "$FREQ" -a -g -o "$tmp/perf.data" >/dev/null 2>&1 &
		p=$!
		sleep 1 # perf record prints nothing when ready; give it its start-up second
		t0=$(now); "$tmp/work"; t1=$(now)
		cpu_of "$p" >"$tmp/cpu.perf"
		kill -INT "$p"; wait "$p" 2>/dev/null || true ;;
	esac
	elapsed "$t0" "$t1"
}

best() {
	b=""
	i=0
	while [ "$i" -lt "$REPEAT" ]; do
		t=$(run_once "$1")
		if [ -z "$b" ] || [ "$(echo "$t < $b" | bc)" = 1 ]; then b=$t; fi
		i=$((i + 1))
	done
	echo "$b"
}

base=$(best baseline)
ours=$(best ours)
printf 'workload: 2 threads x %s calls, %s Hz, best of %s\n' "$WORK_N" "$FREQ" "$REPEAT"
printf '%-10s %8.3f s\n' baseline "$base"
printf '%-10s %8.3f s  ratio %.3f  (recorder CPU %s s in its last run)\n' ours "$ours" \
	"$(echo "$ours / $base" | bc -l)" "$(cat "$tmp/cpu.ours")"
if perf record -q -F 99 -a -g -o "$tmp/probe.data" true >/dev/null 2>&1; then
	perf_t=$(best perf)
	printf '%-10s %8.3f s  ratio %.3f  (recorder CPU %s s in its last run)\n' "perf -a -g" \
		"$perf_t" "$(echo "$perf_t / $base" | bc -l)" "$(cat "$tmp/cpu.perf")"
else
	echo "perf record does not work here: no comparison"
fi

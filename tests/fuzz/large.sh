#!/bin/sh
# Fuzzing at container sizes (issue 12): the parsers of container input
# whose input a container can make large (/proc/<pid>/maps, the perf map,
# the timed JIT log) run under libFuzzer with inputs up to MAX_LEN (default
# 8 MiB), started from seeds of a realistic shape and several MiB each, so
# that resource bugs (time, memory) show as well as crashes.
#   tests/fuzz/large.sh SECONDS [WORKDIR]     (after `make fuzz`)
# Results: WORKDIR/<target>.log; a crash, leak, timeout or RSS past
# -rss_limit_mb leaves WORKDIR/<target>/art/ and fails the script.
set -eu
secs=${1:-60}
work=${2:-$(mktemp -d)}
max_len=${MAX_LEN:-8388608}
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work/procmaps/corpus" "$work/perfmap/corpus" "$work/jitlog/corpus"
awk 'BEGIN { for (i = 0; i < 60000; i++)
	printf "%x-%x r-xp 00000000 08:02 %d /usr/lib/x86_64-linux-gnu/libexample-%d.so (deleted)\n",
		65536 + i * 8192, 65536 + i * 8192 + 4096, i + 1, i }' >"$work/procmaps/corpus/sorted"
awk 'BEGIN { for (i = 0; i < 90000; i++)
	printf "%x %x Lcom/example/Class%d;.method%d\n", 4096 + i * 64, 48, i, i % 97 }' \
	>"$work/perfmap/corpus/map"
awk 'BEGIN { for (i = 0; i < 70000; i++) {
	printf "@%d %x 40 %x\n%x 40 com.example.C%d.m->com.example.I%d.call\n", i * 10,
		4096 + i * 64, i, 4096 + i * 64, i, i % 31
	if (i % 7 == 0) printf "-%d %x %x\n", i * 10 + 5, 4096 + (i / 2) * 64, i / 2 } }' \
	>"$work/jitlog/corpus/log"
# A container's debug files (fuzz_elfdebug): glibc (a debug link, PLT
# sections, 2 MiB) and a program with MiniDebugInfo built here.
mkdir -p "$work/elfdebug/corpus"
cp /lib/x86_64-linux-gnu/libc.so.6 "$work/elfdebug/corpus/libc" 2>/dev/null || true
if command -v cc >/dev/null && command -v objcopy >/dev/null && command -v xz >/dev/null; then
	cc -O2 -o "$work/elfdebug/prog" "$top/tests/fixtures/debuginfo/sortloop.c" &&
		objcopy -S --keep-symbols=/dev/null "$work/elfdebug/prog" "$work/elfdebug/mini" &&
		xz -f "$work/elfdebug/mini" && cp "$work/elfdebug/prog" "$work/elfdebug/corpus/mini" &&
		strip "$work/elfdebug/corpus/mini" &&
		objcopy --add-section .gnu_debugdata="$work/elfdebug/mini.xz" "$work/elfdebug/corpus/mini" ||
		true
fi
failed=""
for t in procmaps perfmap jitlog elfdebug; do
	mkdir -p "$work/$t/art"
	if "$top/build-fuzz/fuzz_$t" -max_total_time="$secs" -max_len="$max_len" -len_control=0 \
		-rss_limit_mb=2048 -timeout=30 -artifact_prefix="$work/$t/art/" \
		"$work/$t/corpus" >"$work/$t.log" 2>&1; then
		echo "ok fuzz_$t: $(grep -o 'Done [0-9]* runs' "$work/$t.log" || echo ran) in $secs s," \
			"largest input $(ls -S "$work/$t/corpus" | head -1 | xargs -I{} stat -c %s "$work/$t/corpus/{}") bytes"
	else
		echo "FAIL fuzz_$t:"
		tail -n 30 "$work/$t.log"
		failed="$failed $t"
	fi
done
echo "logs and corpora in $work"
[ -z "$failed" ]

#!/usr/bin/env bats
# collapse.bats - `flamesidecar collapse` prints what stackcollapse-perf.pl
# prints: FlameGraph's own regression corpus (when this checkout has it
# beside it), our fixtures of odd frames and real recordings, stdin vs
# files, and the command line.

: "${FS_TOP:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${FS_BUILD:=$FS_TOP/build}"
FS="$FS_BUILD/flamesidecar"
COMPAT="$FS_TOP/../shared/compat/flamegraph-tests"
FIXTURES="$FS_TOP/tests/fixtures/collapse"

setup() {
	[ -x "$FS" ] || skip "$FS is not built (make)"
	TMP="$(mktemp -d)"
}

teardown() {
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
	true
}

# Every NAME.txt with a results/NAME-collapsed-MODE.txt, run with --MODE.
compat_mode() {
	local mode="$1" res name n=0 failed=""
	[ -d "$COMPAT/results" ] || skip "no FlameGraph compat corpus at $COMPAT (only in a development checkout)"
	for res in "$COMPAT"/results/*-collapsed-"$mode".txt; do
		[ -e "$res" ] || continue
		name="$(basename "$res" "-collapsed-$mode.txt")"
		n=$((n + 1))
		if ! "$FS" collapse --quiet "--$mode" "$COMPAT/$name.txt" >"$TMP/out" 2>"$TMP/err"; then
			failed="$failed $name(exit $?: $(head -c 200 "$TMP/err"))"
		elif ! cmp -s "$TMP/out" "$res"; then
			echo "--- $name --$mode: diff expected got" >&2
			diff "$res" "$TMP/out" | head -10 >&2
			failed="$failed $name"
		fi
	done
	[ "$n" -gt 0 ] || skip "no results for --$mode in $COMPAT"
	if [ -n "$failed" ]; then
		echo "--$mode differs from stackcollapse-perf.pl for:$failed" >&2
		return 1
	fi
}

@test "compat corpus: --pid matches stackcollapse-perf.pl" { compat_mode pid; }
@test "compat corpus: --tid matches stackcollapse-perf.pl" { compat_mode tid; }
@test "compat corpus: --kernel matches stackcollapse-perf.pl" { compat_mode kernel; }
@test "compat corpus: --jit matches stackcollapse-perf.pl" { compat_mode jit; }
@test "compat corpus: --all matches stackcollapse-perf.pl" { compat_mode all; }
@test "compat corpus: --addrs matches stackcollapse-perf.pl" { compat_mode addrs; }

@test "fixtures: odd frames and real recordings give the expected folded lines" {
	local exp args failed="" n=0
	cd "$FIXTURES"
	while read -r exp args; do
		case "$exp" in '' | '#'*) continue ;; esac
		n=$((n + 1))
		# shellcheck disable=SC2086
		"$FS" collapse --quiet $args >"$TMP/out"
		if ! cmp -s "$TMP/out" "$exp"; then
			echo "--- collapse $args: diff $exp got" >&2
			diff "$exp" "$TMP/out" | head -10 >&2
			failed="$failed $exp"
		fi
	done <cases.txt
	[ "$n" -ge 10 ]
	[ -z "$failed" ]
}

@test "stdin gives the same output as a file, across read-buffer boundaries" {
	local big="$FIXTURES/real-dd.txt"
	[ -d "$COMPAT" ] && big="$COMPAT/perf-vertx-stacks-01.txt"
	# > 4 MiB so the stream reader carries partial lines between reads
	local copies=$((5 * 1024 * 1024 / $(stat -c %s "$big") + 1)) i
	for i in $(seq "$copies"); do
		cat "$big"
	done >"$TMP/big.txt"
	[ "$(stat -c %s "$TMP/big.txt")" -gt $((4 * 1024 * 1024)) ]
	"$FS" collapse --all "$TMP/big.txt" >"$TMP/file.out"
	cat "$TMP/big.txt" | "$FS" collapse --all >"$TMP/pipe.out"
	"$FS" collapse --all - <"$TMP/big.txt" >"$TMP/dash.out"
	[ -s "$TMP/file.out" ]
	cmp "$TMP/file.out" "$TMP/pipe.out"
	cmp "$TMP/file.out" "$TMP/dash.out"
	# counts are $copies times those of one copy
	"$FS" collapse --all "$big" | head -1 | awk -v n="$copies" '{print $NF * n}' >"$TMP/one"
	head -1 "$TMP/file.out" | awk '{print $NF}' >"$TMP/many"
	cmp "$TMP/one" "$TMP/many"
}

@test "a last line without a newline is read; an unterminated sample is dropped like perl" {
	printf 'app 1 1.0: cpu-clock:\n\tabc main (/bin/app)\n\napp 1 2.0: cpu-clock:\n\tabc other (/bin/app)' \
		>"$TMP/in.txt"
	run "$FS" collapse "$TMP/in.txt"
	[ "$status" -eq 0 ]
	[ "$output" = "app;main 1" ]
}

@test "stdin redirected from a partly read file is read from its offset" {
	printf 'skip 1 1.0: cycles:\n\nab 2 1.0: cycles:\n\n' >"$TMP/off.txt"
	run sh -c 'dd bs=21 count=1 status=none >/dev/null; "$1" collapse' sh "$FS" <"$TMP/off.txt"
	[ "$status" -eq 0 ]
	[ "$output" = "ab 1" ]
}

@test "output is sorted byte-wise and -o writes a file" {
	"$FS" collapse -o "$TMP/out.folded" "$FIXTURES/unusual.txt" 2>/dev/null
	LC_ALL=C sort -c "$TMP/out.folded"
	cmp "$TMP/out.folded" "$FIXTURES/unusual.default.folded"
}

@test "mixed event types: the first is kept and stderr says which were skipped" {
	run "$FS" collapse "$FIXTURES/unusual.txt"
	[ "$status" -eq 0 ]
	[[ "$output" == *"kept only 'cpu-clock:ppp' events"*"'page-faults'"*"--event-filter"* ]]
	run "$FS" collapse --quiet "$FIXTURES/unusual.txt"
	[[ "$output" != *"kept only"* ]]
}

@test "perl-style single-dash long options work like the double-dash ones" {
	cd "$FIXTURES"
	"$FS" collapse -q -tid -all unusual.txt >"$TMP/single"
	"$FS" collapse -q --tid --all unusual.txt >"$TMP/double"
	cmp "$TMP/single" "$TMP/double"
	"$FS" collapse -q -event-filter=page-faults unusual.txt | cmp - unusual.page-faults.folded
}

@test "--help has usage and EXAMPLES; bad usage exits 2; unreadable input exits 1" {
	run "$FS" collapse --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: flamesidecar collapse"* ]]
	[[ "$output" == *"EXAMPLES"* ]]
	run "$FS" collapse --no-such-option
	[ "$status" -eq 2 ]
	run "$FS" collapse --inline "$FIXTURES/unusual.txt"
	[ "$status" -eq 2 ]
	[[ "$output" == *"perf script --inline"* ]]
	run "$FS" collapse "$TMP/missing.txt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot open $TMP/missing.txt"* ]]
}

@test "text that is not perf script output warns and prints nothing" {
	printf 'hello world\nthis is not perf\n' >"$TMP/junk.txt"
	run "$FS" collapse "$TMP/junk.txt"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ignored 2 unrecognized lines (the first is line 1 of $TMP/junk.txt)"* ]]
	[[ "$output" == *"no samples found"* ]]
}

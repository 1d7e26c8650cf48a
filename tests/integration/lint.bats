#!/usr/bin/env bats
# lint.bats - rules about the tests themselves that no test would notice
# breaking (docs/testing.md "Tests that can fail").

: "${FS_TOP:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"

# bats runs a test with errexit, which ignores a command negated with `!`
# unless it is the test's last command: `! grep x f` in the middle of a test
# passes whatever grep finds. Every such line ends in `|| false` (or an
# `|| { ...; false; }` that says why).
@test "no negated command in a bats file that errexit would ignore" {
	cd "$FS_TOP"
	run grep -nE '^[[:space:]]*! ' tests/integration/*.bats
	bad=$(printf '%s\n' "$output" | grep -vE '\|\|.*false;?[[:space:]]*\}?[[:space:]]*$' | grep . || true)
	[ -z "$bad" ] || {
		echo "negated lines without '|| false':"
		echo "$bad"
		false
	}
}

@test "the lint above fails on a negated line without '|| false'" {
	d="$BATS_TEST_TMPDIR/t"
	mkdir -p "$d"
	printf '@test x {\n\t! grep -q a /dev/null\n\ttrue\n}\n' >"$d/x.bats"
	run grep -nE '^[[:space:]]*! ' "$d/x.bats"
	[ -n "$(printf '%s\n' "$output" | grep -vE '\|\|.*false;?[[:space:]]*\}?[[:space:]]*$' | grep .)" ]
}

@test "no merge leftovers tracked (.orig, .rej)" {
	cd "$FS_TOP"
	command -v git >/dev/null && [ -e .git ] || skip "not a git checkout"
	run git ls-files '*.orig' '*.rej'
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

# Test hooks (FS_TEST_* variables) exist only in the -DFS_TEST_BUILD variant
# ($FS_BUILD/test/flamesidecar): a root binary that reads them would let
# the environment steer it (one made it write files where a variable said).
@test "no FS_TEST_ hook outside a test-build guard in the sources" {
	cd "$FS_TOP"
	bad=""
	for f in $(grep -rl FS_TEST_ sidecar hook lib wrapper || true); do
		# every FS_TEST_ line must sit between #ifdef FS_TEST_BUILD and its #endif
		# (comments excepted)
		out=$(awk '
			/^#if/ { depth++; guard[depth] = ($0 ~ /^#(ifdef[[:space:]]+|if[[:space:]]+defined[[:space:]]*\(?)FS_TEST_BUILD/) }
			/^#el/ { guard[depth] = 0 }
			/^#endif/ { depth-- }
			/FS_TEST_/ && !/FS_TEST_BUILD/ && !/^[[:space:]]*(\/\*|\*)/ {
				ok = 0
				for (i = 1; i <= depth; i++) if (guard[i]) ok = 1
				if (!ok) print FILENAME ":" NR ": " $0
			}' "$f")
		bad="$bad$out"
	done
	[ -z "$bad" ] || {
		echo "FS_TEST_ outside #ifdef FS_TEST_BUILD:"
		echo "$bad"
		false
	}
}

@test "the guard lint above sees a hook outside #ifdef FS_TEST_BUILD" {
	d="$BATS_TEST_TMPDIR/src"
	mkdir -p "$d/sidecar"
	printf '#ifndef FS_TEST_BUILD\nx = getenv("FS_TEST_X");\n#endif\n' >"$d/sidecar/a.c"
	printf '#ifdef FS_TEST_BUILD\n#else\ny = getenv("FS_TEST_Y");\n#endif\n' >"$d/sidecar/b.c"
	printf '#ifdef FS_TEST_BUILD\nz = getenv("FS_TEST_Z");\n#endif\n' >"$d/sidecar/c.c"
	FS_TOP="$d" run bats -f "no FS_TEST_ hook" "$BATS_TEST_FILENAME"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"sidecar/a.c:2"* ]]
	[[ "$output" == *"sidecar/b.c:3"* ]]
	[[ "$output" != *"sidecar/c.c"* ]]
}

@test "the installed binaries contain no FS_TEST_ string" {
	: "${FS_BUILD:=$FS_TOP/build}"
	command -v strings >/dev/null || skip "strings (binutils) is not installed"
	n=0
	for b in flamesidecar flamehook flamesidecar-runtime flamesidecar-debuginfod libflameagent.so; do
		[ -f "$FS_BUILD/$b" ] || continue
		n=$((n + 1))
		run grep -c FS_TEST_ <(strings "$FS_BUILD/$b")
		echo "$b: $output"
		[ "$output" = 0 ]
	done
	[ "$n" -gt 0 ] || skip "nothing built in $FS_BUILD"
	# and the check sees the strings where they are meant to be
	if [ -f "$FS_BUILD/test/flamesidecar" ]; then
		strings "$FS_BUILD/test/flamesidecar" | grep -q FS_TEST_SANDBOX_STATUS
	fi
}

# A TAP program without a plan hides a group left by an early return: every
# unit test says up front how many checks it runs (tests/lib/tap.h).
@test "every unit test declares its plan with tap_plan()" {
	cd "$FS_TOP"
	run grep -L 'tap_plan(' tests/unit/test_*.c
	echo "$output"
	[ -z "$output" ]
}

# A skip written as ok(1, "# SKIP ...") counts one check for a group of
# any size; tap_skip(n, why) counts what it leaves out.
@test "unit tests skip with tap_skip(), not a passing check" {
	cd "$FS_TOP"
	run grep -nE '(ok|tap_ok)\(1, *"# ?SKIP' tests/unit/*.c
	echo "$output"
	[ -z "$output" ]
}

@test "a unit test that runs fewer checks than its plan fails" {
	command -v cc >/dev/null || skip "no C compiler"
	d="$BATS_TEST_TMPDIR"
	printf '%s\n' '#include "tap.h"' 'static void group(int run) { if (!run) return; ok(1, "b"); }' \
		'int main(int argc, char **argv) { tap_plan(2); ok(1, "a"); group(argc > 1); return tap_done(); }' >"$d/t.c"
	cc -I"$FS_TOP/tests/lib" -o "$d/t" "$d/t.c" "$FS_TOP/tests/lib/tap.c"
	run "$d/t" all
	[ "$status" -eq 0 ]
	run "$d/t"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"planned 2 checks, ran 1"* ]]
}

# House style: no function over 80 lines (tests/lib/long-functions.awk),
# the verb layer included now that its options are tables.
@test "no function over 80 lines" {
	cd "$FS_TOP"
	run awk -f tests/lib/long-functions.awk lib/*.c hook/*.c wrapper/*.c agent/*.c \
		sidecar/*.c sidecar/*/*.c sidecar/debuginfo/helper/*.c
	[ "$status" -eq 0 ]
	bad=$(printf '%s\n' "$output" | grep . || true)
	[ -z "$bad" ] || {
		echo "functions over 80 lines:"
		echo "$bad"
		false
	}
}

@test "the length lint above sees an 81-line function" {
	f="$BATS_TEST_TMPDIR/long.c"
	{
		printf 'static int long_one(int x)\n{\n'
		for _ in $(seq 78); do printf '\tx++;\n'; done
		printf '}\n'
	} >"$f"
	run awk -f "$FS_TOP/tests/lib/long-functions.awk" "$f"
	[ "$output" = "81 $f:1 long_one" ]
	run awk -f "$FS_TOP/tests/lib/long-functions.awk" -v MAX=81 "$f"
	[ -z "$output" ]
}

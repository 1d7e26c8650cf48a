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

#!/bin/sh
# Run every test through prove: C unit tests ($BUILD/tests/*.t, TAP) and the
# bats integration tests (tests/integration/*.bats). One summary at the end.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export FS_TOP="$PWD" FS_BUILD="$PWD/$BUILD"
files=""
suites="$BUILD/tests/*.t tests/integration/*.bats"
[ "${FS_ASAN_SCOPE:-}" = unit ] && suites="$BUILD/tests/*.t"
for t in $suites; do
	[ -e "$t" ] && files="$files $t"
done
if [ -n "${FS_TESTS:-}" ]; then files="$FS_TESTS"; fi
mkdir -p "$BUILD/test-artifacts"
rm -rf "$BUILD/test-artifacts/tap"
rc=0
# shellcheck disable=SC2086
prove --timer --exec tests/lib/exec-one.sh $files || rc=$?
# A digest of every failed test, last, where a CI log's tail shows it: the
# "not ok" line and what the test printed (capped per test and in all).
if [ "$rc" != 0 ] && [ -d "$BUILD/test-artifacts/tap" ]; then
	echo "== what the failed tests printed (whole TAP in $BUILD/test-artifacts/tap/)"
	for f in "$BUILD"/test-artifacts/tap/*.tap; do
		awk -v f="$(basename "$f" .tap)" '
			/^not ok / { on = 1; n = 0; print f ": " $0; next }
			/^(ok|not ok) / { on = 0 }
			on && /^#/ && n < 25 { print "  " $0; n++ }
		' "$f"
	done | head -n 120
fi
exit "$rc"

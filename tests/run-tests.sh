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
# shellcheck disable=SC2086
exec prove --timer --exec tests/lib/exec-one.sh $files

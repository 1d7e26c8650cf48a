#!/bin/bash
# prove --exec helper: bats files run under bats --tap, C tests directly.
# Each file's whole TAP output is also kept in $FS_BUILD/test-artifacts/tap/
# so tests/run-tests.sh can print what a failing test said at the end of
# the run (prove alone shows only "Failed test: N").
set -o pipefail
case "$1" in
/*) t=$1 ;;
*) t=./$1 ;;
esac
tap="${FS_BUILD:-build}/test-artifacts/tap"
mkdir -p "$tap" 2>/dev/null || tap=""
log=/dev/null
[ -n "$tap" ] && log="$tap/$(basename "$t").tap"
case "$t" in
*.bats) bats --tap "$t" 2>&1 | tee "$log" ;;
*) "$t" 2>&1 | tee "$log" ;;
esac

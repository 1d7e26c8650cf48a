#!/bin/sh
# Run each libFuzzer target for a short time so that none of them can rot:
# it must still build, start, and survive SECONDS of mutation from an empty
# corpus (a crash, a leak or a sanitizer report fails it). `make fuzz-smoke`.
# Memory is bounded per run (-rss_limit_mb, which also caps any one
# allocation); time per input by the targets that include fuzz_bound.h
# (FUZZ_INPUT_MS: an input slower than that is a finding).
#   tests/fuzz/smoke.sh SECONDS TARGET...
set -eu
secs=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=""
for t in "$@"; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	mkdir -p "$tmp/$name"
	if "$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=1024 \
		-artifact_prefix="$tmp/$name/" "$tmp/$name" >"$tmp/$name.log" 2>&1; then
		echo "ok $name: $(grep -o 'Done [0-9]* runs' "$tmp/$name.log" || echo ran) in ${secs} s"
	else
		echo "FAIL $name:"
		tail -n 40 "$tmp/$name.log"
		failed="$failed $name"
	fi
done
[ -z "$failed" ] || { echo "fuzz-smoke: failed:$failed" >&2; exit 1; }

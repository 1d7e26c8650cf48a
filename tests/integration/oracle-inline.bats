#!/usr/bin/env bats
# Issue 8, checked by the JVM itself: real applications from Debian packages
# (jetty9 serving a webapp under wrk, embedded H2 and Derby running SQL) in
# real runc containers, JVM with -XX:+PreserveFramePointer. `flamesidecar
# run` and JFR (jcmd JFR.start settings=profile) record the same window;
# tests/oracle/jfr_compare.py compares them: every Java->Java edge with >= 1%
# of our Java samples occurs in JFR's stacks, and >= 90% of our Java edge
# weight does. On failure the recording and our output are kept under
# $FS_BUILD/test-artifacts/oracle-<test>-<pid>/.

load ../lib/containers
load ../lib/apps

WINDOW=${FS_ORACLE_WINDOW:-10}
EDGES=(--min-edge-share 0.90 --max-missing-edge 0.01 --min-java-samples 200)

setup() {
	fs_setup
	NAME="oracle-inl-$$-$BATS_TEST_NUMBER"
	OUT="$FS_TMP/out"
}

teardown() {
	app_load_stop "$NAME" 2>/dev/null || true
	fs_cleanup
}

# one_app KIND START_OPTIONS...: start, profile with JFR, compare edges.
one_app() {
	local kind=$1
	shift
	app_require "$kind"
	app_start "$NAME" "$kind" --fp "$@"
	app_profile "$NAME" "$WINDOW" "$OUT" -F 199
	run app_compare "$OUT" "${EDGES[@]}"
	echo "$output"
	echo "# $kind $*: $(grep -E '^(edge_share|unwalkable|missing_edges)' <<<"$output" | tr -s ' ' | tr '\n' ' ')" >&3
	[ "$status" -eq 0 ]
}

@test "oracle: jetty9 servlet under wrk: Java edges agree with JFR" {
	one_app jetty --path /app/hello
}

# The control: with inlining off there are no inline chains to misattribute,
# so this checks the oracle itself (names, hidden frames, the VM exclusion)
# on a real application. Measured 0.98 where the tests above measure
# 0.49-0.79 with inlining on; the threshold leaves room for sampling noise.
@test "oracle control: jetty9 servlet with -XX:-Inline: >= 93% of our Java edge weight in JFR" {
	app_require jetty
	app_start "$NAME" jetty --fp --jvm-opt -XX:-Inline
	app_profile "$NAME" "$WINDOW" "$OUT" -F 199
	run app_compare "$OUT" --min-edge-share 0.93 --min-java-samples 200
	echo "$output"
	echo "# jetty -XX:-Inline: $(grep -E '^(edge_share|missing_edges)' <<<"$output" | tr -s ' ' | tr '\n' ' ')" >&3
	[ "$status" -eq 0 ]
}

@test "oracle: jetty9 static files (DefaultServlet) under wrk: Java edges agree with JFR" {
	one_app jetty --path /app/index.html
}

@test "oracle: H2 mixed SQL (point, scan, write): Java edges agree with JFR" {
	one_app h2 --shape mixed
}

@test "oracle: Derby point lookups: Java edges agree with JFR" {
	one_app derby --shape point
}

@test "oracle: H2 kept in the interpreter (-Xint): methods named and marked _[0], edges agree with JFR" {
	app_require h2
	app_start "$NAME" h2 --fp --shape point --jvm-opt -Xint
	app_profile "$NAME" "$WINDOW" "$OUT" -F 199
	run app_compare "$OUT" "${EDGES[@]}" --min-named 0.95
	echo "$output"
	echo "# h2 -Xint: $(grep -E '^(edge_share|missing_edges|named_share)' <<<"$output" | tr -s ' ' | tr '\n' ' ')" >&3
	local interp marked
	interp=$(awk '{ n = gsub(/;Interpreter(;| )/, "&"); s += n * $NF } END { print s + 0 }' "$OUT/ours.folded")
	marked=$(awk '{ n = gsub(/_\[0\](;| )/, "&"); s += n * $NF } END { print s + 0 }' "$OUT/ours.folded")
	echo "# frames: $marked marked _[0], $interp anonymous Interpreter" >&3
	[ "$status" -eq 0 ]
	[ "$marked" -gt 0 ]
	# A handful of interpreter samples stay anonymous (6 of 47,099 frames
	# when measured): leaves in an interpreter method entry between
	# `mov %rsp,%rbp` and `push %rbx`, whose Method* is only in rbx
	# (docs/unwind.md); more than 1 in 1,000 is a naming bug.
	[ $((interp * 1000)) -lt "$marked" ]
}

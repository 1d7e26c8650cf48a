#!/usr/bin/env bats
# Issue 9, checked on real applications from Debian packages in real runc
# containers whose JVM runs WITHOUT -XX:+PreserveFramePointer:
# - through the runtime wrapper with the opt-in annotation (the wrapper
#   injects the flag): >= 95% of the samples holding a Java frame reach the
#   thread's entry;
# - hook only (no injection): >= 90% whole stacks from the HotSpot-aware
#   unwinder, on Debian's JDK 17 and on Temurin 25, with Java edges that
#   agree with JFR (as in oracle-inline.bats);
# - -XX:+DisableAttachMechanism, or a read-only /tmp: Java frames named
#   (>= 95%) with nothing created inside the container.
# Figures come from tests/oracle/jfr_compare.py; failures keep the artifacts
# under $FS_BUILD/test-artifacts/.

load ../lib/containers
load ../lib/apps

WINDOW=${FS_ORACLE_WINDOW:-8}

setup() {
	fs_setup
	NAME="oracle-stk-$$-$BATS_TEST_NUMBER"
	OUT="$FS_TMP/out"
}

teardown() {
	app_load_stop "$NAME" 2>/dev/null || true
	fs_cleanup
}

note() {
	echo "# $1: $(grep -E '^(edge_share|missing_edges|whole_share|named_share)' <<<"$output" |
		tr -s ' ' | tr '\n' ' ')" >&3
}

@test "oracle: jetty9 without the flag, through the runtime wrapper: >= 95% whole stacks" {
	app_require jetty
	[ -x "$FS_BUILD/flamesidecar-runtime" ] || skip "flamesidecar-runtime is not built"
	app_start "$NAME" jetty --wrapper
	app_profile "$NAME" "$WINDOW" "$OUT" --no-jfr -F 199
	run app_compare_nojfr "$OUT" --min-whole 0.95 --min-java-samples 200
	echo "$output"
	note "wrapper, JDK 17"
	[ "$status" -eq 0 ]
}

# hook_only JDK: jetty without the flag, our hook in config.json (no
# injection), JFR over the window: whole stacks and edges.
hook_only() {
	app_require jetty --jdk "$1"
	app_start "$NAME" jetty --jdk "$1"
	app_profile "$NAME" "$WINDOW" "$OUT" -F 199
	run app_compare "$OUT" --min-whole 0.90 --min-edge-share 0.90 --max-missing-edge 0.01 \
		--min-java-samples 200
	echo "$output"
	note "hook only, JDK $1"
	[ "$status" -eq 0 ]
}

@test "oracle: jetty9 without the flag, hook only, JDK 17: >= 90% whole stacks, edges agree with JFR" {
	hook_only 17
}

@test "oracle: jetty9 without the flag, hook only, Temurin 25: >= 90% whole stacks, edges agree with JFR" {
	hook_only 25
}

# no_attach START_OPTIONS...: H2 that cannot be attached to; Java frames
# named from the host, nothing created in the container.
no_attach() {
	app_require h2
	app_start "$NAME" h2 --shape mixed "$@"
	# READY came after the JVM made its own files (hsperfdata): compare the
	# container's tree before and after the profile
	app_tree "$NAME" >"$FS_TMP/tree.before"
	app_profile "$NAME" "$WINDOW" "$OUT" --no-jfr -F 199
	app_tree "$NAME" >"$FS_TMP/tree.after"
	local created
	created=$(diff "$FS_TMP/tree.before" "$FS_TMP/tree.after" || true)
	run app_compare_nojfr "$OUT" --min-named 0.95 --min-java-samples 100
	echo "$output"
	echo "changed in the container: ${created:-nothing}"
	note "$* (changed in the container: $(grep -c '^[<>]' <<<"$created") paths)"
	[ "$status" -eq 0 ]
	[ -z "$created" ]
}

@test "oracle: H2 with -XX:+DisableAttachMechanism: Java frames named, nothing created in the container" {
	no_attach --jvm-opt -XX:+DisableAttachMechanism
}

@test "oracle: H2 with a read-only /tmp: Java frames named, nothing created in the container" {
	no_attach --tmp-ro
}

#!/usr/bin/env bats
# flamesidecar top: the live view on a real runc container running the
# Workload JVM (openjdk-17, uid 1000), registered by flamehook.

load ../lib/containers

setup_file() {
	fs_file_jvm_ok || return 0
	fs_file_setup
	TOPCTR="fstop-$$-main"
	export TOPCTR
	fs_start_jvm "$TOPCTR" -- --syscalls
}

teardown_file() { fs_file_teardown; }

needs_ctr() {
	fs_require_root
	[ -n "${TOPCTR:-}" ] || skip "no container (runc, JDK 17 or the Java workloads missing)"
}

@test "top --help: usage with examples" {
	run "$FS_SIDECAR" top --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Examples:"* ]]
	[[ "$output" == *"--once"* ]]
}

@test "top: an unknown container id exits 3 and points at flamesidecar list" {
	fs_require_root
	echo "{\"run_dir\": \"$BATS_TEST_TMPDIR/run\"}" >"$BATS_TEST_TMPDIR/config.json"
	run env FLAMESIDECAR_CONFIG="$BATS_TEST_TMPDIR/config.json" "$FS_SIDECAR" top nope --once
	[ "$status" -eq 3 ]
	[[ "$output" == *"flamesidecar list"* ]]
}

@test "top --once: the hot method is the first row, named from the JIT map" {
	needs_ctr
	run "$FS_SIDECAR" top "$TOPCTR" --once -d 2s -n 10
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "flamesidecar top $TOPCTR"* ]]
	[[ "${lines[1]}" == *"SELF%"*"TOTAL%"*"FRAME" ]]
	# (an inlined copy is marked _[i], as stackcollapse-perf.pl does)
	[[ "${lines[2]}" =~ flametest\.Workload\.hotMethod(_\[i\])?$ ]]
	# no terminal control sequences when stdout is not a tty
	! grep -q $'\033' <<<"$output" || false
}

@test "top --kernel-filter: the header says what keeps the scope; a bad mode is a usage error" {
	needs_ctr
	run "$FS_SIDECAR" top "$TOPCTR" --once -d 1s -n 3
	echo "$output"
	[ "$status" -eq 0 ]
	# the default: the kernel filter, or the reason it could not load
	[[ "${lines[0]}" == *"scope cgroup (kernel filter)"* ]] || [[ "${lines[1]}" == "filter: no kernel filter ("* ]]
	run "$FS_SIDECAR" top "$TOPCTR" --once -d 1s -n 3 --kernel-filter off
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == *"scope cgroup (cgroup events)"* ]]
	[[ "${lines[1]}" == *"SELF%"*"TOTAL%"*"FRAME" ]]
	run "$FS_SIDECAR" top "$TOPCTR" --once --kernel-filter maybe
	[ "$status" -eq 2 ]
	[[ "$output" == *"--kernel-filter takes auto, on or off"* ]]
}

@test "top --once --sort total: shares are percentages, totals >= selves" {
	needs_ctr
	run "$FS_SIDECAR" top "$TOPCTR" --once -d 1s -n 0 --sort total
	[ "$status" -eq 0 ]
	# a busy JVM gives rows: an empty table must not pass the checks below
	[ "${#lines[@]}" -gt 3 ]
	# rows: SELF% TOTAL% SAMPLES FRAME; total >= self, sorted by total
	printf '%s\n' "${lines[@]:2}" | awk '
		{ s = $1 + 0; t = $2 + 0
		  if (t + 0.05 < s || t > 100.05) bad = 1
		  if (NR > 1 && t > prev + 0.05) bad = 1
		  prev = t }
		END { exit bad }'
}

@test "top: refreshes every interval until SIGINT" {
	needs_ctr
	"$FS_SIDECAR" top "$TOPCTR" -i 300ms -n 3 >"$BATS_TEST_TMPDIR/top.out" 2>&1 3>&- </dev/null &
	local pid=$!
	two_tables() { [ "$(grep -c '^flamesidecar top ' "$BATS_TEST_TMPDIR/top.out")" -ge 2 ]; }
	fs_wait_for 30 two_tables
	kill -INT "$pid"
	local rc=0
	wait "$pid" || rc=$?
	cat "$BATS_TEST_TMPDIR/top.out"
	[ "$rc" -eq 0 ]
	grep -q 'flametest.Workload.hotMethod' "$BATS_TEST_TMPDIR/top.out"
}

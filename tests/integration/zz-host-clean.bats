#!/usr/bin/env bats
# Runs last (tests/run-tests.sh takes the files in name order): every suite
# before it must have left nothing behind on the host.

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root (the suites that run containers do)"
	[ -z "${FS_TESTS:-}" ] || skip "only meaningful after the whole suite"
}

@test "no test container is left in runc, crun or Podman" {
	if command -v runc >/dev/null; then
		run sh -c "runc list -q | grep -E '^(fs|flamesidecar-demo)' || true"
		[ -z "$output" ]
	fi
	if command -v podman >/dev/null; then
		run sh -c "podman ps -a --format '{{.Names}}' | grep -E '^fs' || true"
		[ -z "$output" ]
	fi
}

@test "no test directory or mount is left under /tmp" {
	run sh -c 'ls -d /tmp/fstest.* /tmp/flamesidecar-demo.* 2>/dev/null || true'
	[ -z "$output" ]
	run grep -E ' /tmp/fstest\.' /proc/self/mountinfo
	[ -z "$output" ]
}

@test "no test process is left running" {
	run sh -c "ps -eo args | grep -E 'flametest\.Workload|fs-sampler-test' | grep -v grep || true"
	[ -z "$output" ]
}

#!/usr/bin/env bats
# Hostile containers, round three (issue 19), the JVM side: a JIT log
# replaced during the window by a process of the JVM's uid (a CPU and
# memory bomb), container-supplied names with control bytes in the files
# written on the host.

load ../lib/containers
load hostile2-helpers

setup() {
	fs_require_root
	fs_require_cmd runc jq
	[ -x "$JAVA17" ] || skip "openjdk-17 is not installed"
	[ -d "$FS_BUILD/java/flametest" ] || skip "the Java workloads are not built (make agent)"
	fs_setup
	NAME=fs-h3j-$$-$BATS_TEST_NUMBER
	mkdir -p "$FS_TMP/hostile"
}

teardown() {
	local p
	for p in $(cat "$FS_TMP/jvm-pids" 2>/dev/null); do
		rm -f "/tmp/perf-$p.map"
	done
	fs_cleanup
}

# replace_jit_log FILE: as uid 1000 in the container (the JVM's user), wait
# for the agent's timed log of the JVM (ns pid 1) and put FILE (bound at
# /opt/hostile) in its place; /tmp/replaced says it was done.
replace_jit_log() {
	runc exec -d --user 1000:1000 "$NAME" /bin/sh -c '
		while [ ! -e /tmp/flamesidecar-1.jit ]; do sleep 0.02; done
		cp "/opt/hostile/$1" /tmp/h.tmp && mv -f /tmp/h.tmp /tmp/flamesidecar-1.jit &&
			touch /tmp/replaced' sh "$1"
}

@test "a hostile JIT log (4M overlapping entries, 1,800 unloads of a 1M-line load): run ends in bounded time and memory and says what it dropped" {
	[ -x /usr/bin/time ] || skip "GNU time is not installed"
	# 58 MiB: one load of 1M lines unloaded 1,800 times (each unload walked
	# the whole load), then 3.2M plain lines that all overlap each other
	# (settled pairwise, thousands of steps each): 4.2M entries, past the
	# entry cap and the 256 MiB JIT budget.
	awk 'BEGIN {
		print "@1 10000000 10000000 77"
		for (i = 0; i < 1000000; i++) printf "%x 8 m\n", 268435456 + i * 8
		for (i = 0; i < 1800; i++) printf "-%d 10000000 77\n", 2 + i
		for (i = 0; i < 3200000; i++) printf "%x fffff x\n", i
	}' >"$FS_TMP/hostile/bomb.jit"
	fs_start_jvm "$NAME" --mount "$FS_TMP/hostile:/opt/hostile" -- --threads 1
	replace_jit_log bomb.jit
	local t0=$SECONDS
	run timeout 120 /usr/bin/time -f %M -o "$FS_TMP/rss" "$FS_SIDECAR" run "$NAME" -d 3s \
		-o "$FS_TMP/bomb.svg"
	local took=$((SECONDS - t0)) rss
	echo "$output"
	rss=$(cat "$FS_TMP/rss")
	echo "# run -d 3s with a 58 MiB hostile JIT log: ${took} s, peak RSS $((rss / 1024)) MiB" >&3
	[ -e "/proc/$PID/root/tmp/replaced" ]
	[ "$status" -eq 0 ]
	[ "$took" -lt 40 ]
	# the JIT budget (256 MiB), the largest read, the rest of run
	[ "$rss" -lt $((480 * 1024)) ]
	[[ "$output" == *"JIT log lines, loads or bytes dropped"* ]]
	[ -s "$FS_TMP/bomb.folded" ]
}

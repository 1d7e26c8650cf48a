#!/usr/bin/env bats
# Hostile containers, round three (issue 19), the JVM side: a JIT log
# appended to during the window by a process of the JVM's uid (a CPU and
# memory bomb), container-supplied names with control bytes in the files
# written on the host.

load ../lib/containers
load hostile2-helpers

setup() {
	fs_needs_jvm
	fs_test_setup fs-h3j-
	mkdir -p "$FS_TMP/hostile"
}

teardown() {
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

# append_jit_log FILE: the same, but FILE is appended to the log the JVM
# writes (the profiler reads that inode through the fd its sandboxed child
# handed over, not whatever the path names later: docs/security.md).
append_jit_log() {
	runc exec -d --user 1000:1000 "$NAME" /bin/sh -c '
		while [ ! -e /tmp/flamesidecar-1.jit ]; do sleep 0.02; done
		cat "/opt/hostile/$1" >>/tmp/flamesidecar-1.jit && touch /tmp/replaced' sh "$1"
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
	append_jit_log bomb.jit
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

# ctl_bytes FILE: lines of FILE with a byte below 0x20 other than newline,
# or DEL (none expected).
ctl_bytes() {
	LC_ALL=C grep -naP '[\x00-\x09\x0b-\x1f\x7f]' "$1"
}

@test "control bytes: container-supplied JIT names reach no file written on the host raw (perf map, folded, svg, speedscope, summary)" {
	# The reads go on from the offset the real log reached: 1 MiB of lines
	# that are skipped first, then the load of code over all user space,
	# newer than anything (present at the end: in the perf map; it names
	# whatever code the real log does not), whose name retitles the
	# terminal, clears it, rings.
	{
		awk 'BEGIN { for (i = 0; i < 524288; i++) print "x" }'
		printf '@4611686018427387904 10000 7ffffffe0000 99\n'
		printf '10000 7ffffffe0000 \033]0;owned\007EVIL\001\002\tNAME\033[2J\rX\n'
	} >"$FS_TMP/hostile/ctl.jit"
	fs_start_jvm "$NAME" --mount "$FS_TMP/hostile:/opt/hostile" -- --threads 1 --late-compile 0.5
	replace_jit_log ctl.jit
	run "$FS_SIDECAR" run "$NAME" -d 3s --perf-map -o "$FS_TMP/c.svg" \
		--speedscope "$FS_TMP/c.speedscope.json" --pprof "$FS_TMP/c.pb.gz"
	printf '%s\n' "$output" >"$FS_TMP/summary.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -e "/proc/$PID/root/tmp/replaced" ]
	local f
	for f in "$FS_TMP/c.svg" "$FS_TMP/c.folded" "$FS_TMP/c.speedscope.json" \
		"$FS_TMP/summary.txt" "/tmp/perf-$PID.map"; do
		[ -s "$f" ]
		if ctl_bytes "$f"; then echo "control bytes in $f"; false; fi
	done
	echo "# frames named by the hostile entry in the folded stacks: $(grep -c EVIL "$FS_TMP/c.folded" || true)" >&3
	# the hostile entry is there, escaped
	grep -F 'EVIL' "/tmp/perf-$PID.map" | grep -qF '\x1b]0;owned\x07'
	if command -v go >/dev/null 2>&1; then
		go tool pprof -raw "$FS_TMP/c.pb.gz" >"$FS_TMP/pprof.txt" 2>/dev/null
		! ctl_bytes "$FS_TMP/pprof.txt" || false
	fi
}

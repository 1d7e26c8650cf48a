#!/usr/bin/env bats
# Hostile containers and the root profiler's memory (issue 12, item 3 and
# case 29): a container that makes a million distinct stacks, stacks over
# 1024 frames, or a huge perf map cannot make `run`/`collapse` use more
# than the documented budget (lib/budget.h, docs/security.md "Memory
# bounds"); what did not fit is counted in the graph, and totals match.

load ../lib/containers

setup() {
	fs_require_root
	NAME=fs-membound$$-$BATS_TEST_NUMBER
	fs_setup
	MEMCG=""
}

teardown() {
	if [ -n "$MEMCG" ] && [ -d "$MEMCG" ]; then
		# whatever is left in it goes back to the parent before rmdir
		while read -r pid; do echo "$pid" >"$(dirname "$MEMCG")/cgroup.procs"; done \
			<"$MEMCG/cgroup.procs" 2>/dev/null || true
		rmdir "$MEMCG" 2>/dev/null || true
	fi
	fs_cleanup
}

# memcg_make LIMIT_MIB: a memory cgroup of our own with that limit, in
# cgroup v2 (memory.max) or, on a hybrid host, the v1 memory controller
# (memory.limit_in_bytes); skips when there is neither.
memcg_make() {
	local base
	if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		base=/sys/fs/cgroup
		MEMCG=$base/$NAME
		mkdir "$MEMCG"
		echo $(($1 << 20)) >"$MEMCG/memory.max"
		echo 0 >"$MEMCG/memory.swap.max" 2>/dev/null || true
	elif [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		base=/sys/fs/cgroup/memory
		MEMCG=$base/$NAME
		mkdir "$MEMCG"
		echo $(($1 << 20)) >"$MEMCG/memory.limit_in_bytes"
	else
		skip "no memory cgroup controller (v2 memory.max or v1 memory)"
	fi
}

# memcg_oom_kills: how many processes the limit killed.
memcg_oom_kills() {
	if [ -f "$MEMCG/memory.events" ]; then
		awk '$1 == "oom_kill" { print $2 }' "$MEMCG/memory.events"
	else
		awk '$1 == "oom_kill" { print $2 }' "$MEMCG/memory.oom_control"
	fi
}

# in_memcg CMD...: run CMD inside the cgroup; its peak RSS (KiB, from
# GNU time) goes to $FS_TMP/rss.
in_memcg() {
	/usr/bin/time -f %M -o "$FS_TMP/rss" \
		sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$MEMCG" "$@"
}

total() {
	awk '{ n += $NF } END { print n + 0 }' "$1"
}

samples() {
	awk -v pat="$2" 'index($0, pat) { n += $NF } END { print n + 0 }' "$1"
}

# perf script text of N samples, each a distinct 6-frame stack.
gen_perf_script() {
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++) {
			printf "bomb %d [000] %d.%06d: 1 cpu-clock:\n", 100 + i % 3, i / 1000000, i % 1000000
			for (d = 0; d < 6; d++)
				printf "\t%x s%d_%d+0x10 (/bomb)\n", 4096 + d, d, d == 0 ? i : (i * 7 + d * 131) % (i + 1 + d)
			printf "\n"
		}
	}'
}

@test "memory: a million distinct stacks through collapse stay within the stack table budget" {
	command -v /usr/bin/time >/dev/null || skip "GNU time is not installed"
	memcg_make 96
	# streamed through a pipe (a file would be mmap'd and count in the RSS)
	gen_perf_script 1000000 | in_memcg "$FS_SIDECAR" collapse --max-stack-table 4 \
		-o "$FS_TMP/bomb.folded" - 2>"$FS_TMP/err"
	cat "$FS_TMP/err"
	local rss
	rss=$(cat "$FS_TMP/rss")
	echo "# collapse of 1,000,000 distinct stacks, 4 MiB table: peak RSS $((rss / 1024)) MiB" >&3
	[ "$(memcg_oom_kills)" -eq 0 ]
	# the table (4 MiB, +1/4 while sorted) and the line buffers
	[ "$rss" -lt $((24 * 1024)) ]
	# every sample is in the output, the dropped ones under their process
	[ "$(total "$FS_TMP/bomb.folded")" -eq 1000000 ]
	local dropped
	dropped=$(samples "$FS_TMP/bomb.folded" ';[dropped: stack table full] ')
	[ "$dropped" -gt 0 ]
	[ "$(grep -c 'dropped: stack table full' "$FS_TMP/bomb.folded")" -eq 1 ]
	grep -q "the stack table is full (--max-stack-table 4 MiB): $dropped samples" "$FS_TMP/err"
	# the control: with the default budget the same input keeps every
	# stack and needs several times the memory (not in the small cgroup)
	gen_perf_script 1000000 | /usr/bin/time -f %M -o "$FS_TMP/rss-default" \
		"$FS_SIDECAR" collapse -o "$FS_TMP/all.folded" -
	echo "# the same with the default 256 MiB table: peak RSS $(($(cat "$FS_TMP/rss-default") / 1024)) MiB" >&3
	[ "$(wc -l <"$FS_TMP/all.folded")" -eq 1000000 ]
	[ "$(cat "$FS_TMP/rss-default")" -gt $((rss * 4)) ]
}

# bomb_container MODE: the stackbomb workload (musl static, frame
# pointers) in a registered runc container; sets CPID.
bomb_container() {
	fs_require_cmd runc jq musl-gcc
	musl-gcc -static -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls \
		-o "$FS_TMP/stackbomb" "$FS_TOP/tests/fixtures/stackbomb/stackbomb.c"
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- /stackbomb "$1"
	cp "$FS_TMP/stackbomb" "$FS_TMP/b/rootfs/stackbomb"
	fs_runc_run "$NAME" "$FS_TMP/b"
	fs_wait_for 10 grep -q "stackbomb ready" "$FS_TMP/b/out.log"
	fs_wait_for 10 test -f "$FS_RUN/containers/$NAME.json"
}

@test "memory: run on random deep stacks in a memory-limited cgroup: bounded, dropped samples said, totals match" {
	command -v /usr/bin/time >/dev/null || skip "GNU time is not installed"
	bomb_container random
	# the smallest table an operator can set, so a short window fills it
	fs_config_set '.max_stack_table_mib = 1'
	memcg_make 160
	cd "$FS_TMP"
	run in_memcg "$FS_SIDECAR" run "$NAME" -d 4s -F 999 --no-map -o bomb.svg
	echo "$output"
	[ "$status" -eq 0 ]
	local rss all
	rss=$(cat "$FS_TMP/rss")
	echo "# run on stackbomb random: peak RSS $((rss / 1024)) MiB" >&3
	[ "$(memcg_oom_kills)" -eq 0 ]
	[ "$rss" -lt $((128 * 1024)) ]
	all=$(total bomb.folded)
	[ "$(sed -n 's/^samples *\([0-9]*\) .*/\1/p' <<<"$output")" -eq "$all" ]
	local dropped
	dropped=$(samples bomb.folded 'stackbomb;[dropped: stack table full] ')
	[ "$dropped" -gt 0 ]
	[[ "$output" == *"stack table full"*"$dropped samples of new stacks"* ]]
	# the graph names the frame that stands for them
	grep -q 'dropped: stack table full' bomb.svg
	xmllint --noout bomb.svg
}

@test "memory: top on random deep stacks says the stack table is full" {
	bomb_container random
	fs_config_set '.max_stack_table_mib = 1'
	run "$FS_SIDECAR" top "$NAME" --once -d 3s -F 999 --no-map -n 5
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ stack\ table\ full\ \(max_stack_table_mib\):\ [1-9][0-9]*\ samples ]]
	[[ "$output" == *"[dropped: stack table full]"* ]]
}

@test "memory: stacks 2000 frames deep are cut at the root end with a marker, counted" {
	bomb_container deep
	cd "$FS_TMP"
	run "$FS_SIDECAR" run "$NAME" -d 3s -F 499 --no-map -o deep.svg
	echo "$output"
	[ "$status" -eq 0 ]
	local all cut
	all=$(total deep.folded)
	[ "$all" -gt 10 ]
	cut=$(samples deep.folded 'stackbomb;[truncated: deeper stack];')
	# nearly every sample is 2000 frames deep (the rest: startup, syscalls)
	[ $((cut * 10)) -gt $((all * 9)) ]
	[[ "$output" == *"stacks     $cut samples cut at the root end"* ]]
	[ "$(sed -n 's/^samples *\([0-9]*\) .*/\1/p' <<<"$output")" -eq "$all" ]
	# the frames kept are the leaf side: the spinning function
	[ "$(samples deep.folded ';bomb_call ')" -gt 0 ]
}

@test "memory: a 160 MiB perf map written in a JVM container does not push run's RSS up" {
	fs_require_cmd runc jq
	command -v /usr/bin/time >/dev/null || skip "GNU time is not installed"
	[ -x "$JAVA17" ] || skip "no JDK 17 at $JAVA17"
	[ -f "$FS_BUILD/java/flametest/Workload.class" ] || skip "Java workloads not built (make agent)"
	fs_start_jvm "$NAME" -- --warmup 0.5
	# 160 MiB of valid map lines, as the JVM's user, where the JVM's map goes
	runc exec "$NAME" sh -c 'awk "BEGIN { for (i = 0; i < 2700000; i++)
		printf \"%x 10 Lhostile/Class%060d;.method\n\", 1048576 + i * 16, i }" >/tmp/perf-1.map'
	[ "$(runc exec "$NAME" stat -c %s /tmp/perf-1.map)" -gt $((160 << 20)) ]
	memcg_make 256
	cd "$FS_TMP"
	run in_memcg "$FS_SIDECAR" run "$NAME" -d 2s --map-mode jcmd -o jvm.svg
	echo "$output"
	[ "$status" -eq 0 ]
	local rss
	rss=$(cat "$FS_TMP/rss")
	echo "# run on a JVM with a 160 MiB perf map: peak RSS $((rss / 1024)) MiB" >&3
	[ "$(memcg_oom_kills)" -eq 0 ]
	[ "$rss" -lt $((160 * 1024)) ]
	# refused by size before the JVM is asked to write through it
	[[ "$output" == *"over the "*"limit"* ]]
	[ "$(total jvm.folded)" -gt 0 ]
}

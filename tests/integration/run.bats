#!/usr/bin/env bats
# flamesidecar run: real runc containers running the Workload JVM
# (openjdk-17, uid 1000), registered by flamehook, profiled from the host.

load ../lib/containers

# samples FOLDED PATTERN: samples whose stack matches the awk regex
samples() {
	awk -v pat="$2" '$0 ~ pat { n += $NF } END { print n + 0 }' "$1"
}

total() {
	awk '{ n += $NF } END { print n + 0 }' "$1"
}

# The "unresolved X% of N frames" figure of the summary, as an integer * 10.
unresolved_permille() {
	sed -n 's/.*unresolved \([0-9]*\)\.\([0-9]\)% of.*/\1\2/p' "$1"
}

needs_jvm() {
	fs_needs_jvm "$JAVA17" Workload
}

setup_file() {
	fs_file_jvm_ok || return 0
	fs_file_setup
	MAIN="fsrun-$$-main"
	export MAIN
	fs_start_jvm "$MAIN" -- --threads 2 --syscalls
}

teardown_file() { fs_file_teardown; }

setup() { fs_ctrs_setup; }

teardown() { fs_ctrs_teardown; }

@test "run --help: usage with examples" {
	run "$FS_SIDECAR" run --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"EXAMPLES"* || "$output" == *"Examples:"* ]]
	[[ "$output" == *"flamesidecar run 3f2a9c"* ]]
	[[ "$output" == *"--minwidth"* ]]
}

@test "run: bad options are usage errors" {
	run "$FS_SIDECAR" run
	[ "$status" -eq 2 ]
	run "$FS_SIDECAR" run x -d forever
	[ "$status" -eq 2 ]
	[[ "$output" == *"--duration"* ]]
	run "$FS_SIDECAR" run x -F 0
	[ "$status" -eq 2 ]
	run "$FS_SIDECAR" run x --map-mode magic
	[ "$status" -eq 2 ]
}

@test "run: an unknown container id exits 3 and points at flamesidecar list" {
	fs_require_root
	local cfg="$OUT/config.json"
	echo "{\"run_dir\": \"$OUT/run\"}" >"$cfg"
	run env FLAMESIDECAR_CONFIG="$cfg" "$FS_SIDECAR" run no-such-container -d 1s
	[ "$status" -eq 3 ]
	[[ "$output" == *"flamesidecar list"* ]]
	[ -z "$(ls "$OUT"/*.svg 2>/dev/null)" ]
}

@test "run -d 5s: Java, HotSpot C++ and kernel frames; hotMethod dominates; < 1% unresolved below libc's symbol-less roots; valid SVG" {
	needs_jvm
	cd "$OUT"
	run "$FS_SIDECAR" run "$MAIN" -d 5s -F 199 -o main.svg
	echo "$output"
	[ "$status" -eq 0 ]
	# the JVM is attached (and the agent session opened) before the events:
	# the kernel filter still loads, or the summary says why not
	[[ "$output" == *"scope cgroup (kernel filter)"* ]] || [[ "$output" == *$'\nfilter     no kernel filter ('* ]]
	local f=main.folded all hot
	[ -s "$f" ] && [ -s main.svg ]
	all=$(total "$f")
	hot=$(samples "$f" 'flametest\.Workload\.hotMethod')
	echo "# $hot of $all samples in hotMethod" >&3
	[ "$all" -gt 50 ]
	# two hot threads and one syscall thread: hotMethod holds most samples
	[ $((hot * 2)) -gt "$all" ]
	# every stack starts with the process name, Java names are class.method
	[ "$(samples "$f" '^java;')" -eq "$all" ]
	[ "$(samples "$f" 'flametest\.Workload\.syscallMethod')" -gt 0 ]
	# HotSpot's C++ frames, demangled without argument lists
	[ "$(samples "$f" ';JavaCalls::call_helper;')" -gt 0 ]
	! grep -q 'JavaCalls::call_helper(' "$f" || false
	# kernel frames under the syscall-heavy thread
	[ "$(samples "$f" 'syscallMethod;.*_\[k\]')" -gt 0 ]
	# Unresolved frames: every thread's root frames are clone3 and
	# start_thread in Debian's libc, which has no .symtab (two frames per
	# stack now that the unwinder walks them through .eh_frame; the
	# summary counts them). Apart from those roots, < 1% of the frames
	# may be unresolved; with them, the summary stays under 15%.
	local pm unres frames
	pm=$(unresolved_permille <(echo "$output"))
	echo "# unresolved: $pm permille" >&3
	[ -n "$pm" ] && [ "$pm" -lt 150 ]
	read -r unres frames < <(awk '{ n = $NF; $NF = ""; k = split($0, f, ";");
		root = 1
		for (i = 2; i <= k; i++) {
			if (root && f[i] ~ /^\[libc\.so\.6\] *$/) continue
			root = 0; all += n
			if (f[i] ~ /^\[/) u += n
		}
	} END { print u + 0, all + 0 }' "$f")
	echo "# unresolved below the libc roots: $unres of $frames" >&3
	[ "$frames" -gt 0 ] && [ $((unres * 100)) -lt "$frames" ]
	grep -A1 '^hottest' <<<"$output" | grep -q 'flametest\.Workload\.hotMethod'
	# every sample taken is in the folded file, once
	[ "$(sed -n 's/^samples *\([0-9]*\) .*/\1/p' <<<"$output")" -eq "$all" ]
	[[ "$output" == *"svg        main.svg"* ]]
	[[ "$output" == *"folded     main.folded"* ]]
	[[ "$output" == *"graph      written "* ]]
	# the SVG is well-formed XML and draws the hot method
	xmllint --noout main.svg
	grep -q 'flametest.Workload.hotMethod' main.svg
}

@test "run: a full raw table is folded early, nothing is lost or misnamed" {
	needs_jvm
	cd "$OUT"
	fs_needs_test_sidecar
	# a 300-word table holds a dozen distinct stacks
	FS_TEST_PROFILE_RAW_WORDS=300 run "$FS_TEST_SIDECAR" run "$MAIN" -d 3s -F 499 -o early.svg
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ folded\ early\ [1-9][0-9]*\ times ]]
	local all
	all=$(total early.folded)
	[ "$(sed -n 's/^samples *\([0-9]*\) .*/\1/p' <<<"$output")" -eq "$all" ]
	[ "$(samples early.folded 'flametest\.Workload\.hotMethod')" -gt $((all / 3)) ]
	xmllint --noout early.svg
}

@test "run: default file names flamesidecar-<id>-<UTC time>.svg/.folded in the current directory" {
	needs_jvm
	cd "$OUT"
	run "$FS_SIDECAR" run "$MAIN" -d 1s --quiet
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	local svg
	svg=$(ls flamesidecar-"${MAIN:0:12}"-*Z.svg)
	[ -f "${svg%.svg}.folded" ]
	[[ "$svg" =~ ^flamesidecar-.{12}-[0-9]{8}T[0-9]{6}Z\.svg$ ]]
}

@test "run --pid: one process of the container; a pid outside it is refused with exit 3" {
	needs_jvm
	cd "$OUT"
	local pid
	pid=$(fs_container_pid "$MAIN")
	run "$FS_SIDECAR" run "$MAIN" --pid "$pid" -d 2s -o pid.svg --with-pid
	[ "$status" -eq 0 ]
	[ "$(samples pid.folded "^java-$pid;")" -eq "$(total pid.folded)" ]
	[[ "$output" == *"scope pid"* ]]
	run "$FS_SIDECAR" run "$MAIN" --pid $$ -d 1s -o nope.svg
	[ "$status" -eq 3 ]
	[[ "$output" == *"not a process of container"* ]]
}

@test "run: SIGINT ends the window early and the graph is still written" {
	needs_jvm
	cd "$OUT"
	"$FS_SIDECAR" run "$MAIN" -d 120s -o int.svg >int.out 2>int.err 3>&- &
	local pid=$! start=$SECONDS
	fs_wait_for 30 grep -q recording int.err
	# not synchronisation: the window must last a while to hold samples
	sleep 2
	kill -INT "$pid"
	local rc=0
	fs_wait_for 30 sh -c "! kill -0 $pid 2>/dev/null"
	wait "$pid" || rc=$?
	cat int.out int.err
	[ "$rc" -eq 0 ]
	[ $((SECONDS - start)) -lt 60 ]
	grep -q 'ended early by a signal' int.out
	[ -s int.folded ]
	xmllint --noout int.svg
}

@test "run: threads started and methods compiled during the window are named" {
	needs_jvm
	local name="fsrun-$$-$BATS_TEST_NUMBER"
	CTRS+=("$name")
	# READY comes after ~1.5 s of warm-up; both start 1.5 s later, in the window
	fs_start_jvm "$name" -- --late-thread 3 --late-compile 3
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" -d 6s -F 199 -o late.svg
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q LATE-THREAD "$FS_TMP/$name/out.log"
	[ "$(samples late.folded 'flametest\.Workload\.lateMethod')" -gt 0 ]
	[ "$(samples late.folded 'flametest\.Workload\.lateCompiledMethod')" -gt 0 ]
}

@test "run: a container that exits during the window still yields a graph" {
	needs_jvm
	local name="fsrun-$$-$BATS_TEST_NUMBER"
	CTRS+=("$name")
	fs_start_jvm "$name" -- --exit-after 4
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" -d 6s -F 199 -o gone.svg
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(total gone.folded)" -gt 0 ]
	# Its JIT log was read during the window: its Java frames keep their names.
	[ "$(samples gone.folded 'flametest\.Workload\.hotMethod')" -gt 0 ]
	[[ "$output" == *"exited during the window"* ]]
	xmllint --noout gone.svg
}

@test "run: a JVM without -XX:+PreserveFramePointer gets the HotSpot unwinder; --unwind fp warns" {
	needs_jvm
	local name="fsrun-$$-$BATS_TEST_NUMBER"
	CTRS+=("$name")
	fs_start_jvm "$name" --jvm-opt -XX:-PreserveFramePointer -- --warmup 0.5
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" -d 1s -o nofp.svg
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(without frame pointers): hotspot"* ]]
	[[ "$output" != *"shallow"* ]]
	run "$FS_SIDECAR" run "$name" -d 1s -o nofp-fp.svg --unwind fp
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"without -XX:+PreserveFramePointer"* ]]
	[[ "$output" == *"shallow"* ]]
}

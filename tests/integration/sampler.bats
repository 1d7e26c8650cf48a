#!/usr/bin/env bats
# sampler.bats - the record -> symbolize -> fold loop that `run` ships
# (sidecar/profile/profile.h) on real processes, driven by
# build/tests/test_sampler.t --profile (the API without the verb, so a
# process can stand in for a container's init): a JVM (JIT frames named by
# mapping it after the window as `run` does, HotSpot C++ frames from
# libjvm.so's .symtab, kernel frames) and a runc container (every process
# of it, including ones started during the recording, by pid namespace and
# by cgroup).

: "${FS_TOP:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${FS_BUILD:=$FS_TOP/build}"
bats_require_minimum_version 1.5.0 # run --separate-stderr
PROFILE="$FS_BUILD/tests/test_sampler.t"
JDK17=${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}

load ../lib/containers

setup() {
	[ -x "$PROFILE" ] || skip "$PROFILE is not built"
	[ "$(id -u)" = 0 ] || skip "system-wide perf events need root"
	PIDS=()
	CTR=""
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		rm -f "/tmp/perf-$p.map"
	done
	if [ -n "$CTR" ]; then
		runc kill "$CTR" KILL 2>/dev/null || true
		fs_wait_for 10 ctr_stopped || true
		runc delete -f "$CTR" 2>/dev/null || true
	fi
}

has_line() { [ -f "$1" ] && grep -q "$2" "$1"; }
ctr_stopped() { ! runc state "$CTR" 2>/dev/null | grep -q '"status": "running"'; }

# frames FOLDED PATTERN: number of samples whose stack matches PATTERN
samples_matching() {
	awk -v pat="$2" '$0 ~ pat { n += $NF } END { print n + 0 }' "$1"
}

@test "a JVM: JIT frames named by the map taken after the window, HotSpot C++ frames demangled, kernel frames" {
	[ -x "$JDK17/bin/java" ] || skip "no JDK 17 at $JDK17"
	[ -f "$FS_BUILD/java/flametest/Workload.class" ] || skip "Java workloads not built (make agent)"
	# No agent and no perf map given: the JVM is mapped after the window
	# (jcmd Compiler.perfmap here, the process having no agent bundle).
	fs_host_jvm "$JDK17" "$BATS_TEST_TMPDIR/out" -- --exit-after 60 --syscalls
	local pid=$PID
	PIDS+=("$pid")
	fs_wait_for 30 has_line "$BATS_TEST_TMPDIR/out" READY
	run --separate-stderr "$PROFILE" --profile --pid "$pid" --seconds 3 --frequency 499
	echo "$stderr" >&3
	[ "$status" -eq 0 ]
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/folded"
	[[ "$stderr" == *"scope pid "* ]]
	[[ "$stderr" == *"jvm $pid mapped"* ]]
	# every stack starts with the process name
	[ "$(samples_matching "$BATS_TEST_TMPDIR/folded" '^java;')" -gt 0 ]
	# C++ frames of libjvm.so, demangled without argument lists
	[ "$(samples_matching "$BATS_TEST_TMPDIR/folded" ';JavaCalls::call_helper;')" -gt 0 ]
	! grep -q 'JavaCalls::call_helper(' "$BATS_TEST_TMPDIR/folded" || false
	# kernel frames under the syscall thread
	[ "$(samples_matching "$BATS_TEST_TMPDIR/folded" 'syscallMethod.*_\[k\]')" -gt 0 ] ||
		[ "$(samples_matching "$BATS_TEST_TMPDIR/folded" '_\[k\]')" -gt 0 ]
	# JIT frames named by the map taken after the window
	[ "$(samples_matching "$BATS_TEST_TMPDIR/folded" 'flametest\.Workload\.hotMethod')" -gt 0 ]
}

# A minimal runc bundle: host /usr (and /etc) read-only, a busy shell.
make_bundle() {
	local b=$1 cmd=$2
	mkdir -p "$b/rootfs/proc" "$b/rootfs/dev" "$b/rootfs/tmp" "$b/rootfs/usr" "$b/rootfs/etc"
	chmod 1777 "$b/rootfs/tmp"
	for d in bin lib lib64 sbin; do ln -sfn "usr/$d" "$b/rootfs/$d"; done
	(cd "$b" && runc spec)
	fs_bundle_set "$b" '
		.process.terminal = false |
		.process.args = ["/bin/sh", "-c", $cmd] |
		.root.readonly = false |
		.mounts += [
			{destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]},
			{destination: "/etc", type: "bind", source: "/etc", options: ["rbind", "ro"]}
		]' --arg cmd "$cmd"
}

ctr_pid() { runc state "$CTR" 2>/dev/null | jq -er '.pid | select(. > 0)'; }

# profile_bg OUT ARGS...: run the profiler in the background; returns
# once its events are enabled (it says "sampling" on stderr).
profile_bg() {
	local out=$1
	shift
	"$PROFILE" --profile "$@" >"$out" 2>"$out.err" 3>&- &
	PROF=$!
	fs_wait_for 10 has_line "$out.err" '^sampling$'
}

pids_in_ctr() { runc ps "$CTR" 2>/dev/null | awk 'NR > 1 { print $2 }'; }
# The busy shells (not pid 1, which waits in `read`).
busy_pids() { runc ps "$CTR" 2>/dev/null | awk 'NR > 1 && /sh -c while :; do :; done$/ { print $2 }'; }
one_busy() { [ "$(busy_pids | wc -l)" -ge 1 ]; }
two_busy() { [ "$(busy_pids | wc -l)" -ge 2 ]; }

# start_busy_ctr: a container whose pid 1 starts a busy shell, then blocks
# in `read` on the FIFO /tmp/go until the host writes to it (go_ctr), then
# starts a second busy shell. No process in it is short-lived: pid 1 never
# forks a `sleep` to poll, so every pid ever sampled is still there when
# the test compares (a poll loop's children were sampled as sh-PID before
# they exec'd sleep and were gone by the check: a flaky test).
# Sets CTR, CTR_PID, BUNDLE.
start_busy_ctr() {
	command -v runc >/dev/null || skip "runc not installed"
	command -v jq >/dev/null || skip "jq not installed"
	BUNDLE="$BATS_TEST_TMPDIR/bundle"
	make_bundle "$BUNDLE" 'sh -c "while :; do :; done" & read go </tmp/go; sh -c "while :; do :; done" & wait'
	mkfifo -m 0666 "$BUNDLE/rootfs/tmp/go"
	CTR="fs-sampler-house-$$-$BATS_TEST_NUMBER"
	(cd "$BUNDLE" && runc run -d "$CTR" </dev/null >"$BATS_TEST_TMPDIR/runc.out" 2>&1 3>&-) ||
		{ cat "$BATS_TEST_TMPDIR/runc.out"; skip "runc cannot start a container here"; }
	fs_wait_for 10 ctr_pid
	CTR_PID=$(ctr_pid)
	fs_wait_for 10 one_busy
}

# go_ctr: let pid 1 start its second busy shell (bounded: a FIFO open
# blocks until pid 1 opens the other end).
go_ctr() {
	timeout 10 sh -c 'echo go >"$1"' sh "$BUNDLE/rootfs/tmp/go"
	fs_wait_for 10 two_busy
}

@test "a runc container by pid namespace: every process, also one started during the recording, nothing else" {
	start_busy_ctr
	busy_pids | sort >"$BATS_TEST_TMPDIR/before"

	# Outside the container, a busy process that must never appear.
	sh -c 'while :; do :; done' 3>&- &
	local outside=$!
	PIDS+=("$outside")

	local f="$BATS_TEST_TMPDIR/ns.folded"
	profile_bg "$f" --pid-ns-of "$CTR_PID" --seconds 3 --frequency 499 --with-pid
	go_ctr
	local late
	late=$(busy_pids | sort | comm -13 "$BATS_TEST_TMPDIR/before" - | head -1)
	[ -n "$late" ]
	wait "$PROF"
	cat "$f.err" >&3
	grep -q '^scope pid_ns ' "$f.err"
	echo "# late process $late, outside $outside" >&3
	[ "$(samples_matching "$f" "^sh-$late;")" -gt 0 ]
	[ "$(samples_matching "$f" "^sh-$outside;")" -eq 0 ]
	# only container processes, every one of them still running
	local p sampled
	sampled=$(awk '{ split($1, a, ";"); n = split(a[1], b, "-"); print b[n] }' "$f" | sort -u)
	[ -n "$sampled" ]
	for p in $sampled; do
		pids_in_ctr | grep -qx "$p" || { echo "pid $p sampled, not in the container" >&2; false; }
	done
}

@test "a runc container by cgroup: its v2 directory, nothing else" {
	start_busy_ctr
	go_ctr
	local cg root=/sys/fs/cgroup/unified
	cg=$(awk -F: '$1 == "0" { print $3 }' "/proc/$CTR_PID/cgroup")
	[ -d "$root" ] || root=/sys/fs/cgroup
	[ -n "$cg" ] && [ "$cg" != / ] && [ -d "$root$cg" ] ||
		skip "the container has no cgroup v2 directory ('$cg' under $root)"
	sh -c 'while :; do :; done' 3>&- &
	local outside=$!
	PIDS+=("$outside")
	local f="$BATS_TEST_TMPDIR/cg.folded" p
	run --separate-stderr "$PROFILE" --profile --cgroup-of "$CTR_PID" --seconds 2 --frequency 499 --with-pid
	echo "$stderr" >&3
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"scope cgroup "* ]]
	printf '%s\n' "$output" >"$f"
	for p in $(busy_pids); do
		[ "$(samples_matching "$f" "^sh-$p;")" -gt 0 ]
	done
	[ "$(samples_matching "$f" "^sh-$outside;")" -eq 0 ]
}

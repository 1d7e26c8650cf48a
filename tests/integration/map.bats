#!/usr/bin/env bats
# flamesidecar map: real runc containers running a JVM (openjdk-17) as uid
# 1000, registered by flamehook, attached to from the host.

load ../lib/containers

setup_file() {
	fs_file_jvm_ok || return 0
	fs_file_setup
	# runc container names are host-wide: unique per run, so that parallel
	# runs of this file (e.g. the sanitizer suite) do not collide.
	export CP=fsmap$$
	# C1: the warm JVM most tests share.
	fs_start_jvm "$CP-c1" -- --warmup 1
	export C1_PID=$PID
	echo SECRET-$RANDOM-$RANDOM >"$FS_TMP/secret"
	chmod 0600 "$FS_TMP/secret"
	SECRET=$(cat "$FS_TMP/secret")
	export SECRET_FILE="$FS_TMP/secret" SECRET
}

teardown_file() { fs_file_teardown; }

setup() {
	fs_needs_jvm
	[ -n "${C1_PID:-}" ] || skip "the test JVM did not start"
	CTMP=/proc/$C1_PID/root/tmp
}

# Every refusal: no secret anywhere, no .attach_pid or temp files left.
assert_clean() {
	if grep -qs -- "$SECRET" "/tmp/perf-$1.map"; then echo "secret in the host map"; return 1; fi
	if grep -qs -- "$SECRET" <<<"$output"; then echo "secret in the output"; return 1; fi
	if compgen -G "/proc/$1/root/tmp/.attach_pid*" >/dev/null; then
		echo ".attach_pid left behind"
		return 1
	fi
	if compgen -G "/tmp/.perf-$1.map.*" >/dev/null; then echo "temp map left behind"; return 1; fi
}

@test "map --help shows usage and examples; bad options are usage errors" {
	run "$FS_SIDECAR" map --help
	[ "$status" -eq 0 ]
	[[ "$output" == *Examples:* ]]
	[[ "$output" == *--mode* ]]
	run "$FS_SIDECAR" map "$CP-c1" --mode bogus
	[ "$status" -eq 2 ]
	run "$FS_SIDECAR" map
	[ "$status" -eq 2 ]
	run "$FS_SIDECAR" map "$CP-c1" --timeout -5
	[ "$status" -eq 2 ]
}

@test "map of an unknown container exits 3" {
	run "$FS_SIDECAR" map no-such-container
	[ "$status" -eq 3 ]
	[[ "$output" == *no-such-container* ]]
}

@test "map loads the agent and writes /tmp/perf-<host pid>.map with the hot method" {
	[ -f "$FS_BUILD/libflameagent.so" ] || skip "libflameagent.so is not built"
	run "$FS_SIDECAR" map "$CP-c1"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$C1_PID "*" 1 "*" 1000 "*agent* ]]
	[ -f "/tmp/perf-$C1_PID.map" ] && [ ! -L "/tmp/perf-$C1_PID.map" ]
	[ "$(stat -c %u "/tmp/perf-$C1_PID.map")" = 0 ]
	grep -q 'flametest\.Workload\.hotMethod' "/tmp/perf-$C1_PID.map"
	assert_clean "$C1_PID"
}

@test "map --mode jcmd uses Compiler.perfmap" {
	run "$FS_SIDECAR" map "$CP-c1" --mode jcmd --pid "$C1_PID"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *jcmd* ]]
	grep -q 'flametest\.Workload\.hot' "/tmp/perf-$C1_PID.map"
}

@test "the sandboxed child runs as the JVM's uid with no capabilities, NNP and seccomp" {
	fs_needs_test_sidecar
	mkdir -p "$FS_TMP/status"
	FS_TEST_SANDBOX_STATUS="$FS_TMP/status" run "$FS_TEST_SIDECAR" map "$CP-c1" --mode jcmd
	[ "$status" -eq 0 ]
	s="$FS_TMP/status/status.$C1_PID"
	cat "$s"
	grep -qP '^Uid:\t1000\t1000\t1000\t1000$' "$s"
	grep -qP '^Gid:\t1000\t1000\t1000\t1000$' "$s"
	grep -qP '^CapEff:\t0000000000000000$' "$s"
	grep -qP '^CapPrm:\t0000000000000000$' "$s"
	grep -qP '^CapBnd:\t0000000000000000$' "$s"
	grep -qP '^NoNewPrivs:\t1$' "$s"
	grep -qP '^Seccomp:\t2$' "$s"
	# Not ptrace-able from the container, and nothing of the operator's stderr.
	grep -qP '^Dumpable:\t0$' "$s"
	grep -qP '^Stderr:\t/dev/null$' "$s"
}

@test "perf record + perf report name the JIT-compiled hot method from our map" {
	fs_require_cmd perf
	run "$FS_SIDECAR" map "$CP-c1"
	[ "$status" -eq 0 ]
	# Only the host copy: perf must not find the container's own map.
	rm -f "$CTMP/perf-1.map"
	perf record -q -F 499 -g -p "$C1_PID" -o "$FS_TMP/perf.data" -- sleep 2 >/dev/null 2>&1
	run sh -c "perf report -i '$FS_TMP/perf.data' --stdio --no-children 2>/dev/null"
	echo "$output" | head -30
	[[ "$output" == *flametest.Workload.hot* ]]
}

@test "hostile perf map files in the container are refused, the secret never read" {
	local m="$CTMP/perf-1.map" kind
	for kind in symlink fifo sparse other-owner hardlink device; do
		rm -f "$m" "$CTMP/link-target" "/tmp/perf-$C1_PID.map"
		case $kind in
		symlink) ln -s "$SECRET_FILE" "$m" ;;
		fifo) mkfifo -m 0666 "$m" && chown 1000:1000 "$m" ;;
		sparse) truncate -s 10G "$m" && chown 1000:1000 "$m" ;;
		# What a container root with CAP_MKNOD swaps in (never opened:
		# O_PATH, fstat, then reopen by fd; test_perfmap proves no open).
		device) mknod -m 0666 "$m" c 1 3 && chown 1000:1000 "$m" ;;
		other-owner) cp "$SECRET_FILE" "$m" && chown 1001:1001 "$m" && chmod 0644 "$m" ;;
		hardlink) echo "1000 10 x" >"$CTMP/link-target" && chown 1000:1000 "$CTMP/link-target" &&
			ln "$CTMP/link-target" "$m" ;;
		esac
		start=$(date +%s%N)
		run "$FS_SIDECAR" map "$CP-c1" --timeout 3000
		took=$((($(date +%s%N) - start) / 1000000))
		echo "$kind ($took ms): $output"
		[ "$status" -ne 0 ]
		[[ "$output" == *refusing*perf-1.map* ]]
		[ "$took" -lt 10000 ]
		[ ! -e "/tmp/perf-$C1_PID.map" ]
		assert_clean "$C1_PID"
	done
	rm -f "$m" "$CTMP/link-target"
	run "$FS_SIDECAR" map "$CP-c1"
	[ "$status" -eq 0 ]
}

@test "a fake .java_pid socket that is not the JVM's is refused within the deadline" {
	fs_require_cmd perl
	fs_start_jvm "$CP-c2" -- --warmup 0.2
	local sock=/proc/$PID/root/tmp/.java_pid1
	[ ! -e "$sock" ]
	# Owned by another uid.
	perl -MIO::Socket::UNIX -e 'my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $ARGV[0], Listen => 1) or die; chown 1001, 1001, $ARGV[0]; sleep 60' "$sock" &
	fake=$!
	fs_wait_for 10 test -S "$sock"
	run "$FS_SIDECAR" map "$CP-c2" --timeout 3000
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"owned by uid 1001"* ]]
	kill "$fake" 2>/dev/null || true  # the garbage server may have died of SIGPIPE
	wait "$fake" || true
	rm -f "$sock"
	# Owned by the JVM's uid but served by another process, answering garbage.
	perl -MIO::Socket::UNIX -e 'my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Local => $ARGV[0], Listen => 1) or die; chown 1000, 1000, $ARGV[0]; while (my $c = $s->accept) { print $c "garbage\n"; close $c }' "$sock" &
	fake=$!
	fs_wait_for 10 test -S "$sock"
	run "$FS_SIDECAR" map "$CP-c2" --timeout 3000
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"not by the JVM"* ]]
	kill "$fake" 2>/dev/null || true  # the garbage server may have died of SIGPIPE
	wait "$fake" || true
	rm -f "$sock"
	assert_clean "$PID"
	# With the fakes gone the real JVM is attached to (first attach: SIGQUIT).
	run "$FS_SIDECAR" map "$CP-c2"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -S "$sock" ]
	assert_clean "$PID"
}

@test "a planted .attach_pid symlink is refused and left alone" {
	fs_start_jvm "$CP-c3" -- --warmup 0.2
	local trig=/proc/$PID/root/tmp/.attach_pid1
	ln -s "$SECRET_FILE" "$trig"
	run "$FS_SIDECAR" map "$CP-c3" --timeout 3000
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *".attach_pid1 already exists"* ]]
	[ -L "$trig" ]
	[ "$(cat "$SECRET_FILE")" = "$SECRET" ]
	[[ "$output" != *"$SECRET"* ]]
	rm -f "$trig"
}

@test "a container whose /tmp is a symlink is refused" {
	fs_start_jvm "$CP-c4" --tmp-symlink -- --warmup 0.2
	run "$FS_SIDECAR" map "$CP-c4" --timeout 3000
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"symbolic link"* ]]
	[ ! -e "/tmp/perf-$PID.map" ]
}

@test "a JVM that ignores SIGQUIT is explained, not signalled" {
	# HotSpot installs its SIGQUIT handler even when started with SIGQUIT
	# ignored, unless -Xrs: then the inherited SIG_IGN stays. -Xrs starts
	# the attach listener at startup; its socket is removed (as a /tmp
	# cleaner would) so that attaching needs the signal again.
	fs_start_jvm "$CP-c5" --wrap 'trap "" QUIT; exec "$@"' --jvm-opt -Xrs -- --warmup 0.2
	grep -q '^SigIgn:.*[4-7cdef]$' "/proc/$PID/status"
	fs_wait_for 10 test -S "/proc/$PID/root/tmp/.java_pid1"
	rm "/proc/$PID/root/tmp/.java_pid1"
	run "$FS_SIDECAR" map "$CP-c5" --timeout 3000
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"ignores SIGQUIT"* ]]
	[[ "$output" == *"start it with SIGQUIT at default"* ]]
	assert_clean "$PID"
}

@test "a JVM that would be killed by SIGQUIT (-Xrs) is not signalled" {
	fs_start_jvm "$CP-c7" --jvm-opt -Xrs -- --warmup 0.2
	fs_wait_for 10 test -S "/proc/$PID/root/tmp/.java_pid1"
	rm "/proc/$PID/root/tmp/.java_pid1"
	run "$FS_SIDECAR" map "$CP-c7" --timeout 3000
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"-Xrs"*"would kill it"* ]]
	assert_clean "$PID"
	kill -0 "$PID"
}

@test "a JVM started with -XX:+DisableAttachMechanism is explained" {
	fs_start_jvm "$CP-c6" --jvm-opt -XX:+DisableAttachMechanism -- --warmup 0.2
	run "$FS_SIDECAR" map "$CP-c6" --timeout 3000
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"-XX:+DisableAttachMechanism"* ]]
	assert_clean "$PID"
}

@test "map --pid of a process outside the container is refused" {
	run "$FS_SIDECAR" map "$CP-c1" --pid $$
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"not in container $CP-c1"* ]]
}

#!/usr/bin/env bats
# Hangs with no deadline (issue 19 item 5): a container whose FUSE daemon
# stops answering, and a target that is stopped, cannot hold `run` past a
# bounded time. tests/tools/fusestall is the daemon: it serves one
# executable, then (SIGUSR1) reads every request and answers none, so a
# task that touches the file waits in D state, unkillable, for as long as
# the daemon lives.

load ../lib/containers
load hostile2-helpers

FUSESTALL="$FS_BUILD/tests/tools/fusestall"

setup() {
	fs_require_root
	fs_require_cmd runc jq
	fs_setup
	NAME=fs-stall-$$-$BATS_TEST_NUMBER
	DAEMON=
}

teardown() {
	# The daemon first: while it lives, whatever waits on it cannot die.
	[ -z "$DAEMON" ] || kill -KILL "$DAEMON" 2>/dev/null || true
	[ -z "$DAEMON" ] || wait "$DAEMON" 2>/dev/null || true
	fs_cleanup
}

# A FUSE mount at $FS_TMP/fuse serving /usr/bin/yes as "yes".
start_daemon() {
	[ -w /dev/fuse ] || skip "needs /dev/fuse"
	[ -x "$FUSESTALL" ] || skip "tests/tools/fusestall is not built"
	mkdir -p "$FS_TMP/fuse"
	"$FUSESTALL" "$FS_TMP/fuse" /usr/bin/yes yes >"$FS_TMP/fusestall.out" 2>&1 &
	DAEMON=$!
	fs_wait_for 10 grep -q ready "$FS_TMP/fusestall.out"
}

@test "stall: a binary served by a FUSE daemon that stops answering: run -d 2s ends within 20 s and says what it skipped" {
	start_daemon
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- /fuse/yes
	bundle_jq "$FS_TMP/b" --arg s "$FS_TMP/fuse" \
		'.mounts += [{destination: "/fuse", type: "bind", source: $s, options: ["rbind", "ro"]}] |
		 .process.args = ["sh", "-c", "exec /fuse/yes >/dev/null"]'
	fs_runc_run "$NAME" "$FS_TMP/b" || { cat "$FS_TMP/b/out.log"; false; }
	local pid
	pid=$(fs_container_pid "$NAME")
	fs_wait_for 10 grep -q /fuse/yes "/proc/$pid/maps"
	fs_wait_for 10 test -f "$FS_RUN/containers/$NAME.json"
	# From now on every request to the daemon is held.
	kill -USR1 "$DAEMON"
	local start=$SECONDS
	run timeout -s KILL 60 "$FS_SIDECAR" run "$NAME" -d 2s -F 199 -o "$FS_TMP/s.svg"
	local took=$((SECONDS - start))
	echo "$output"
	echo "took $took s"
	[ "$status" = 0 ]
	[ "$took" -le 20 ]
	[[ "$output" == *"files skipped: on FUSE"* ]]
	# the samples were taken all the same: yes is named by address at worst
	[ -s "$FS_TMP/s.svg" ]
	# the file system really was stalled: a stat of the file does not return
	timeout -s KILL 2 stat -L "/proc/$pid/root/fuse/yes" && false || true
}

@test "stall: a stopped JVM (SIGSTOP, attach never answered): run -d 2s ends within 20 s" {
	[ -x "$JAVA17" ] || skip "no JDK at $JAVA17"
	fs_start_jvm "$NAME" -- --threads 1 --warmup 1
	# the JVM never runs again while run looks at it: its attach listener
	# never answers, its memory stays readable
	kill -STOP "$PID"
	local start=$SECONDS
	run timeout -s KILL 60 "$FS_SIDECAR" run "$NAME" -d 2s -F 199 -o "$FS_TMP/j.svg"
	local took=$((SECONDS - start))
	kill -CONT "$PID" || true
	echo "$output"
	echo "took $took s"
	[ "$status" = 0 ]
	[ "$took" -le 20 ]
	[ -s "$FS_TMP/j.svg" ]
}

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

# A container whose process loads a large library served by fusestall
# (under another name: not a JVM), the daemon set to hold every request:
# ADDR is an unread page of its text, 8 MiB in (most of it is never read).
start_held_library() {
	fs_needs_test_sidecar
	local lib=/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
	[ -f "$lib" ] || skip "no $lib (a large library, most of whose pages are never read)"
	[ -w /dev/fuse ] || skip "needs /dev/fuse"
	[ -x "$FUSESTALL" ] || skip "tests/tools/fusestall is not built"
	mkdir -p "$FS_TMP/fuse"
	"$FUSESTALL" "$FS_TMP/fuse" "$lib" libbig.so >"$FS_TMP/fusestall.out" 2>&1 &
	DAEMON=$!
	fs_wait_for 10 grep -q ready "$FS_TMP/fusestall.out"
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- yes
	bundle_jq "$FS_TMP/b" --arg s "$FS_TMP/fuse" \
		'.mounts += [{destination: "/fuse", type: "bind", source: $s, options: ["rbind", "ro"]}] |
		 .process.args = ["sh", "-c", "LD_PRELOAD=/fuse/libbig.so exec yes >/dev/null"]'
	fs_runc_run "$NAME" "$FS_TMP/b" || { cat "$FS_TMP/b/out.log"; false; }
	local pid start_hex
	pid=$(fs_container_pid "$NAME")
	fs_wait_for 10 grep -q /fuse/libbig.so "/proc/$pid/maps"
	fs_wait_for 10 test -f "$FS_RUN/containers/$NAME.json"
	start_hex=$(awk '/\/fuse\/libbig.so/ && $2 ~ /x/ {split($1, a, "-"); print a[1]; exit}' "/proc/$pid/maps")
	ADDR=$(printf '%x' $((0x$start_hex + 8 * 1048576)))
	[ -n "$ADDR" ]
	kill -USR1 "$DAEMON"
}

# The daemon gone, the held read fails and the killed reader ends.
release_held() {
	local left p
	left=$(pgrep -f "$FS_TEST_SIDECAR run $NAME" || true)
	kill -KILL "$DAEMON"
	wait "$DAEMON" 2>/dev/null || true
	DAEMON=
	for p in $left; do
		fs_wait_for 10 sh -c "! kill -0 $p 2>/dev/null"
	done
}

@test "stall: a memory read the container wins against the check (FUSE mapped between check and read): run -d 2s ends within its bound, says why, and leaves only the held reader" {
	start_held_library
	local addr=$ADDR
	mkdir "$FS_TMP/out"
	# The first memory read of the run is of that page, unchecked: the race
	# between the check and the read, won (a test-build hook).
	local start=$SECONDS
	FS_TEST_PROCMEM_UNGUARDED=$addr run timeout -s KILL 60 "$FS_TEST_SIDECAR" run "$NAME" -d 2s -F 199 \
		-o "$FS_TMP/out/r.svg"
	local took=$((SECONDS - start))
	echo "$output"
	echo "took $took s"
	[ "$status" = 1 ]
	[ "$took" -le 15 ]
	[[ "$output" == *"memory at 0x$addr"*"held for"*"/fuse/libbig.so"* ]]
	[[ "$output" == *"the profile of this window is lost"* ]]
	# no output under its name, half-written or not, and no temporary file
	[ -z "$(ls -A "$FS_TMP/out")" ]
	# what is left of ours: the killed reader, held by the daemon (in D
	# state), and its helpers, which end with it
	local left held p
	left=$(pgrep -f "$FS_TEST_SIDECAR run $NAME" || true)
	echo "left: $left"
	held=$(pgrep -o -f "$FS_TEST_SIDECAR run $NAME")
	grep -q '^State:.*D' "/proc/$held/status"
	for p in $left; do
		[ "$p" = "$held" ] || [ "$(awk '/^PPid:/ {print $2}' "/proc/$p/status")" = "$held" ]
	done
	release_held
}

@test "stall: a read held while run writes its outputs: the watchdog removes the temporary file and the outputs already written, nothing else" {
	start_held_library
	local addr=$ADDR
	mkdir "$FS_TMP/out"
	# not the run's: a file of the user, and a temporary name planted in
	# advance (the run's are random; this one must stay)
	echo keep >"$FS_TMP/out/notes.txt"
	echo planted >"$FS_TMP/out/.r.svg.0000000000000000.tmp"
	# The held read comes once the folded file is renamed into place and
	# while the SVG's temporary file is open (a test-build hook).
	FS_TEST_PROCMEM_UNGUARDED=$addr FS_TEST_PROCMEM_UNGUARDED_AT=output \
		run timeout -s KILL 60 "$FS_TEST_SIDECAR" run "$NAME" -d 1s -F 199 \
		-o "$FS_TMP/out/r.svg" --pprof "$FS_TMP/out/r.pb.gz"
	echo "$output"
	ls -la "$FS_TMP/out"
	[ "$status" = 1 ]
	[[ "$output" == *"memory at 0x$addr"*"held for"* ]]
	[[ "$output" == *"removed 2 files it had written"* ]]
	# no temporary file of the run, and no partial set of outputs
	[ "$(ls -A "$FS_TMP/out" | sort | tr '\n' ' ')" = ".r.svg.0000000000000000.tmp notes.txt " ]
	[ "$(cat "$FS_TMP/out/notes.txt")" = keep ]
	# the reader was killed while held: it runs no more code, removes nothing
	release_held
	[ "$(ls -A "$FS_TMP/out" | sort | tr '\n' ' ')" = ".r.svg.0000000000000000.tmp notes.txt " ]
}

#!/usr/bin/env bats
# Off-CPU profile of a real server under load against JFR's wait events
# (issue 20): Debian's jetty9 (tests/lib/apps.bash) in a runc container,
# JVM without frame pointers, loaded by wrk; JFR records every wait it has
# an event for (tests/oracle/offcpu.jfc: ThreadSleep, JavaMonitorEnter and
# Wait, ThreadPark, SocketRead, threshold 0 ms) while `run --event offcpu`
# records the same window, and a thread dump (jcmd Thread.print) at its end
# shows the waits still in progress, which JFR records only when they end.
# tests/oracle/offcpu_compare.py then asks: of our off-CPU time on Java
# stacks, how much is at a wait point (the innermost Java frames) JFR also
# recorded as a wait (or the dump shows waiting)?

load ../lib/containers
load ../lib/apps

setup_file() { fs_file_setup; }
teardown_file() { fs_file_teardown; }

teardown() {
	[ -n "${NAME:-}" ] && app_load_stop "$NAME"
	[ -n "${NAME:-}" ] && fs_stop_containers runc "$NAME"
	return 0
}

@test "offcpu: jetty under wrk, >= 90% of our off-CPU time on Java wait points JFR recorded" {
	app_require jetty
	[ -x "$JAVA_HOME_17/bin/jfr" ] || skip "no jfr in $JAVA_HOME_17"
	NAME="offsrv-$$"
	app_start "$NAME" jetty
	local d=$BATS_TEST_TMPDIR/o
	mkdir -p "$d"
	app_load_start "$NAME" 40
	app_warm "$NAME"
	app_jcmd "$NAME" JFR.start name=offcpu settings=/opt/oracle-java/offcpu.jfc >"$d/jfr-start.out" 2>&1 ||
		{ cat "$d/jfr-start.out"; false; }
	run "$FS_SIDECAR" run "$NAME" --event offcpu --threads -d 4s -o "$d/ours.svg"
	echo "$output"
	[ "$status" -eq 0 ]
	# the poller's shortcuts were taken in this window, so the comparison
	# below holds them to JFR too: chains counted again for threads woken
	# and blocked at the same wait point, idle threads looked at less often
	local same idle
	same=$(sed -n 's/.* \([0-9]*\) woken and blocked at the same wait point.*/\1/p' <<<"$output")
	idle=$(sed -n 's/.* \([0-9]*\) idle ticks between looks.*/\1/p' <<<"$output")
	echo "# poller: $same looks at the same wait point, $idle idle ticks between looks" >&3
	[ "${same:-0}" -gt 0 ] && [ "${idle:-0}" -gt 0 ]
	# the JVM's own view of the waits still in progress (JFR writes a wait
	# event when the wait ends: one longer than the recording has none)
	app_jcmd "$NAME" Thread.print >"$d/dump.txt"
	app_jcmd "$NAME" JFR.stop name=offcpu filename=/tmp/offcpu.jfr >"$d/jfr-stop.out" 2>&1 ||
		{ cat "$d/jfr-stop.out"; false; }
	app_load_stop "$NAME"
	cp "/proc/$(fs_container_pid "$NAME")/root/tmp/offcpu.jfr" "$d/jfr.jfr"
	grep -q 'Requests/sec' "$FS_TMP/$NAME/wrk.out" || cat "$FS_TMP/$NAME/wrk.out"
	local rc=0
	python3 "$FS_TOP/tests/oracle/offcpu_compare.py" --folded "$d/ours.folded" --jfr "$d/jfr.jfr" \
		--dump "$d/dump.txt" --jfr-tool "$JAVA_HOME_17/bin/jfr" --min-share 90 --min-java-us 4000000 >"$d/compare.out" 2>&1 || rc=$?
	cat "$d/compare.out"
	sed -n 's/^\(recorded share\|no JFR event type\|ours\): /# &/p' "$d/compare.out" >&3
	if [ "$rc" != 0 ]; then
		local keep="$FS_BUILD/test-artifacts/offcpu-server-$$"
		mkdir -p "$keep" && cp -r "$d"/. "$keep"/ 2>/dev/null
		echo "# artifacts kept in $keep" >&3
	fi
	[ "$rc" = 0 ]
}

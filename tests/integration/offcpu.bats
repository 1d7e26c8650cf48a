#!/usr/bin/env bats
# Off-CPU and wall-clock profiles (`run --event offcpu|wall`, sidecar/offcpu/,
# docs/run.md "Events"): flametest.Waits in a runc container, JVM WITHOUT
# frame pointers: spin-A spins in spinA holding a monitor, sleep-B sleeps in
# sleepB, lock-C waits for that monitor in lockC, read-D reads a socket whose
# peer never writes. The JVM's own view is the oracle for the states (the
# workload prints READY only once B is TIMED_WAITING, C BLOCKED and D in its
# read); Debian's sleep for the native path (nanosleep in libc and the kernel).

load ../lib/containers

needs() {
	fs_require_root
	fs_require_cmd runc jq
	[ -x "$JAVA17" ] || skip "no JDK at $JAVA17"
	[ -f "$FS_BUILD/java/flametest/Waits.class" ] || skip "Java workloads not built (make agent)"
}

# start NAME ARGS...: a container running ARGS with build/java at /opt/fsjava;
# waits for READY when WAIT_READY=1. PID is its host pid.
start() {
	local name=$1
	shift
	CTRS+=("$name")
	local dir="$FS_TMP/$name"
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true --mount "$FS_BUILD/java:/opt/fsjava" -- "$@"
	fs_runc_run "$name" "$dir"
	if [ "${WAIT_READY:-1}" = 1 ]; then
		fs_wait_for 90 grep -q READY "$dir/out.log" || {
			cat "$dir/out.log" >&2
			return 1
		}
	fi
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
	PID=$(fs_container_pid "$name")
}

# thread_us FILE THREAD [PATTERN]: microseconds of THREAD (a --threads frame),
# and of those the ones whose stack matches PATTERN.
thread_us() {
	awk -v t="$2" -v p="${3:-.}" '{
		n = $NF
		split($0, f, ";")
		if (f[2] != t) next
		all += n
		if ($0 ~ p) m += n
	} END { printf "%d %d\n", all, m }' "$1"
}

setup_file() { fs_file_setup; }
teardown_file() { fs_file_teardown; }

setup() { fs_ctrs_setup; }

teardown() { fs_ctrs_teardown; }

@test "offcpu/wall: each thread's time under the Java method it waits in (no frame pointers)" {
	needs
	local name="offcpu-$$-waits"
	start "$name" "$JAVA17" -XX:-PreserveFramePointer -cp /opt/fsjava flametest.Waits --exit-after 100
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" --event wall --threads -d 3s -o w.svg --pprof w.pb.gz
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"threads    "*"ticks"* ]]
	grep -q 'Wall-clock time of container' w.svg
	local window_us t all m
	window_us=$(awk '/^container/ { for (i = 1; i <= NF; i++) if ($i == "s" || $i == "s,") print int($(i - 1) * 1000000) }' <<<"$output" | head -1)
	[ -z "$window_us" ] && window_us=3000000
	for t in spin-A sleep-B lock-C read-D; do
		read -r all m < <(thread_us w.folded "$t")
		echo "# wall $t: $all us of a $window_us us window" >&3
		# within 5% of the window
		[ "$all" -ge $((window_us * 95 / 100)) ]
		[ "$all" -le $((window_us * 105 / 100)) ]
	done
	read -r all m < <(thread_us w.folded sleep-B 'flametest\.Waits\.sleepB.*;java\.lang\.Thread\.sleep.*\[sleeping\]')
	echo "# sleep-B under sleepB: $m of $all" >&3
	[ "$m" -ge $((all * 90 / 100)) ]
	read -r all m < <(thread_us w.folded lock-C 'flametest\.Waits\.lockC.*ObjectMonitor::enter.*futex.*\[sleeping\]')
	echo "# lock-C under lockC: $m of $all" >&3
	[ "$m" -ge $((all * 90 / 100)) ]
	# read-D: through the JNI function built with frame pointers (rbp guessed
	# from the stack copy, docs/run.md) down to readD, then the kernel's wait
	read -r all m < <(thread_us w.folded read-D 'flametest\.Waits\.readD.*SocketDispatcher_read0;(__libc_)?read;.*tcp_recvmsg.*\[sleeping\]')
	echo "# read-D under readD: $m of $all" >&3
	[ "$m" -ge $((all * 90 / 100)) ]
	# pprof's own reader: the unit is time, and the values are the folded counts
	if command -v go >/dev/null 2>&1; then
		go tool pprof -raw w.pb.gz 2>/dev/null >raw.txt
		grep -q '^wall/microseconds\[dflt\] *wall/nanoseconds\[dflt\]' raw.txt
		local raw_us folded_us
		raw_us=$(awk '/^ +[0-9]+ +[0-9]+:/ { s += $1 } END { print s }' raw.txt)
		folded_us=$(awk '{ s += $NF } END { print s }' w.folded)
		echo "# pprof: $raw_us us, folded $folded_us us" >&3
		[ "$raw_us" -eq "$folded_us" ]
	fi
	read -r all m < <(thread_us w.folded spin-A 'flametest\.Waits\.spinA')
	echo "# spin-A under spinA: $m of $all (the rest [runnable] on a busy machine)" >&3
	[ "$m" -gt 0 ]

	run "$FS_SIDECAR" run "$name" --event offcpu --threads -d 2s -o o.svg
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q 'Off-CPU time of container' o.svg
	for t in sleep-B lock-C read-D; do
		read -r all m < <(thread_us o.folded "$t")
		echo "# offcpu $t: $all us" >&3
		[ "$all" -ge 1800000 ]
	done
	read -r all m < <(thread_us o.folded spin-A)
	echo "# offcpu spin-A: $all us" >&3
	[ "$all" -le 40000 ]

	# top: the same view live; the states lead the self column
	run "$FS_SIDECAR" top "$name" --event offcpu --once -d 1s -n 5
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"US  FRAME"* ]]
	[[ "$output" == *"[sleeping]"* ]]
}

# jfr_pairs FILE.jfr: "thread method" for every flametest.Waits method on
# the stack of a JFR wait event (jdk.ThreadSleep, jdk.JavaMonitorEnter,
# jdk.ThreadPark, jdk.SocketRead)
jfr_pairs() {
	"$JAVA_HOME_17/bin/jfr" print --events jdk.ThreadSleep,jdk.JavaMonitorEnter,jdk.ThreadPark,jdk.SocketRead \
		--stack-depth 64 "$1" | awk '
		/eventThread = "/ { t = $0; sub(/.*eventThread = "/, "", t); sub(/".*/, "", t) }
		/flametest\.Waits\.[A-Za-z0-9_$]+\(/ {
			m = $0; sub(/.*flametest\.Waits\./, "", m); sub(/\(.*/, "", m); print t, m }' | sort -u
}

@test "offcpu: >= 90% of the off-CPU time on Java stacks JFR also recorded as waits" {
	needs
	[ -x "$JAVA_HOME_17/bin/jfr" ] || skip "no jfr in $JAVA_HOME_17"
	local name="offcpu-$$-jfr"
	start "$name" "$JAVA17" -XX:-PreserveFramePointer \
		-XX:StartFlightRecording=duration=8s,filename=/tmp/w.jfr -cp /opt/fsjava flametest.Waits \
		--periodic --exit-after 100
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" --event offcpu --threads -d 3s -o j.svg
	echo "$output"
	[ "$status" -eq 0 ]
	# the recording ends by itself (duration=8s) and is written then: poll
	# until a copy of it is a whole recording jfr can read
	fs_wait_for 30 sh -c "cp /proc/$PID/root/tmp/w.jfr w.jfr && '$JAVA_HOME_17/bin/jfr' summary w.jfr"
	jfr_pairs w.jfr >pairs.txt
	cat pairs.txt
	# ours: the time of each (thread, innermost Waits method) of a stack
	local share
	share=$(awk 'NR == FNR { ok[$1 " " $2] = 1; next }
		{
			n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
			k = split(line, f, ";"); m = ""
			for (i = k; i >= 1; i--) if (f[i] ~ /^flametest\.Waits\./) { m = f[i]; break }
			if (m == "") next
			sub(/^flametest\.Waits\./, "", m); sub(/_\[.\]$/, "", m)
			t = f[2] == "java" ? "main" : f[2] # the main thread: comm "java", JFR "main"
			all += n; if ((t " " m) in ok) hit += n; else print "# not in JFR: " f[2] " " m " " n > "/dev/stderr"
		} END { printf "%d %d\n", all ? 100 * hit / all : 0, all }' pairs.txt j.folded)
	echo "# JFR: $share (% of our off-CPU us on Java stacks, total us)" >&3
	[ "${share%% *}" -ge 90 ]
	[ "${share##* }" -ge 6000000 ] # B, C, D and E blocked most of 3 s
}

@test "offcpu: a native sleep blocks in clock_nanosleep, libc and kernel frames named" {
	fs_require_root
	fs_require_cmd runc jq
	local name="offcpu-$$-sleep"
	WAIT_READY=0 start "$name" /usr/bin/sleep 1000
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" --event offcpu -d 2s -o s.svg
	echo "$output"
	[ "$status" -eq 0 ]
	local all m
	read -r all m < <(awk '{ n = $NF; all += n; if ($0 ~ /^sleep;.*nanosleep.*;hrtimer_nanosleep_\[k\];.*\[sleeping\] [0-9]+$/) m += n }
		END { printf "%d %d\n", all, m }' s.folded)
	cat s.folded
	echo "# sleep: $m of $all us in clock_nanosleep" >&3
	[ "$all" -ge 1800000 ]
	[ "$m" -ge $((all * 90 / 100)) ]
}

@test "offcpu: cat on a pipe against perf sched timehist: the same blocking path, totals within 10%" {
	fs_require_root
	fs_require_cmd runc jq perf
	local name="offcpu-$$-cat"
	WAIT_READY=0 start "$name" /bin/sh -c 'while :; do echo x; sleep 0.02; done | cat >/dev/null'
	local catpid="" p
	fs_wait_for 10 bash -c "runc ps $name | awk '\$NF == \"cat\"' | grep -q ."
	catpid=$(runc ps "$name" | awk '$NF == "cat" { print $2 }')
	[ -n "$catpid" ]
	cd "$OUT"
	# perf's view of the same process over a window that holds ours
	perf sched record -g -o sched.data -- sleep 4 >perf.log 2>&1 &
	p=$!
	fs_wait_for 10 test -s sched.data
	run "$FS_SIDECAR" run "$name" --pid "$catpid" --event offcpu -d 2s -o c.svg
	echo "$output"
	[ "$status" -eq 0 ]
	wait "$p"
	cat c.folded
	local ours m
	read -r ours m < <(awk '{ n = $NF; all += n; if ($0 ~ /^cat;.*read.*;ksys_read_\[k\];.*pipe_read_\[k\];.*\[sleeping\] [0-9]+$/) m += n }
		END { printf "%d %d\n", all, m }' c.folded)
	echo "# cat: $ours us off-CPU in 2 s, $m us of it in read -> pipe_read" >&3
	[ "$m" -ge $((ours * 90 / 100)) ]
	# perf: wait time per switch-in of cat over its recording, as a rate
	perf sched timehist -i sched.data -p "$catpid" -g >th.txt 2>/dev/null
	local rate
	rate=$(awk '$1 ~ /^[0-9]+\.[0-9]+$/ && $4 ~ /^[0-9.]+$/ {
			if (!first) first = $1
			last = $1; w += $4; r += $6
		} END { if (last > first) printf "%d\n", w * 1000 / ((last - first) * 1000000) * 1000000; else print 0 }' th.txt)
	echo "# perf sched timehist: cat waited $rate us per second" >&3
	grep -q 'pipe_read' th.txt
	# ours per second, against perf's
	local ours_rate=$((ours / 2))
	[ "$ours_rate" -ge $((rate * 90 / 100)) ]
	[ "$ours_rate" -le $((rate * 110 / 100)) ]
}

@test "offcpu: two threads switching as fast as they can cost the poller no more than idle ones" {
	needs
	local name="offcpu-$$-pingpong"
	start "$name" "$JAVA17" -cp /opt/fsjava flametest.Waits --ping-pong --exit-after 100
	cd "$OUT"
	local c0 c1 t0=$SECONDS
	c0=$(cat /proc/"$PID"/task/*/status | awk '/ctxt_switches/ { n += $2 } END { print n }')
	run "$FS_SIDECAR" run "$name" --event wall --threads -d 2s -o pp.svg
	c1=$(cat /proc/"$PID"/task/*/status | awk '/ctxt_switches/ { n += $2 } END { print n }')
	echo "$output"
	[ "$status" -eq 0 ]
	local ms
	ms=$(awk '/^threads / { for (i = 1; i <= NF; i++) if ($i == "ms" && $(i + 1) == "CPU") print int($(i - 1)) }' <<<"$output")
	echo "# ping-pong: $(((c1 - c0) / 2)) context switches/s of the JVM, poller $ms ms CPU in 2 s, run took $((SECONDS - t0)) s" >&3
	[ $((SECONDS - t0)) -le 20 ]
	# a few hundred thread looks per second: well under a fifth of a CPU
	[ "$ms" -le 400 ]
	grep -q '^java;ping;' pp.folded
}

@test "offcpu: a thread storm cannot make run overrun its deadline or memory" {
	needs
	local name="offcpu-$$-storm"
	start "$name" "$JAVA17" -Xss256k -cp /opt/fsjava flametest.Waits --thread-storm --exit-after 100
	cd "$OUT"
	local t0=$SECONDS
	run /usr/bin/time -f 'maxrss %M' "$FS_SIDECAR" run "$name" --event wall -d 2s -o st.svg
	echo "$output"
	[ "$status" -eq 0 ]
	local rss
	rss=$(awk '/^maxrss/ { print $2 }' <<<"$output")
	echo "# storm: $((SECONDS - t0)) s, max RSS $rss KiB" >&3
	[ $((SECONDS - t0)) -le 20 ]
	[ "$rss" -le 400000 ]
}

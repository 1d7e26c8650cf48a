#!/usr/bin/env bats
# The HotSpot-aware unwinder (sidecar/unwind/, docs/unwind.md): JVMs started
# WITHOUT -XX:+PreserveFramePointer in real runc containers, sampled by `run`.
# Oracle: a whole stack reaches the thread's base (thread_native_entry for
# threads the JVM started, JavaMain or start_thread), which the kernel's
# frame-pointer chain never does past a compiled frame of such a JVM.
# JDKs: Debian's openjdk-17 and the Temurin 25 under /usr/lib/jvm.

load ../lib/containers


needs_jvm() {
	fs_needs_jvm "$1" Workload
}

# start_jvm NAME JAVA [JVM options...] -- WORKLOAD_ARGS...: PID is its host pid.
# The class is $WORKLOAD (default flametest.Workload).
start_jvm() {
	local name=$1 java=$2 opts=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	CTRS+=("$name")
	local dir="$FS_TMP/$name"
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true --mount "$FS_BUILD/java:/opt/fsjava" -- \
		"$java" "${opts[@]}" -cp /opt/fsjava "${WORKLOAD:-flametest.Workload}" "$@"
	fs_runc_run "$name" "$dir"
	fs_wait_for 90 grep -q READY "$dir/out.log" || {
		cat "$dir/out.log" >&2
		return 1
	}
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
	PID=$(fs_container_pid "$name")
}

# Of the java process's samples that hold a Java frame, the share whose stack
# starts at a thread's base, in %.
whole_pct() {
	awk '{
		n = $NF
		if ($0 !~ /;(flametest|java|jdk|sun)\.[A-Za-z0-9_$.]*/) next
		j += n
		if ($0 ~ /^java;(\[[^]]*\];)?(start_thread|thread_native_entry|JavaMain|__clone3|clone3|clone|_start)(;|$)/ ||
		    $0 ~ /;(thread_native_entry|JavaMain);/) w += n
	} END { printf "%d %d\n", (j ? 100 * w / j : 0), j }' "$1"
}

setup_file() { fs_file_setup; }
teardown_file() { fs_file_teardown; }

setup() { fs_ctrs_setup; }

teardown() { fs_ctrs_teardown; }

# whole_stacks LABEL JAVA: >= 90% whole stacks without frame pointers.
whole_stacks() {
	local name="unwind-$$-$BATS_TEST_NUMBER"
	start_jvm "$name" "$2" -XX:-PreserveFramePointer -- --threads 2 --warmup 1
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" -d 4s -F 199 -o u.svg
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"unwinder   pid $PID (without frame pointers): hotspot"* ]]
	local pct total
	read -r pct total < <(whole_pct u.folded)
	echo "# $1: $pct% of $total Java samples reach the thread's base" >&3
	[ "$total" -gt 100 ]
	[ "$pct" -ge 90 ]
	grep -q 'flametest\.Workload\.hotMethod' u.folded
}

# Of the samples whose last Java frame is Exits.leaf, the share whose frame
# before it is Exits.caller, in %, and their count.
leaf_caller_pct() {
	awk '{
		n = $NF
		line = $0
		sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		for (i = k; i >= 1; i--)
			if (f[i] ~ /^flametest\.Exits\.leaf/) break
		if (i < 1) next
		t += n
		if (i > 1 && f[i - 1] ~ /^flametest\.Exits\.caller/) ok += n
	} END { printf "%d %d\n", (t ? 100 * ok / t : 0), t }' "$1"
}

# exits_keep_caller LABEL JAVA: a tiny compiled leaf, not inlined, spends much
# of its time in its entry and exit, where the frame size does not lead to
# the caller (docs/unwind.md). Every sample of the leaf must have its caller.
exits_keep_caller() {
	needs_jvm "$2"
	local name="unwind-$$-$BATS_TEST_NUMBER-${1// /}"
	WORKLOAD=flametest.Exits start_jvm "$name" "$2" -XX:-PreserveFramePointer \
		-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,flametest.Exits::leaf --
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" -d 4s -F 499 -o "$1.svg"
	echo "$output"
	[ "$status" -eq 0 ]
	local pct total
	read -r pct total < <(leaf_caller_pct "$1.folded")
	echo "# $1: $pct% of $total samples of the leaf have its caller" >&3
	[ "$total" -gt 200 ]
	[ "$pct" -ge 99 ]
}

@test "unwind: a leaf sampled in its compiled entry or exit keeps its caller (JDK 17, 25)" {
	exits_keep_caller "JDK 17" "$JAVA17"
	if [ -x "$JAVA25" ]; then exits_keep_caller "JDK 25" "$JAVA25"; fi
}

# start_jetty NAME JAVA PORT: Debian's jetty9 serving a static root webapp,
# without frame pointers; its jetty.base is a read-only bind mount.
start_jetty() {
	local name=$1 java=$2 port=$3 dir="$FS_TMP/$1"
	CTRS+=("$name")
	mkdir -p "$FS_TMP/jb/webapps/ROOT"
	cp /usr/share/jetty9/default-root/* "$FS_TMP/jb/webapps/ROOT/"
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true --mount "$FS_TMP/jb:/opt/jb" -- \
		"$java" -XX:-PreserveFramePointer -Djetty.home=/usr/share/jetty9 -Djetty.base=/opt/jb \
		-jar /usr/share/jetty9/start.jar --module=deploy,http "jetty.http.port=$port"
	fs_runc_run "$name" "$dir"
	fs_wait_for 90 curl -sf -o /dev/null "http://127.0.0.1:$port/" || {
		cat "$dir/out.log" >&2
		return 1
	}
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
	PID=$(fs_container_pid "$name")
}

@test "unwind: JDK 17 without PreserveFramePointer: whole Java stacks" {
	needs_jvm "$JAVA17"
	whole_stacks "JDK 17" "$JAVA17"
}

@test "unwind: JDK 25 without PreserveFramePointer: whole Java stacks" {
	needs_jvm "$JAVA25"
	whole_stacks "JDK 25" "$JAVA25"
}

@test "unwind: an -Xint JVM shows its methods as interpreted frames _[0]" {
	needs_jvm "$JAVA17"
	local name="unwind-$$-$BATS_TEST_NUMBER"
	start_jvm "$name" "$JAVA17" -Xint -XX:-PreserveFramePointer -- --threads 1 --warmup 1
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" -d 3s -F 199 -o x.svg
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q 'flametest\.Workload\.hotMethod_\[0\]' x.folded
	local interp all
	interp=$(awk '/_\[0\]/ { s += $NF } END { print s + 0 }' x.folded)
	all=$(awk '/;(flametest|java)\./ || /_\[0\]/ { s += $NF } END { print s + 0 }' x.folded)
	echo "# -Xint: $interp of $all Java samples with interpreted frames named" >&3
	[ "$interp" -ge $((all * 9 / 10)) ]
	! grep -q ';Interpreter;' x.folded || false
}

@test "unwind: --unwind hotspot names interpreted frames of a JVM with frame pointers" {
	needs_jvm "$JAVA17"
	local name="unwind-$$-$BATS_TEST_NUMBER"
	start_jvm "$name" "$JAVA17" -Xint -XX:+PreserveFramePointer -- --threads 1 --warmup 1
	cd "$OUT"
	# a small copy: what it holds is named, the rest comes from the kernel's chain
	run "$FS_SIDECAR" run "$name" -d 2s -F 199 -o h.svg --unwind hotspot --stack-copy 1024
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(with frame pointers): hotspot"* ]]
	grep -q 'flametest\.Workload\.hotMethod_\[0\]' h.folded
	local pct total
	read -r pct total < <(whole_pct h.folded)
	echo "# frame pointers + 1 KiB copies: $pct% of $total Java samples reach the thread's base" >&3
	[ "$pct" -ge 90 ]
}

@test "unwind: --unwind fp keeps the kernel's chains (no stack copies)" {
	needs_jvm "$JAVA17"
	local name="unwind-$$-$BATS_TEST_NUMBER"
	start_jvm "$name" "$JAVA17" -XX:-PreserveFramePointer -- --threads 1 --warmup 1
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" -d 1s -F 99 -o f.svg --unwind fp
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"frame pointers (no hotspot unwinder: --unwind fp)"* ]]
	[[ "$output" != *"stack copies"* ]]
}

# jetty_whole LABEL JAVA: Debian's jetty9 under wrk load, no frame pointers,
# >= 90% whole stacks.
jetty_whole() {
	needs_jvm "$2"
	fs_require_cmd wrk curl
	[ -f /usr/share/jetty9/start.jar ] || skip "jetty9 is not installed"
	local name="unwind-$$-$BATS_TEST_NUMBER" port=$((20000 + ($$ * 8 + BATS_TEST_NUMBER) % 10000))
	start_jetty "$name" "$2" "$port"
	wrk -t1 -c16 -d5s "http://127.0.0.1:$port/" >/dev/null # warm up: JIT compiles
	wrk -t1 -c16 -d"${FS_UNWIND_LOAD_SECONDS:-8}s" "http://127.0.0.1:$port/" >"$OUT/wrk.txt" &
	local wrkpid=$!
	cd "$OUT"
	# shellcheck disable=SC2086 # FS_UNWIND_RUN_ARGS: other windows for measurements
	run ${FS_UNWIND_WRAP:-} "$FS_SIDECAR" run "$name" ${FS_UNWIND_RUN_ARGS:--d 5s -F 199} -o j.svg ${FS_UNWIND_STACK_COPY:+--stack-copy "$FS_UNWIND_STACK_COPY"}
	wait "$wrkpid" || true
	[ -z "${FS_UNWIND_KEEP:-}" ] || cp j.folded "$FS_UNWIND_KEEP/jetty-${1// /}.folded"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(without frame pointers): hotspot"* ]]
	local pct total
	read -r pct total < <(whole_pct j.folded)
	echo "# jetty9 $1: $pct% of $total Java samples reach the thread's base" >&3
	echo "# $(grep -o 'hotspot, .*' <<<"$output" | head -1)" >&3
	[ "$total" -gt 50 ]
	[ "$pct" -ge 90 ]
	grep -q 'org\.eclipse\.jetty\.' j.folded
}

@test "unwind: Debian's jetty9 under load on JDK 17 without PreserveFramePointer: whole stacks" {
	jetty_whole "JDK 17" "$JAVA17"
}

@test "unwind: Debian's jetty9 under load on JDK 25 without PreserveFramePointer: whole stacks" {
	jetty_whole "JDK 25" "$JAVA25"
}

@test "unwind: a C1-only JVM shows its compiled methods marked _[1]" {
	needs_jvm "$JAVA17"
	local name="unwind-$$-$BATS_TEST_NUMBER"
	start_jvm "$name" "$JAVA17" -XX:TieredStopAtLevel=1 -XX:-PreserveFramePointer -- --threads 1 --warmup 1
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" -d 2s -F 199 -o c1.svg
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q 'flametest\.Workload\.hotMethod_\[1\]' c1.folded
	local pct total
	read -r pct total < <(whole_pct c1.folded)
	echo "# C1 only: $pct% of $total Java samples reach the thread's base" >&3
	[ "$pct" -ge 90 ]
}

@test "unwind: a JVM without frame pointers that starts during the window gets the unwinder" {
	needs_jvm "$JAVA17"
	local name="unwind-$$-$BATS_TEST_NUMBER" dir
	dir="$FS_TMP/$name"
	CTRS+=("$name")
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true --mount "$FS_BUILD/java:/opt/fsjava" -- /bin/sh -c \
		"until [ -p /tmp/go ]; do sleep 0.05; done; read -r _ </tmp/go; exec $JAVA17 -XX:-PreserveFramePointer -cp /opt/fsjava flametest.Workload --threads 1 --warmup 1"
	fs_runc_run "$name" "$dir"
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
	PID=$(fs_container_pid "$name")
	mkfifo "/proc/$PID/root/tmp/go"
	cd "$OUT"
	"$FS_SIDECAR" run "$name" -d 8s -F 199 -o late.svg >late.out 2>late.err &
	local runpid=$!
	# the window is open (its first line is on stderr): start the JVM
	fs_wait_for 10 grep -q recording late.err
	timeout 10 sh -c "echo go >/proc/$PID/root/tmp/go"
	wait "$runpid"
	cat late.out late.err
	grep -q "unwinder   pid $PID (without frame pointers): hotspot" late.out
	grep -q "unwind     stack copies" late.out
	local pct total
	read -r pct total < <(whole_pct late.folded)
	echo "# started during the window: $pct% of $total Java samples reach the thread's base" >&3
	[ "$pct" -ge 80 ]
}

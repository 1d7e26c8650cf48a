#!/usr/bin/env bats
# Finding a container's processes (lib/ctprocs.c) from its cgroup v2
# subtree instead of every host process: a JVM of the container moved into
# a child cgroup is still found; a host JVM that joined the container's pid
# namespace only (nsenter -p), and a host JVM moved into the container's
# cgroup only, are not; and the /proc/<pid> entries `map` touches do not
# grow with the number of host processes (counted with strace).

load ../lib/containers

setup() {
	fs_require_root
	fs_require_cmd runc jq strace nsenter
	[ -x "$JAVA17" ] || skip "openjdk-17 is not installed"
	[ -d "$FS_BUILD/java/flametest" ] || skip "the Java workloads are not built (make agent)"
	fs_setup
	NAME=fsct$$-$BATS_TEST_NUMBER
	: >"$FS_TMP/jvm-pids"
	HOSTPIDS=()
	INNER=""
}

teardown() {
	[ -n "${FS_TMP:-}" ] || return 0
	local p
	for p in "${HOSTPIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${HOSTPIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	while read -r p; do
		[ -n "$p" ] && rm -f "/tmp/perf-$p.map"
	done <"$FS_TMP/jvm-pids"
	fs_cleanup
	# the child cgroup this test made (runc removed the container's)
	[ -z "$INNER" ] || rmdir "$INNER" "$(dirname "$INNER")" 2>/dev/null || true
}

# cgroup_dir PID: the host path of PID's cgroup v2 directory, or skip.
cgroup_dir() {
	local base=/sys/fs/cgroup/unified cg
	[ "$(stat -f -c %T "$base" 2>/dev/null)" = cgroup2fs ] || base=/sys/fs/cgroup
	[ "$(stat -f -c %T "$base")" = cgroup2fs ] || skip "no cgroup v2 hierarchy on this host"
	cg=$(awk -F: '$1 == "0" {print $3}' "/proc/$1/cgroup")
	[ -n "$cg" ] && [ "$cg" != / ] || skip "the container is in the root cgroup v2"
	echo "$base$cg"
}

# proc_entries FILE: how many distinct /proc/<pid> directories a trace names.
proc_entries() {
	grep -oE '"/proc/[0-9]+/' "$1" | sort -u | wc -l
}

map_line() {
	awk -v p="$1" '$1 == p {print $1, $2, $3, $4}' <<<"$output"
}

@test "a JVM in a child cgroup of its container is found; host JVMs in its pid namespace only, or its cgroup only, are not" {
	fs_start_jvm "$NAME" -- --warmup 0.5
	echo "$PID" >>"$FS_TMP/jvm-pids"
	local cg
	cg=$(cgroup_dir "$PID")
	INNER=$cg/inner
	mkdir "$INNER"
	echo "$PID" >"$INNER/cgroup.procs"
	grep -q "^0::.*/inner$" "/proc/$PID/cgroup"
	# A host JVM in the container's pid namespace (not its cgroup): nsenter
	# forks it there; the JVM is nsenter's child.
	nsenter -t "$PID" -p -- env --default-signal=QUIT "$JAVA17" -XX:+PreserveFramePointer \
		-cp "$FS_BUILD/java" flametest.Workload --exit-after 120 --warmup 0.5 \
		>"$FS_TMP/nsjvm.out" 2>&1 3>&- &
	HOSTPIDS+=($!)
	# A host JVM moved into the container's cgroup (not its pid namespace).
	fs_host_jvm "$JAVA_HOME_17" "$FS_TMP/cgjvm.out" -- --warmup 0.5
	HOSTPIDS+=("$PID")
	local cgjvm=$PID
	PID=$(head -1 "$FS_TMP/jvm-pids")
	echo "$cgjvm" >>"$FS_TMP/jvm-pids"
	fs_wait_for 60 fs_ready_lines "$FS_TMP/nsjvm.out" 1
	fs_wait_for 60 fs_ready_lines "$FS_TMP/cgjvm.out" 1
	local nsjvm
	nsjvm=$(pgrep -P "${HOSTPIDS[0]}")
	echo "$nsjvm" >>"$FS_TMP/jvm-pids"
	[ "$(stat -L -c %i "/proc/$nsjvm/ns/pid")" = "$(stat -L -c %i "/proc/$PID/ns/pid")" ]
	echo "$cgjvm" >"$cg/cgroup.procs"
	run "$FS_SIDECAR" map "$NAME"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(map_line "$PID")" = "$PID 1 1000 agent" ]
	[ -z "$(map_line "$nsjvm")" ]
	[ -z "$(map_line "$cgjvm")" ]
	[ "$(grep -cE '^[0-9]+ ' <<<"$output")" -eq 1 ]
}

@test "the /proc entries map reads do not grow with the number of host processes" {
	fs_make_bundle "$FS_TMP/$NAME" --annotate flamesidecar.io/enable=true -- /bin/sleep 600
	fs_runc_run "$NAME" "$FS_TMP/$NAME"
	fs_wait_for 10 test -f "$FS_RUN/containers/$NAME.json"
	cgroup_dir "$(fs_container_pid "$NAME")" >/dev/null
	run strace -f -qq -e trace=%file -o "$FS_TMP/trace0" "$FS_SIDECAR" map "$NAME"
	echo "$output"
	[ "$status" -eq 3 ] # no JVM in it
	local before after i
	before=$(proc_entries "$FS_TMP/trace0")
	for ((i = 0; i < 500; i++)); do
		sleep 300 3>&- &
		HOSTPIDS+=($!)
	done
	run strace -f -qq -e trace=%file -o "$FS_TMP/trace1" "$FS_SIDECAR" map "$NAME"
	[ "$status" -eq 3 ]
	after=$(proc_entries "$FS_TMP/trace1")
	echo "/proc/<pid> entries: $before, with 500 more host processes $after"
	[ "$before" -ge 1 ]
	[ "$after" -le $((before + 2)) ]
}

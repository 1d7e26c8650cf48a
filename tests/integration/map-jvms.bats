#!/usr/bin/env bats
# flamesidecar map against the JVMs and containers map.bats does not cover:
# Podman, a root JVM, a JVM that is not pid 1, two JVMs in one container, a
# JRE-only image (jlink'ed, no jcmd, no jdk.attach), every JDK under
# /usr/lib/jvm, and --continuous. Each test asserts that map succeeds and
# that /tmp/perf-<host pid>.map names flametest.Workload.hotMethod; where it
# is cheap, that perf report names it too.

load ../lib/containers

setup() {
	fs_needs_jvm
	[ -f "$FS_BUILD/libflameagent.so" ] || skip "libflameagent.so is not built"
	fs_test_setup fsm
	: >"$FS_TMP/jvm-pids"
}

teardown() {
	fs_cleanup
}

# ns_java_pids PID: host pids of the java processes in PID's pid namespace,
# ascending; each is recorded for teardown.
ns_java_pids() {
	local ns p
	ns=$(stat -L -c %i "/proc/$1/ns/pid")
	for p in /proc/[0-9]*; do
		[ "$(stat -L -c %i "$p/ns/pid" 2>/dev/null)" = "$ns" ] || continue
		[ "$(cat "$p/comm" 2>/dev/null)" = java ] || continue
		echo "${p#/proc/}"
	done | sort -n | tee -a "$FS_TMP/jvm-pids"
}

# ns_pid HOST_PID: its pid in its own (innermost) pid namespace.
ns_pid() {
	awk '/^NSpid:/ {print $NF}' "/proc/$1/status"
}

# assert_mapped HOST_PID: the host map is ours and names the hot method.
assert_mapped() {
	local m=/tmp/perf-$1.map
	if [ ! -f "$m" ] || [ -L "$m" ]; then echo "$m is missing"; return 1; fi
	[ "$(stat -c %u "$m")" = 0 ] || { echo "$m is not root's"; return 1; }
	grep -q 'flametest\.Workload\.hotMethod' "$m" || { echo "$m lacks hotMethod"; return 1; }
}

# assert_perf_names HOST_PID [METHOD]: perf record + report name METHOD
# (default hotMethod) from the host map alone (the container's own map is
# removed first, so a continuous agent session stops being readable there).
assert_perf_names() {
	command -v perf >/dev/null || skip "perf is not installed (linux-perf): perf report cannot be checked"
	local method=${2:-hotMethod} rep
	rm -f "/proc/$1/root/tmp/perf-$(ns_pid "$1").map"
	perf record -q -F 499 -g -p "$1" -o "$FS_TMP/perf.data" -- sleep 1.5 >/dev/null 2>&1
	rep=$(perf report -i "$FS_TMP/perf.data" --stdio --no-children 2>/dev/null)
	if [[ "$rep" != *flametest.Workload.$method* ]]; then
		echo "perf report does not name $method:"
		head -40 <<<"$rep"
		return 1
	fi
}

# not COMMAND...: succeeds when it fails (unlike `!`, which set -e ignores).
not() {
	if "$@"; then return 1; fi
}

# The map output line of HOST_PID, its first fields: "HOST_PID NS_PID UID MODE".
map_line() {
	awk -v p="$1" '$1 == p {print $1, $2, $3, $4}' <<<"$output"
}

@test "podman (hooks.d, uid 1000): map <container id> writes the host map" {
	fs_require_cmd podman
	mkdir -p "$FS_TMP/hooks.d"
	local f
	# shellcheck disable=SC2153 # FS_TOP comes from tests/run-tests.sh
	for f in "$FS_TOP"/config/hooks.d/*.json.in; do
		jq --arg h "$FS_HOOK" --arg c "$FS_CONFIG" \
			'.hook.path = $h | .hook.args = ["flamehook", "--config", $c, .hook.args[-1]]' \
			"$f" >"$FS_TMP/hooks.d/$(basename "$f" .in)"
	done
	mkdir -p "$FS_TMP/prootfs"/{tmp,usr,etc,opt/fsjava}
	chmod 1777 "$FS_TMP/prootfs/tmp"
	for f in bin lib lib64 sbin; do ln -s "usr/$f" "$FS_TMP/prootfs/$f"; done
	echo "podman $NAME" >>"$FS_TMP/containers" # fs_cleanup removes it
	cid=$(podman --runtime runc --cgroup-manager=cgroupfs --hooks-dir "$FS_TMP/hooks.d" run -d \
		--name "$NAME" --annotation flamesidecar.io/enable=true --user 1000:1000 \
		--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
		-v /usr:/usr:ro -v /etc:/etc:ro -v "$FS_BUILD/java:/opt/fsjava:ro" \
		-e HOME=/tmp -e JAVA_TOOL_OPTIONS= --rootfs "$FS_TMP/prootfs" \
		"$JAVA17" -XX:+PreserveFramePointer -cp /opt/fsjava flametest.Workload --warmup 0.5)
	fs_wait_for 30 sh -c "podman logs '$NAME' 2>/dev/null | grep -q READY" || {
		podman logs "$NAME" >&2
		return 1
	}
	fs_wait_for 10 test -f "$FS_RUN/containers/$cid.json"
	pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	echo "$pid" >>"$FS_TMP/jvm-pids"
	run "$FS_SIDECAR" map "$cid"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(map_line "$pid")" = "$pid 1 1000 agent" ]
	assert_mapped "$pid"
	# A unique prefix of the id works too, in jcmd mode.
	rm -f "/tmp/perf-$pid.map"
	run "$FS_SIDECAR" map "${cid:0:12}" --mode jcmd
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(map_line "$pid")" = "$pid 1 1000 jcmd" ]
	assert_mapped "$pid"
	assert_perf_names "$pid"
}

@test "a JVM running as root (uid 0) is mapped by a root sandbox with no capabilities" {
	fs_needs_test_sidecar
	fs_start_jvm "$NAME" --ready 1 --uid 0 -- --warmup 0.5
	[ "$(awk '/^Uid:/ {print $3}' "/proc/$PID/status")" = 0 ]
	echo "$PID" >>"$FS_TMP/jvm-pids"
	mkdir -p "$FS_TMP/status"
	FS_TEST_SANDBOX_STATUS="$FS_TMP/status" run "$FS_TEST_SIDECAR" map "$NAME"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(map_line "$PID")" = "$PID 1 0 agent" ]
	assert_mapped "$PID"
	# The container map is root's, as the JVM is.
	[ "$(stat -c %u "/proc/$PID/root/tmp/perf-1.map")" = 0 ]
	s="$FS_TMP/status/status.$PID"
	cat "$s"
	grep -qP '^Uid:\t0\t0\t0\t0$' "$s"
	grep -qP '^CapEff:\t0000000000000000$' "$s"
	grep -qP '^CapPrm:\t0000000000000000$' "$s"
	grep -qP '^CapBnd:\t0000000000000000$' "$s"
	grep -qP '^NoNewPrivs:\t1$' "$s"
	grep -qP '^Seccomp:\t2$' "$s"
	run "$FS_SIDECAR" map "$NAME" --mode jcmd
	[ "$status" -eq 0 ]
	assert_mapped "$PID"
	assert_perf_names "$PID"
}

@test "a JVM that is not pid 1 (background job of sh, SIGQUIT inherited ignored) is mapped" {
	# A non-interactive shell starts background jobs with SIGQUIT ignored;
	# HotSpot (without -Xrs) installs its handler anyway.
	fs_start_jvm "$NAME" --ready 1 --wrap '"$@" & wait' -- --warmup 0.5
	jpids=$(ns_java_pids "$PID")
	[ "$(wc -w <<<"$jpids")" = 1 ]
	jvm=$jpids
	[ "$jvm" != "$PID" ]
	[ "$(ns_pid "$jvm")" != 1 ]
	grep -q '^SigCgt:.*[4-7cdef]$' "/proc/$jvm/status"
	run "$FS_SIDECAR" map "$NAME"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^[0-9]' <<<"$output")" = 1 ]
	[ "$(map_line "$jvm")" = "$jvm $(ns_pid "$jvm") 1000 agent" ]
	assert_mapped "$jvm"
	[ ! -e "/tmp/perf-$PID.map" ]
	# The shell is not a JVM: --pid of it is refused as "no JVM".
	run "$FS_SIDECAR" map "$NAME" --pid "$PID"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"pid $PID is not a JVM"* ]]
	[ ! -e "/tmp/perf-$PID.map" ]
	assert_perf_names "$jvm"
}

@test "two JVMs in one container: map maps both, --pid picks one" {
	# Workload --spawn-child starts a second JVM as its own child.
	fs_start_jvm "$NAME" --ready 2 -- --warmup 0.5 --spawn-child
	jpids=$(ns_java_pids "$PID")
	echo "JVMs: $jpids"
	[ "$(wc -w <<<"$jpids")" = 2 ]
	a=$(head -1 <<<"$jpids")
	b=$(tail -1 <<<"$jpids")
	run "$FS_SIDECAR" map "$NAME"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^[0-9]' <<<"$output")" = 2 ]
	[ "$(map_line "$a")" = "$a $(ns_pid "$a") 1000 agent" ]
	[ "$(map_line "$b")" = "$b $(ns_pid "$b") 1000 agent" ]
	assert_mapped "$a"
	assert_mapped "$b"
	# Each map is its own JVM's: the child's map is not the parent's.
	run cmp -s "/tmp/perf-$a.map" "/tmp/perf-$b.map"
	[ "$status" -ne 0 ]
	rm -f "/tmp/perf-$a.map" "/tmp/perf-$b.map"
	run "$FS_SIDECAR" map "$NAME" --pid "$b" --mode jcmd
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^[0-9]' <<<"$output")" = 1 ]
	[ "$(map_line "$b")" = "$b $(ns_pid "$b") 1000 jcmd" ]
	assert_mapped "$b"
	[ ! -e "/tmp/perf-$a.map" ]
	assert_perf_names "$b"
}

@test "two JVMs of different users, one refusing attach: the other is still mapped, exit 1" {
	# A root shell starts JVM a as uid 1001, and JVM b as root with attach
	# disabled. Each is attached to as its own user.
	# shellcheck disable=SC2016 # the script's $1 and $@ are the shell's
	fs_start_jvm "$NAME" --ready 2 --uid 0 --cap CAP_SETUID --cap CAP_SETGID --wrap 'j=$1; shift
		setpriv --reuid 1001 --regid 1001 --clear-groups "$j" "$@" &
		"$j" -XX:+DisableAttachMechanism "$@" &
		wait' -- --warmup 0.5
	jpids=$(ns_java_pids "$PID")
	[ "$(wc -w <<<"$jpids")" = 2 ]
	local p a="" b=""
	for p in $jpids; do
		case $(awk '/^Uid:/ {print $3}' "/proc/$p/status") in
		1001) a=$p ;;
		0) b=$p ;;
		esac
	done
	[ -n "$a" ] && [ -n "$b" ]
	run "$FS_SIDECAR" map "$NAME" --timeout 3000
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$(map_line "$a")" = "$a $(ns_pid "$a") 1001 agent" ]
	assert_mapped "$a"
	[ "$(stat -c %u "/proc/$a/root/tmp/perf-$(ns_pid "$a").map")" = 1001 ]
	[[ "$output" == *"pid $b"*"-XX:+DisableAttachMechanism"* ]]
	[ ! -e "/tmp/perf-$b.map" ]
	if compgen -G "/proc/$b/root/tmp/.attach_pid*" >/dev/null; then
		echo ".attach_pid left behind"
		return 1
	fi
}

@test "a JRE-only image (jlink'ed java.base+java.management, no jcmd, no jdk.attach) is mapped in both modes" {
	[ -x "$JAVA_HOME_17/bin/jlink" ] || skip "jlink is not installed"
	"$JAVA_HOME_17/bin/jlink" --add-modules java.base,java.management --strip-debug \
		--no-header-files --no-man-pages --output "$FS_TMP/jre"
	# The image: the jlink'ed runtime at /opt/jre and no JDK anywhere
	# (/usr/lib/jvm hidden, so /usr/bin/java and jcmd dangle).
	fs_start_jvm "$NAME" --ready 1 --java /opt/jre/bin/java --mount "$FS_TMP/jre:/opt/jre" \
		--hide /usr/lib/jvm -- --warmup 0.5
	echo "$PID" >>"$FS_TMP/jvm-pids"
	run runc exec "$NAME" /opt/jre/bin/java --list-modules
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *java.base* ]]
	[[ "$output" != *jdk.attach* && "$output" != *jdk.jcmd* ]]
	[ ! -e "$FS_TMP/jre/bin/jcmd" ] && [ ! -e "$FS_TMP/jre/lib/libattach.so" ]
	run runc exec "$NAME" sh -c 'jcmd -h || ls /usr/lib/jvm/*/bin/jcmd'
	[ "$status" -ne 0 ]
	grep -q /opt/jre/lib/server/libjvm.so "/proc/$PID/maps"
	run "$FS_SIDECAR" map "$NAME"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(map_line "$PID")" = "$PID 1 1000 agent" ]
	assert_mapped "$PID"
	# Compiler.perfmap is a VM diagnostic command: no jdk.jcmd needed.
	rm -f "/tmp/perf-$PID.map"
	run "$FS_SIDECAR" map "$NAME" --mode jcmd
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(map_line "$PID")" = "$PID 1 1000 jcmd" ]
	assert_mapped "$PID"
	assert_perf_names "$PID"
}

# java_major JAVA: the feature release of that java (8 for 1.8).
java_major() {
	"$1" -XshowSettings:properties -version 2>&1 |
		awk -F' = ' '/^ *java\.specification\.version/ {v = $2; sub(/^1\./, "", v); print v}'
}

@test "every JDK under /usr/lib/jvm: agent, jcmd (JDK 17+) and --continuous map name the hot method" {
	local seen="" java real n=0 major
	for java in /usr/lib/jvm/*/bin/java /usr/lib/jvm/*/jre/bin/java; do
		[ -x "$java" ] || continue
		real=$(realpath "$java")
		[[ " $seen " == *" $real "* ]] && continue
		seen="$seen $real"
		n=$((n + 1))
		major=$(java_major "$real")
		echo "# $real: JDK $major"
		fs_start_jvm "$NAME-$n" --ready 1 --java "$real" -- --warmup 0.5
		echo "$PID" >>"$FS_TMP/jvm-pids"
		run "$FS_SIDECAR" map "$NAME-$n"
		echo "$output"
		[ "$status" -eq 0 ]
		[ "$(map_line "$PID")" = "$PID 1 1000 agent" ]
		assert_mapped "$PID"
		rm -f "/tmp/perf-$PID.map"
		run "$FS_SIDECAR" map "$NAME-$n" --mode jcmd
		echo "$output"
		if [ "$major" -ge 17 ]; then
			[ "$status" -eq 0 ]
			assert_mapped "$PID"
		else
			[ "$status" -ne 0 ]
			[[ "$output" == *"no 'Compiler.perfmap'"* ]]
		fi
		# After a oneshot load: --continuous stops nothing, starts a session;
		# a second one stops and restarts it.
		for _ in 1 2; do
			rm -f "/tmp/perf-$PID.map"
			run "$FS_SIDECAR" map "$NAME-$n" --continuous
			echo "$output"
			[ "$status" -eq 0 ]
			assert_mapped "$PID"
		done
		runc kill "$NAME-$n" KILL
	done
	[ "$n" -gt 0 ] || skip "no JDK under /usr/lib/jvm"
	echo "# $n JDK(s) tested"
}

@test "map --continuous: methods compiled later reach the container map, and the host map on the next run" {
	# lateCompiledMethod is first called 8 s after start (READY comes at 0.5 s).
	fs_start_jvm "$NAME" --ready 1 -- --warmup 0.5 --late-compile 8
	echo "$PID" >>"$FS_TMP/jvm-pids"
	local cmap=/proc/$PID/root/tmp/perf-1.map
	run "$FS_SIDECAR" map "$NAME" --continuous
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(map_line "$PID")" = "$PID 1 1000 agent" ]
	assert_mapped "$PID"
	if grep -q LATE-COMPILE "$FS_TMP/$NAME/out.log"; then
		skip "too slow: the late method started before map returned"
	fi
	not grep -q lateCompiledMethod "/tmp/perf-$PID.map"
	fs_wait_for 30 grep -q LATE-COMPILE "$FS_TMP/$NAME/out.log"
	# The agent appends it to the container's map as soon as it is compiled.
	fs_wait_for 30 grep -q 'flametest\.Workload\.lateCompiledMethod' "$cmap"
	not grep -q lateCompiledMethod "/tmp/perf-$PID.map"
	# A second run (the session is already running) refreshes the host map.
	run "$FS_SIDECAR" map "$NAME" --continuous
	echo "$output"
	[ "$status" -eq 0 ]
	assert_mapped "$PID"
	grep -q 'flametest\.Workload\.lateCompiledMethod' "/tmp/perf-$PID.map"
	# So does a oneshot run; the continuous session goes on appending after it.
	run "$FS_SIDECAR" map "$NAME"
	[ "$status" -eq 0 ]
	grep -q 'flametest\.Workload\.lateCompiledMethod' "/tmp/perf-$PID.map"
	assert_perf_names "$PID" lateCompiledMethod
}

#!/usr/bin/env bats
# agent.bats - libflameagent.so, our JVMTI perf-map agent, in real JVMs on the
# host: loaded at startup (-agentpath) and by attach (jcmd JVMTI.agent_load).
#
# JVMs are started through `env --default-signal=QUIT`: a background job of
# a non-interactive shell inherits SIGQUIT ignored, and HotSpot then never
# starts its attach listener. env execs java, so $! is the JVM's pid.
# Every JVM started here is killed (and its map removed) in teardown.

: "${FS_TOP:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
: "${FS_BUILD:=$FS_TOP/build}"
AGENT="$FS_BUILD/libflameagent.so"
JDK17=${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}

load ../lib/containers

setup() {
	[ -f "$AGENT" ] || skip "$AGENT is not built (make agent)"
	[ -f "$FS_BUILD/java/flametest/Workload.class" ] || skip "the Java workloads are not built (make agent)"
	[ -x "$JDK17/bin/java" ] || skip "no JDK 17 at $JDK17"
	JVM_PIDS=()
}

teardown() {
	local p
	for p in "${JVM_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		rm -f "/tmp/perf-$p.map"
	done
}

has_line() { grep -q -- "$2" "$1" 2>/dev/null; }

wait_ready() {
	fs_wait_for 60 has_line "$1" '^READY$' || { cat "$1" >&2; return 1; }
}

# map_valid FILE: every line is "START SIZE name" (lowercase hex, no 0x,
# size not 0, a name), and the file ends with a newline.
map_valid() {
	local f=$1
	[ -s "$f" ] || { echo "$f is empty" >&2; return 1; }
	if grep -nvE '^[0-9a-f]+ [0-9a-f]*[1-9a-f][0-9a-f]* [^ ].*$' "$f" | head -5 | grep .; then
		echo "$f has malformed lines (above)" >&2
		return 1
	fi
	[ "$(tail -c1 "$f" | od -An -tx1 | tr -d ' ')" = 0a ] || { echo "$f: no final newline" >&2; return 1; }
}

# attach JDK PID OPTIONS: jcmd JVMTI.agent_load; fails unless return code 0.
attach() {
	run "$1/bin/jcmd" "$2" JVMTI.agent_load "$AGENT" "$3"
	echo "$output"
	[ "$status" -eq 0 ] && [[ "$output" == *"return code: 0"* ]]
}

@test "agent: startup, continuous: the hot method with dotted names, valid lines" {
	fs_host_jvm "$JDK17" "$BATS_TEST_TMPDIR/out" "-agentpath:$AGENT=mode=continuous"
	JVM_PIDS+=("$PID")
	wait_ready "$BATS_TEST_TMPDIR/out"
	map=/tmp/perf-$PID.map
	fs_wait_for 20 has_line "$map" ' flametest\.Workload\.hotMethod$'
	map_valid "$map"
	# the interpreter and stubs come from DynamicCodeGenerated
	grep -q ' Interpreter$' "$map"
	grep -q ' call_stub$' "$map"
	# default is unfoldall: inlined chains joined by ->, outermost first
	grep -qE ' [A-Za-z0-9_.$]+\.[A-Za-z0-9_$<>]+->[A-Za-z]' "$map"
	# no JVM-internal class signatures in the default, dotted form
	! grep -qE ' L[a-z]+/[A-Za-z/]+;' "$map" || false
	# map is 0644 and owned by us
	[ "$(stat -c %a:%u "$map")" = "644:$(id -u)" ]
	# nothing from the agent on the JVM's stderr
	! grep -q flameagent "$BATS_TEST_TMPDIR/out" || false
}

@test "agent: continuous: a method compiled late is appended while running" {
	fs_host_jvm "$JDK17" "$BATS_TEST_TMPDIR/out" "-agentpath:$AGENT=mode=continuous" -- --late-compile 4
	JVM_PIDS+=("$PID")
	wait_ready "$BATS_TEST_TMPDIR/out"
	map=/tmp/perf-$PID.map
	fs_wait_for 20 has_line "$map" 'flametest\.Workload\.hotMethod'
	cp "$map" "$BATS_TEST_TMPDIR/before"
	if ! grep -q LATE-COMPILE "$BATS_TEST_TMPDIR/out"; then
		# the snapshot predates the first call of lateCompiledMethod
		! grep -q lateCompiledMethod "$BATS_TEST_TMPDIR/before" || false
	fi
	fs_wait_for 30 has_line "$map" ' flametest\.Workload\.lateCompiledMethod$'
	map_valid "$map"
	# appended, not rewritten: the old content is a prefix of the new
	cmp -n "$(stat -c %s "$BATS_TEST_TMPDIR/before")" "$BATS_TEST_TMPDIR/before" "$map"
}

@test "agent: attach, oneshot (jcmd JVMTI.agent_load): complete map, file closed" {
	fs_host_jvm "$JDK17" "$BATS_TEST_TMPDIR/out"
	JVM_PIDS+=("$PID")
	wait_ready "$BATS_TEST_TMPDIR/out"
	map=/tmp/perf-$PID.map
	echo "stale garbage" >"$map"
	attach "$JDK17" "$PID" oneshot
	# complete when jcmd returns: no polling
	grep -q ' flametest\.Workload\.hotMethod$' "$map"
	grep -q ' Interpreter$' "$map"
	! grep -q 'stale garbage' "$map" || false
	map_valid "$map"
	# one dump: every start address once
	[ -z "$(cut -d' ' -f1 "$map" | sort | uniq -d)" ]
	# the JVM no longer holds the map open
	! ls -l "/proc/$PID/fd" | grep -q "perf-$PID.map" || false
	# attach is also the default mode when loaded by attach
	attach "$JDK17" "$PID" ""
	grep -q ' flametest\.Workload\.hotMethod$' "$map"
}

@test "agent: options change the names (msig, nodottedclass, sourcepos, unfold*)" {
	fs_host_jvm "$JDK17" "$BATS_TEST_TMPDIR/out"
	JVM_PIDS+=("$PID")
	wait_ready "$BATS_TEST_TMPDIR/out"
	map=/tmp/perf-$PID.map

	attach "$JDK17" "$PID" oneshot,msig
	grep -q ' flametest\.Workload\.hotMethod(long)$' "$map"

	attach "$JDK17" "$PID" oneshot,nodottedclass,msig
	grep -q ' Lflametest/Workload;::hotMethod(J)J$' "$map"

	attach "$JDK17" "$PID" oneshot,sourcepos
	grep -qE ' flametest\.Workload\.hotMethod\(Workload\.java:[0-9]+\)$' "$map"

	attach "$JDK17" "$PID" oneshot
	grep -q -- '->' "$map"
	attach "$JDK17" "$PID" oneshot,nounfold
	! grep -q -- '->' "$map" || false
	grep -q ' flametest\.Workload\.hotMethod$' "$map"
	attach "$JDK17" "$PID" oneshot,unfoldsimple
	! grep -q -- '->' "$map" || false
	attach "$JDK17" "$PID" oneshot,unfold
	grep -qE ' [^ ]+ in [^ ]+$' "$map"
	map_valid "$map"

	# verbose reports on the JVM's stderr; quiet otherwise
	! grep -q 'code events' "$BATS_TEST_TMPDIR/out" || false
	attach "$JDK17" "$PID" oneshot,verbose
	grep -qE "oneshot: [1-9][0-9]* code events, [0-9]+ bytes to /tmp/perf-$PID.map in [0-9.]+ ms" \
		"$BATS_TEST_TMPDIR/out"
}

@test "agent: attach continuous, then stop closes the map" {
	fs_host_jvm "$JDK17" "$BATS_TEST_TMPDIR/out" -- --late-compile 3
	JVM_PIDS+=("$PID")
	wait_ready "$BATS_TEST_TMPDIR/out"
	map=/tmp/perf-$PID.map
	attach "$JDK17" "$PID" continuous
	grep -q ' flametest\.Workload\.hotMethod$' "$map"
	ls -l "/proc/$PID/fd" | grep -q "perf-$PID.map"
	fs_wait_for 30 has_line "$map" ' flametest\.Workload\.lateCompiledMethod$'
	# a second continuous session is refused
	! attach "$JDK17" "$PID" continuous || false
	grep -q 'already running' "$BATS_TEST_TMPDIR/out"
	attach "$JDK17" "$PID" stop
	! ls -l "/proc/$PID/fd" | grep -q "perf-$PID.map" || false
	map_valid "$map"
	# stop is idempotent, and a new session can start afterwards
	attach "$JDK17" "$PID" stop
	attach "$JDK17" "$PID" continuous
	attach "$JDK17" "$PID" stop
}

@test "agent: refuses file=, unknown options, a symlinked or foreign map" {
	fs_host_jvm "$JDK17" "$BATS_TEST_TMPDIR/out"
	JVM_PIDS+=("$PID")
	wait_ready "$BATS_TEST_TMPDIR/out"
	map=/tmp/perf-$PID.map

	! attach "$JDK17" "$PID" file=/tmp/x || false
	grep -q "option 'file=' is not supported" "$BATS_TEST_TMPDIR/out"
	! attach "$JDK17" "$PID" oneshot,bogus || false
	grep -q "unknown option 'bogus'" "$BATS_TEST_TMPDIR/out"

	echo keep >"$BATS_TEST_TMPDIR/victim"
	ln -s "$BATS_TEST_TMPDIR/victim" "$map"
	! attach "$JDK17" "$PID" oneshot || false
	[ "$(cat "$BATS_TEST_TMPDIR/victim")" = keep ]
	grep -q 'symbolic link' "$BATS_TEST_TMPDIR/out"
	rm -f "$map"

	if [ "$(id -u)" = 0 ]; then
		echo keep >"$map"
		chown 65534:65534 "$map"
		! attach "$JDK17" "$PID" oneshot || false
		[ "$(cat "$map")" = keep ]
		grep -q 'not a regular file owned by uid 0' "$BATS_TEST_TMPDIR/out"
		rm -f "$map"
	fi
	attach "$JDK17" "$PID" oneshot
	map_valid "$map"
}

@test "agent: startup with bad options warns and the JVM still runs" {
	fs_host_jvm "$JDK17" "$BATS_TEST_TMPDIR/out" "-agentpath:$AGENT=oneshot"
	JVM_PIDS+=("$PID")
	wait_ready "$BATS_TEST_TMPDIR/out"
	grep -q 'mode=oneshot needs a running JVM' "$BATS_TEST_TMPDIR/out"
	[ ! -e "/tmp/perf-$PID.map" ]
}

# Every other JDK under /usr/lib/jvm: startup and attach.
other_jdks() {
	local d seen=" $(readlink -f "$JDK17") "
	for d in /usr/lib/jvm/*/; do
		d=$(readlink -f "$d")
		[ -x "$d/bin/java" ] && [ -x "$d/bin/jcmd" ] || continue
		case "$seen" in *" $d "*) continue ;; esac
		seen="$seen$d "
		echo "$d"
	done
}

@test "agent: every other JDK under /usr/lib/jvm, at startup and by attach" {
	jdks=$(other_jdks)
	[ -n "$jdks" ] || skip "no JDK besides $JDK17 under /usr/lib/jvm"
	for jdk in $jdks; do
		echo "# $jdk" >&3
		fs_host_jvm "$jdk" "$BATS_TEST_TMPDIR/out-start" "-agentpath:$AGENT=continuous"
		JVM_PIDS+=("$PID")
		wait_ready "$BATS_TEST_TMPDIR/out-start"
		fs_wait_for 20 has_line "/tmp/perf-$PID.map" ' flametest\.Workload\.hotMethod$'
		map_valid "/tmp/perf-$PID.map"

		fs_host_jvm "$jdk" "$BATS_TEST_TMPDIR/out-attach"
		JVM_PIDS+=("$PID")
		wait_ready "$BATS_TEST_TMPDIR/out-attach"
		attach "$jdk" "$PID" oneshot
		grep -q ' flametest\.Workload\.hotMethod$' "/tmp/perf-$PID.map"
		grep -q ' Interpreter$' "/tmp/perf-$PID.map"
		map_valid "/tmp/perf-$PID.map"
	done
}

# mh_names_agree JDK: a JVM calling through method handles; for every method
# handle intrinsic (MethodHandle.invokeBasic, linkTo*) in the JVM's own
# `jcmd Compiler.perfmap`, our map names the same primitive at the same start
# address. HotSpot gives all intrinsics one jmethodID (agent/mhintrinsic.h), so
# naming them by their jmethodID says linkToStatic for most of them.
mh_names_agree() {
	local jdk=$1 out="$BATS_TEST_TMPDIR/out-${1##*/}"
	env --default-signal=QUIT "$jdk/bin/java" -cp "$FS_BUILD/java" flametest.Handles \
		--exit-after 120 >"$out" 2>&1 3>&- &
	PID=$!
	JVM_PIDS+=("$PID")
	wait_ready "$out"
	attach "$jdk" "$PID" oneshot
	cp "/tmp/perf-$PID.map" "$BATS_TEST_TMPDIR/agent.map"
	run "$jdk/bin/jcmd" "$PID" Compiler.perfmap
	[ "$status" -eq 0 ]
	cp "/tmp/perf-$PID.map" "$BATS_TEST_TMPDIR/jvm.map"
	# "0x<start> 0x<size> ret java.lang.invoke.MethodHandle.NAME(args)" ->
	# "<start> NAME" (lowercase hex without 0x, as our map writes it)
	sed -nE 's/^0x0*([0-9a-f]+) .* java\.lang\.invoke\.MethodHandle\.(invokeBasic|linkTo[A-Za-z]+)\(.*/\1 \2/p' \
		"$BATS_TEST_TMPDIR/jvm.map" | sort >"$BATS_TEST_TMPDIR/want"
	sed -nE 's/^([0-9a-f]+) [0-9a-f]+ java\.lang\.invoke\.MethodHandle\.([A-Za-z]+|\[intrinsic\])$/\1 \2/p' \
		"$BATS_TEST_TMPDIR/agent.map" | sort >"$BATS_TEST_TMPDIR/got"
	echo "Compiler.perfmap intrinsics:"
	cat "$BATS_TEST_TMPDIR/want"
	# several primitives were compiled, or the comparison proves nothing
	[ "$(cut -d' ' -f2 "$BATS_TEST_TMPDIR/want" | sort -u | wc -l)" -ge 3 ]
	echo "ours where they differ:"
	! join -a1 "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" | awk '$2 != $3' | grep . || false
}

@test "agent: method handle intrinsics are named as Compiler.perfmap names them (JDK 17, 25)" {
	mh_names_agree "$JDK17"
	local jdk
	for jdk in /usr/lib/jvm/temurin-2[5-9]*; do
		[ -x "$jdk/bin/jcmd" ] && mh_names_agree "$jdk"
	done
}

@test "agent: perf record + perf report name the hot method from the map" {
	command -v perf >/dev/null || skip "perf is not installed"
	fs_host_jvm "$JDK17" "$BATS_TEST_TMPDIR/out" "-agentpath:$AGENT=continuous"
	JVM_PIDS+=("$PID")
	wait_ready "$BATS_TEST_TMPDIR/out"
	fs_wait_for 20 has_line "/tmp/perf-$PID.map" ' flametest\.Workload\.hotMethod$'
	run perf record -e cpu-clock -g -p "$PID" -o "$BATS_TEST_TMPDIR/perf.data" -- sleep 2
	[ "$status" -eq 0 ] || skip "perf record failed here: $output"
	perf report -i "$BATS_TEST_TMPDIR/perf.data" --stdio --no-children --sort sym \
		>"$BATS_TEST_TMPDIR/report" 2>"$BATS_TEST_TMPDIR/report.err"
	head -40 "$BATS_TEST_TMPDIR/report"
	grep -q 'flametest\.Workload\.hotMethod' "$BATS_TEST_TMPDIR/report"
}

@test "agent: libc-neutral ELF: 3 exports, glibc <= 2.4, no C++ runtime" {
	command -v readelf >/dev/null || skip "readelf is not installed"
	run readelf --dyn-syms -W "$AGENT"
	[ "$status" -eq 0 ]
	exports=$(echo "$output" | awk '$7 != "UND" && $5 == "GLOBAL" || $5 == "WEAK" && $7 != "UND" {print $8}' | sort | tr '\n' ' ')
	[ "$exports" = "Agent_OnAttach Agent_OnLoad Agent_OnUnload " ]
	# every versioned reference is at the x86_64 baseline (2.2.5) or
	# __stack_chk_fail@GLIBC_2.4
	run readelf -V -W "$AGENT"
	versions=$(echo "$output" | grep -oE 'GLIBC_[0-9.]+' | sort -u | tr '\n' ' ')
	echo "versions: $versions"
	for v in $versions; do
		case "$v" in GLIBC_2.2.5 | GLIBC_2.4) ;; *) echo "too new: $v"; false ;; esac
	done
	run objdump -T "$AGENT"
	! echo "$output" | grep -E 'GLIBC_2\.4' | grep -v __stack_chk_fail || false
	! echo "$output" | grep -qE 'CXXABI|GLIBCXX|GCC_' || false
	! echo "$output" | grep -E ' __[a-z0-9_]+_chk$' || false
	run readelf -d "$AGENT"
	! echo "$output" | grep -E 'NEEDED' | grep -vE '\[libc\.so\.6\]' || false
	# hardened: BIND_NOW and a read-only GOT
	echo "$output" | grep -qE 'BIND_NOW|FLAGS.*NOW'
	readelf -l -W "$AGENT" | grep -q GNU_RELRO
	! readelf -r -W "$AGENT" | grep -q TEXTREL || false
}

@test "agent: also builds and links with musl-gcc" {
	command -v musl-gcc >/dev/null || skip "musl-gcc is not installed"
	musl="$FS_BUILD/musl/libflameagent.so"
	[ -f "$musl" ]
	run readelf -d "$musl"
	echo "$output" | grep -q 'NEEDED.*\[libc\.so\]'
	run readelf --dyn-syms -W "$musl"
	echo "$output" | grep -q ' Agent_OnAttach$'
	# no _FORTIFY_SOURCE wrappers (__snprintf_chk...): musl has none
	! echo "$output" | grep -E ' UND ' | grep -E ' __[a-z0-9_]+_chk$' || false
}

@test "agent: the glibc build loads under musl's dynamic linker (RTLD_NOW)" {
	command -v musl-gcc >/dev/null || skip "musl-gcc is not installed"
	cat >"$BATS_TEST_TMPDIR/load.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		if (!h || !dlsym(h, "Agent_OnAttach") || !dlsym(h, "Agent_OnLoad")) {
			printf("FAIL %s: %s\n", argv[i], dlerror());
			return 1;
		}
		printf("OK %s\n", argv[i]);
	}
	return 0;
}
C
	musl-gcc -o "$BATS_TEST_TMPDIR/load" "$BATS_TEST_TMPDIR/load.c" || skip "musl-gcc cannot build a program here"
	run "$BATS_TEST_TMPDIR/load" "$AGENT" "$FS_BUILD/musl/libflameagent.so"
	echo "$output"
	[ "$status" -eq 0 ]
}

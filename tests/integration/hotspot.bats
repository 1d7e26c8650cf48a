#!/usr/bin/env bats
# sidecar/hotspot: a HotSpot JVM read from the host through its VMStructs.
# Oracles: the JVM's own Compiler.perfmap (every nmethod it lists must be
# found at its address with the same method name, the interpreter's range
# must match), the inline chains JVMTI gives our agent (at the start of each
# of its inlined ranges, the same chain), and, for the map mode, `run` naming Java frames of JVMs that
# cannot be attached to, with nothing created inside the container.
# JDKs: Debian's openjdk-17 and the Temurin 25 under /usr/lib/jvm (JDK 11
# and 21 are not installed on these machines).

load ../lib/containers

PROBE="$FS_BUILD/tests/tools/hotspot_probe"

needs_jvm() {
	fs_needs_jvm "$1" Workload
	[ -x "$PROBE" ] || skip "$PROBE not built"
}

# hs_bundle DIR JAVA [--ro-tmp] [--jvm-opt OPT]... -- WORKLOAD_ARGS...
hs_bundle() {
	local dir=$1 java=$2 rotmp=0 opts=()
	shift 2
	while [ $# -gt 0 ]; do
		case "$1" in
		--ro-tmp) rotmp=1; shift ;;
		--jvm-opt) opts+=("$2"); shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true --mount "$FS_BUILD/java:/opt/fsjava" -- \
		"$java" "${opts[@]}" -cp /opt/fsjava flametest.Workload "$@"
	[ "$rotmp" = 1 ] || return 0
	fs_bundle_set "$dir" '.root.readonly = true |
		.mounts |= map(if .destination == "/tmp" then .options += ["ro"] else . end)'
}

# start_hs NAME JAVA [hs_bundle options] -- ARGS: run it, wait for READY and
# its registry entry; PID is its host pid.
start_hs() {
	local name=$1
	shift
	CTRS+=("$name")
	hs_bundle "$FS_TMP/$name" "$@"
	fs_runc_run "$name" "$FS_TMP/$name"
	fs_wait_for 60 grep -q READY "$FS_TMP/$name/out.log" || {
		cat "$FS_TMP/$name/out.log" >&2
		return 1
	}
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
	PID=$(fs_container_pid "$name")
	echo "$PID" >>"$FS_TMP/jvm-pids"
}

# What the container holds: its rootfs and its /tmp (a tmpfs only the
# container sees), names, sizes and modes.
listing() {
	(cd "$FS_TMP/$1/rootfs" && find . -xdev -printf '%p %s %m\n' | sort)
	(cd "/proc/$2/root/tmp" && find . -printf 'tmp/%p %s %m\n' | sort)
}

# Of the frames of the java process's stacks that are Java code (named with a
# package, or [unknown] in anonymous JIT memory), the share named, in %.
java_named_pct() {
	awk '{
		n = $NF; $NF = ""; k = split($0, f, ";")
		for (i = 2; i <= k; i++) {
			g = f[i]; sub(/ +$/, "", g)
			if (g ~ /^\[unknown\]/) u += n
			else if (g ~ /^(flametest|java|jdk|sun)\./) j += n
		}
	} END { printf "%d\n", (j + u) ? 100 * j / (j + u) : 0 }' "$1"
}

setup_file() { fs_file_setup; }

teardown_file() { fs_file_teardown; }

setup() {
	fs_ctrs_setup
	HOSTJVM=
}

teardown() {
	fs_ctrs_teardown
	if [ -n "$HOSTJVM" ]; then
		kill "$HOSTJVM" 2>/dev/null || true
		rm -f "/tmp/perf-$HOSTJVM.map"
	fi
}

# oracle NAME JAVA: the JVM's own Compiler.perfmap (taken through our attach,
# copied to the host as /tmp/perf-<host pid>.map) against the probe.
oracle() {
	local name="hs-$$-$BATS_TEST_NUMBER"
	start_hs "$name" "$2" -- --threads 2 --late-compile 0.5 --warmup 1
	run "$FS_SIDECAR" map "$name" --mode jcmd
	echo "$output"
	[ "$status" -eq 0 ]
	run "$PROBE" "$PID" info
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"major $3"* ]]
	run "$PROBE" "$PID" check "/tmp/perf-$PID.map"
	echo "$output"
	echo "# $1: ${lines[${#lines[@]} - 1]}" >&3
	[ "$status" -eq 0 ]
	# Inline chains: our agent's ranges (JVMTI's own PcDesc data, unfoldall
	# names "outer->inner") must start where hotspot_scopes gives the same
	# chain.
	[ -f "$FS_BUNDLE_DIR/libflameagent.so" ] || return 0
	run "$FS_SIDECAR" map "$name" --mode agent
	echo "$output"
	[ "$status" -eq 0 ]
	run "$PROBE" "$PID" inline "/tmp/perf-$PID.map"
	echo "$output"
	echo "# $1: ${lines[${#lines[@]} - 1]}" >&3
	[ "$status" -eq 0 ]
}

@test "hotspot: JDK 17 in a container: every nmethod and the interpreter as Compiler.perfmap says" {
	needs_jvm "$JAVA17"
	oracle "JDK 17" "$JAVA17" 17
}

@test "hotspot: JDK 25 in a container: every nmethod and the interpreter as Compiler.perfmap says" {
	needs_jvm "$JAVA25"
	oracle "JDK 25" "$JAVA25" 25
}

@test "hotspot: a JVM on the host (root), without PreserveFramePointer" {
	needs_jvm "$JAVA17"
	fs_require_cmd perl
	# A background job of a non-interactive shell ignores SIGQUIT, which
	# attach (jcmd, our oracle) needs: put it back to the default.
	perl -e '$SIG{QUIT} = "DEFAULT"; exec @ARGV or die' "$JAVA17" -cp "$FS_BUILD/java" \
		flametest.Workload --threads 1 --warmup 1 --exit-after 120 >"$OUT/host.log" 2>&1 &
	HOSTJVM=$!
	fs_wait_for 60 grep -q READY "$OUT/host.log"
	run "${JAVA17%/java}/jcmd" "$HOSTJVM" Compiler.perfmap
	[ "$status" -eq 0 ]
	run "$PROBE" "$HOSTJVM" check "/tmp/perf-$HOSTJVM.map"
	echo "$output"
	[ "$status" -eq 0 ]
	# a pc in the middle of hotMethod's code is found and named
	local start size
	read -r start size _ < <(grep -m1 ' flametest.Workload.hotMethod(' "/tmp/perf-$HOSTJVM.map")
	run "$PROBE" "$HOSTJVM" blob "$(printf '%x' $((start + size / 2)))"
	echo "$output"
	[[ "$output" == *" nmethod "*"name flametest.Workload.hotMethod"* ]]
}

@test "hotspot: a process that is not a JVM is refused with ENOENT" {
	fs_require_root
	[ -x "$PROBE" ] || skip "$PROBE not built"
	run "$PROBE" $$ info
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"no libjvm.so"* ]]
}

@test "map --mode vmstructs: the JVM's JIT map from the host, nothing created in the container" {
	needs_jvm "$JAVA17"
	local name="hs-$$-$BATS_TEST_NUMBER"
	start_hs "$name" "$JAVA17" -- --threads 1 --warmup 1
	listing "$name" "$PID" >"$OUT/before"
	run "$FS_SIDECAR" map "$name" --mode vmstructs
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *" vmstructs "* ]]
	grep -q ' flametest\.Workload\.hotMethod$' "/tmp/perf-$PID.map"
	# nmethods are split at their inlining boundaries
	grep -q -- '[a-zA-Z]->[a-zA-Z]' "/tmp/perf-$PID.map"
	grep -q ' Interpreter$' "/tmp/perf-$PID.map"
	listing "$name" "$PID" >"$OUT/after"
	diff "$OUT/before" "$OUT/after"
	run "$FS_SIDECAR" map "$name" --mode vmstructs --continuous
	[ "$status" -eq 2 ]
	# the walk has a step budget (and a clock one): cut, it keeps what it
	# read and says so
	local full cut
	full=$(wc -l <"/tmp/perf-$PID.map")
	fs_needs_test_sidecar
	FS_TEST_HSMAP_STEPS=40 run "$FS_TEST_SIDECAR" map "$name" --mode vmstructs
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"code cache walk stopped at its step budget"* ]]
	cut=$(wc -l <"/tmp/perf-$PID.map")
	echo "full $full, cut $cut"
	[ "$cut" -gt 0 ] && [ "$cut" -le 40 ] && [ "$cut" -lt "$full" ]
}

# run_fallback NAME [hs_bundle options]: `run` on a JVM that cannot be
# attached to names >= 95% of its Java frames through vmstructs, and the
# container's rootfs and /tmp are unchanged.
run_fallback() {
	local name=$1 java=$2
	shift 2
	start_hs "$name" "$java" "$@" -- --threads 2 --warmup 1
	listing "$name" "$PID" >"$OUT/before"
	cd "$OUT"
	run "$FS_SIDECAR" run "$name" -d 3s -F 199 -o fb.svg
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"vmstructs"* ]]
	local pct
	pct=$(java_named_pct fb.folded)
	echo "# Java frames named: $pct%" >&3
	[ "$pct" -ge 95 ]
	grep -q 'flametest\.Workload\.hotMethod' fb.folded
	awk '{ print $NF " " $0 }' fb.folded | sort -nr | head -3 | cut -c1-400 # for the log
	listing "$name" "$PID" >"$OUT/after"
	diff "$OUT/before" "$OUT/after"
}

@test "run: a JVM with -XX:+DisableAttachMechanism is named through vmstructs, nothing created" {
	needs_jvm "$JAVA17"
	run_fallback "hs-$$-$BATS_TEST_NUMBER" "$JAVA17" --jvm-opt -XX:+PreserveFramePointer \
		--jvm-opt -XX:+DisableAttachMechanism
}

@test "run: a JDK 25 JVM with -XX:+DisableAttachMechanism is named through vmstructs, nothing created" {
	needs_jvm "$JAVA25"
	run_fallback "hs-$$-$BATS_TEST_NUMBER" "$JAVA25" --jvm-opt -XX:+PreserveFramePointer \
		--jvm-opt -XX:+DisableAttachMechanism
}

@test "run: a JVM with a read-only /tmp and rootfs is named through vmstructs, nothing created" {
	needs_jvm "$JAVA17"
	run_fallback "hs-$$-$BATS_TEST_NUMBER" "$JAVA17" --ro-tmp --jvm-opt -XX:+PreserveFramePointer
}

#!/usr/bin/env bats
# Frame pointers for opted-in containers at creation: -XX:+PreserveFramePointer
# appended to JAVA_TOOL_OPTIONS by the runtime wrapper (runc, containerd,
# Docker) and by `flamehook precreate` (Podman/CRI-O hooks.d). The JVM itself
# is the oracle: its "Picked up JAVA_TOOL_OPTIONS" line, -XX:+PrintFlagsFinal,
# and jcmd VM.flags on a running Workload; plus its /proc/<pid>/environ.

load ../lib/containers
bats_require_minimum_version 1.5.0

WRAPPER="$FS_BUILD/flamesidecar-runtime"
FP_ON=-XX:+PreserveFramePointer
FP_OFF=-XX:-PreserveFramePointer
# what the hook and the wrapper add by default (debug_nonsafepoints: true)
ADDED="$FP_ON -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints"

# fp_only: the configuration without "debug_nonsafepoints", for the cases
# about the frame pointer flag's own decisions (DebugNonSafepoints is decided
# on its own: test_jvmenv.t)
fp_only() {
	fs_config_set '.debug_nonsafepoints = false'
}

setup() {
	fs_setup
	NAME=fsfp$$-$BATS_TEST_NUMBER
	ROOT="$FS_TMP/runc-root"
	mkdir -p "$ROOT"
}

teardown() {
	if [ -n "${FS_TMP:-}" ] && [ -d "${ROOT:-/nonexistent}" ]; then
		for c in $(runc --root "$ROOT" list -q 2>/dev/null); do
			runc --root "$ROOT" delete -f "$c" >/dev/null 2>&1 || true
		done
	fi
	if [ -n "${FP_IMAGE:-}" ]; then
		podman rmi -f "$FP_IMAGE" >/dev/null 2>&1 || true
	fi
	fs_cleanup
}

needs_wrapper_jvm() {
	fs_require_root
	fs_require_cmd runc jq
	[ -x "$WRAPPER" ] || skip "$WRAPPER is not built (make wrapper)"
	[ -x "$JAVA17" ] || skip "no JDK 17 at $JAVA17"
}

set_env() { # set_env BUNDLE JQ-ARRAY: replace process.env's JVM variables
	fs_bundle_set "$1" '.process.env = ([.process.env[] | select(startswith("JAVA_TOOL_OPTIONS=") | not)] + $e)' \
		--argjson e "$2"
}

# run_wrapped BUNDLE: create + start through the wrapper, as containerd's shim does.
run_wrapped() {
	"$WRAPPER" --root "$ROOT" create --bundle "$1" --pid-file "$1/init.pid" "$NAME" \
		>"$1/out.log" 2>&1 </dev/null
	"$WRAPPER" --root "$ROOT" start "$NAME"
}

# flags_of BUNDLE: a short-lived container running java -XX:+PrintFlagsFinal -version
# through the wrapper; prints its output once it has exited.
flags_of() {
	run_wrapped "$1"
	fs_wait_for 60 sh -c "runc --root '$ROOT' state '$NAME' | jq -e '.status == \"stopped\"'" || return 1
	cat "$1/out.log"
}

@test "wrapper + runc + Workload JVM: image JAVA_TOOL_OPTIONS kept and extended; the JVM runs with frame pointers" {
	needs_wrapper_jvm
	[ -f "$FS_BUILD/java/flametest/Workload.class" ] || skip "Java workloads not built (make agent)"
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true --mount "$FS_BUILD/java:/opt/fsjava" -- \
		"$JAVA17" -cp /opt/fsjava flametest.Workload --warmup 0.5
	set_env "$FS_TMP/b" '["JAVA_TOOL_OPTIONS=-Xmx96m -Dfs.test=\"a b\""]'
	run_wrapped "$FS_TMP/b"
	fs_wait_for 60 grep -q READY "$FS_TMP/b/out.log" || { cat "$FS_TMP/b/out.log"; false; }
	pid=$(cat "$FS_TMP/b/init.pid")
	# config.json and the JVM's own environment
	want="JAVA_TOOL_OPTIONS=-Xmx96m -Dfs.test=\"a b\" $ADDED"
	[ "$(jq -r '.process.env[] | select(startswith("JAVA_TOOL_OPTIONS="))' "$FS_TMP/b/config.json")" = "$want" ]
	tr '\0' '\n' <"/proc/$pid/environ" | grep -qxF "$want"
	# the JVM says it picked them up (its stderr), once
	[ "$(grep -c "^Picked up JAVA_TOOL_OPTIONS: -Xmx96m -Dfs.test=\"a b\" $ADDED\$" "$FS_TMP/b/out.log")" = 1 ]
	# and the JVM's own view of its flags, through the attach mechanism
	run "${JAVA17%/java}/jcmd" "$pid" VM.flags
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$FP_ON"* ]]
	grep -q "appended $FP_ON to JAVA_TOOL_OPTIONS" "$FS_RUN/hook.log"
	# the hooks were added too: registered
	[ -f "$FS_RUN/containers/$NAME.json" ]
}

@test "wrapper: no JAVA_TOOL_OPTIONS in the image: one is added; PrintFlagsFinal says true (JDK 17 and Temurin 25)" {
	needs_wrapper_jvm
	local jdk n=0
	for jdk in "${JAVA17%/bin/java}" /usr/lib/jvm/temurin-25-jdk-amd64; do
		[ -x "$jdk/bin/java" ] || continue
		n=$((n + 1))
		rm -rf "$FS_TMP/b"
		fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- \
			"$jdk/bin/java" -XX:+PrintFlagsFinal -version
		set_env "$FS_TMP/b" '[]'
		NAME=fsfp$$-$BATS_TEST_NUMBER-$n
		run flags_of "$FS_TMP/b"
		[ "$status" -eq 0 ]
		echo "$jdk: $(grep -E 'PreserveFramePointer|Picked' <<<"$output")"
		grep -qE 'bool PreserveFramePointer += true .*\{environment\}' <<<"$output"
		# every JDK here takes the diagnostic flag from the environment too
		grep -qE 'bool DebugNonSafepoints += true .*\{environment\}' <<<"$output"
		[[ "$output" == *"Picked up JAVA_TOOL_OPTIONS: $ADDED"* ]]
		[ "$(jq -c '[.process.env[] | select(startswith("JAVA_TOOL_OPTIONS="))]' "$FS_TMP/b/config.json")" = "[\"JAVA_TOOL_OPTIONS=$ADDED\"]" ]
	done
}

@test "wrapper: the user's -XX:-PreserveFramePointer (JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, args) and the opt-out annotation are respected" {
	needs_wrapper_jvm
	fp_only
	for where in tool jdk args annotation; do
		rm -rf "$FS_TMP/b"
		local extra=() env='[]' ann=()
		case $where in
		tool) env="[\"JAVA_TOOL_OPTIONS=$FP_OFF\"]" ;;
		jdk) env="[\"JDK_JAVA_OPTIONS=$FP_OFF\"]" ;;
		args) extra=("$FP_OFF") ;;
		annotation) ann=(--annotate flamesidecar.io/preserve-frame-pointer=false) ;;
		esac
		fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true "${ann[@]}" -- \
			"$JAVA17" "${extra[@]}" -XX:+PrintFlagsFinal -version
		set_env "$FS_TMP/b" "$env"
		before=$(jq -c .process "$FS_TMP/b/config.json")
		NAME=fsfp$$-$BATS_TEST_NUMBER-$where
		run flags_of "$FS_TMP/b"
		[ "$status" -eq 0 ]
		echo "$where: $(grep 'bool PreserveFramePointer' <<<"$output")"
		grep -qE 'bool PreserveFramePointer += false' <<<"$output"
		# process (env, args) exactly as it was; the hooks were still added
		[ "$(jq -c .process "$FS_TMP/b/config.json")" = "$before" ]
		[ "$(jq -r '.hooks.createRuntime[-1].path' "$FS_TMP/b/config.json")" = "$FS_BUILD/flamehook" ]
	done
	[ "$(grep -c "JAVA_TOOL_OPTIONS left alone: .* says $FP_OFF" "$FS_RUN/hook.log")" = 3 ]
	grep -q "JAVA_TOOL_OPTIONS left alone: the annotation flamesidecar.io/preserve-frame-pointer=false" "$FS_RUN/hook.log"
}

@test "wrapper: hostile env (JAVA_TOOL_OPTIONS twice, an entry without =) changes nothing there, with a log line" {
	needs_wrapper_jvm
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	set_env "$FS_TMP/b" '["JAVA_TOOL_OPTIONS=-Xss1m", "JAVA_TOOL_OPTIONS=-Xss2m"]'
	before=$(jq -c .process "$FS_TMP/b/config.json")
	run_wrapped "$FS_TMP/b"
	[ "$(jq -c .process "$FS_TMP/b/config.json")" = "$before" ]
	grep -q "JAVA_TOOL_OPTIONS left alone: process.env sets JAVA_TOOL_OPTIONS twice" "$FS_RUN/hook.log"
	[ -f "$FS_RUN/containers/$NAME.json" ] # registered all the same
	# an entry without '=': left as it is (whatever runc then makes of it)
	fs_make_bundle "$FS_TMP/n" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	set_env "$FS_TMP/n" '["NOEQUALS"]'
	before=$(jq -c .process "$FS_TMP/n/config.json")
	NAME=$NAME-n
	run run_wrapped "$FS_TMP/n"
	[ "$(jq -c .process "$FS_TMP/n/config.json")" = "$before" ]
	grep -q "JAVA_TOOL_OPTIONS left alone: process.env\[[0-9]*\] is not NAME=VALUE" "$FS_RUN/hook.log"
}

@test "wrapper: preserve_frame_pointer false leaves the env alone; not opted in stays byte for byte" {
	needs_wrapper_jvm
	fp_only
	fs_config_set '.preserve_frame_pointer = false'
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	before=$(jq -c .process "$FS_TMP/b/config.json")
	run_wrapped "$FS_TMP/b"
	[ "$(jq -c .process "$FS_TMP/b/config.json")" = "$before" ]
	grep -q 'preserve_frame_pointer' "$FS_RUN/hook.log"
	# back on, a bundle without the annotation: not a byte changed
	fs_config_set '.preserve_frame_pointer = true'
	fs_make_bundle "$FS_TMP/p" --no-hooks -- sleep 1000
	cp -p "$FS_TMP/p/config.json" "$FS_TMP/plain.orig"
	NAME=$NAME-plain
	run_wrapped "$FS_TMP/p"
	cmp "$FS_TMP/plain.orig" "$FS_TMP/p/config.json"
}

# whole_pct FOLDED: percent of the samples holding a Java frame (a dotted
# class.method name) whose stack reaches the thread's entry.
whole_pct() {
	python3 - "$1" <<'PY'
import re, sys
java = whole = 0
jframe = re.compile(r"^[a-z][\w$]*(\.[\w$]+)+\.[\w$<>-]+$")
for line in open(sys.argv[1]):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    if any(jframe.match(f) for f in frames):
        java += int(n)
        if "thread_native_entry" in frames or "JavaMain" in frames:
            whole += int(n)
print(java, whole, 100 * whole // java if java else 0)
PY
}

@test "jetty9 (Debian) started without the flag through the wrapper, opted in: >= 95% of Java samples reach the thread entry" {
	needs_wrapper_jvm
	fs_require_cmd wrk curl python3
	[ -f /usr/share/jetty9/start.jar ] || skip "jetty9 is not installed"
	local port jb
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	jb=$FS_TMP/jbase
	mkdir -p "$jb/webapps"
	cp -r /usr/share/jetty9/default-root "$jb/webapps/root"
	printf -- '--module=deploy,http\njetty.http.host=127.0.0.1\njetty.http.port=%s\n' "$port" >"$jb/start.ini"
	chmod -R a+rX "$jb"
	# no -XX:+PreserveFramePointer anywhere: the image's JAVA_TOOL_OPTIONS is empty
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true --mount "$jb:/opt/jbase" -- \
		"$JAVA17" -Djava.io.tmpdir=/tmp -jar /usr/share/jetty9/start.jar \
		jetty.home=/usr/share/jetty9 jetty.base=/opt/jbase
	run_wrapped "$FS_TMP/b"
	fs_wait_for 60 curl -sf -o /dev/null "http://127.0.0.1:$port/" || { cat "$FS_TMP/b/out.log"; false; }
	grep -q "^Picked up JAVA_TOOL_OPTIONS: $ADDED\$" "$FS_TMP/b/out.log"
	wrk -t1 -c16 -d10s "http://127.0.0.1:$port/" >/dev/null # JIT warm-up
	wrk -t1 -c16 -d12s "http://127.0.0.1:$port/" >"$FS_TMP/wrk.out" &
	local wrk_pid=$!
	run "$FS_SIDECAR" run "$NAME" -d 8s -F 199 -o "$FS_TMP/j.svg"
	wait "$wrk_pid"
	echo "$output" | tail -3
	[ "$status" -eq 0 ]
	# the sidecar's own check agrees: no "runs without -XX:+PreserveFramePointer"
	[[ "$output" != *"without -XX:+PreserveFramePointer"* ]]
	read -r java whole pct < <(whole_pct "$FS_TMP/j.folded")
	echo "# jetty: $whole of $java samples with a Java frame reach the thread entry ($pct%)" >&3
	[ "$java" -gt 100 ]
	[ "$pct" -ge 95 ]
	grep -q 'org\.eclipse\.jetty\.' "$FS_TMP/j.folded"
}

# --- flamehook precreate, the program ---------------------------------------

precreate() { # precreate FILE: run the filter on FILE, output in $FS_TMP/out
	"$FS_HOOK" --config "$FS_CONFIG" precreate <"$1" >"$FS_TMP/out" 2>"$FS_TMP/err"
}

@test "precreate: prints the input byte for byte unless it adds the flag" {
	fs_require_cmd jq
	printf '{"ociVersion": "1.0.2",\n "process": {"env": ["PATH=/bin", "JAVA_TOOL_OPTIONS=-Xmx1g"], "args": ["java"]},\n "annotations": {"flamesidecar.io/enable": "true"}}\n' >"$FS_TMP/in"
	precreate "$FS_TMP/in"
	[ "$(jq -c .process.env "$FS_TMP/out")" = "[\"PATH=/bin\",\"JAVA_TOOL_OPTIONS=-Xmx1g $ADDED\"]" ]
	[ "$(jq -c 'del(.process.env)' "$FS_TMP/out")" = "$(jq -c 'del(.process.env)' "$FS_TMP/in")" ]
	# fed its own output: byte for byte
	cp "$FS_TMP/out" "$FS_TMP/in2"
	precreate "$FS_TMP/in2"
	cmp "$FS_TMP/in2" "$FS_TMP/out"
	# not opted in, hostile, broken, not JSON at all: byte for byte, exit 0
	sed 's/"true"/"false"/' "$FS_TMP/in" >"$FS_TMP/c1"
	sed 's/"PATH=\/bin"/"NOEQUALS"/' "$FS_TMP/in" >"$FS_TMP/c2"
	sed 's/"PATH=\/bin"/"JAVA_TOOL_OPTIONS=x"/' "$FS_TMP/in" >"$FS_TMP/c3"
	head -c 40 "$FS_TMP/in" >"$FS_TMP/c4"
	printf '\xff\xfe\0garbage' >"$FS_TMP/c5"
	python3 -c 'print("[" * 100000)' >"$FS_TMP/c6"
	for c in c1 c2 c3 c4 c5 c6; do
		precreate "$FS_TMP/$c"
		cmp "$FS_TMP/$c" "$FS_TMP/out"
	done
	grep -q 'is not NAME=VALUE' "$FS_RUN/hook.log"
	grep -q 'sets JAVA_TOOL_OPTIONS twice' "$FS_RUN/hook.log"
}

@test "precreate: 6 MB of input and an unusable config pass through unchanged" {
	printf '{"annotations":{"flamesidecar.io/enable":"true"},"x":"%s"}' "$(head -c 6000000 /dev/zero | tr '\0' a)" >"$FS_TMP/big"
	precreate "$FS_TMP/big"
	cmp "$FS_TMP/big" "$FS_TMP/out"
	grep -q 'larger than' "$FS_TMP/err"
	printf '{"process":{"env":[]},"annotations":{"flamesidecar.io/enable":"true"}}' >"$FS_TMP/in"
	echo '{"enable": 3' >"$FS_CONFIG"
	precreate "$FS_TMP/in"
	cmp "$FS_TMP/in" "$FS_TMP/out"
	grep -q 'configuration unusable' "$FS_TMP/err"
}

@test "precreate: bounded in time when the engine never closes stdin" {
	fs_config_set '.hook_timeout_ms = 300'
	mkfifo "$FS_TMP/fifo"
	sleep 30 >"$FS_TMP/fifo" & # a writer that never writes nor closes
	local writer=$! start=$SECONDS
	run "$FS_HOOK" --config "$FS_CONFIG" precreate <"$FS_TMP/fifo"
	kill "$writer"
	[ "$status" -eq 0 ]
	[ $((SECONDS - start)) -le 3 ]
	[[ "$output" == *"deadline reached"* ]]
}

# --- Podman with our hooks.d precreate entry ---------------------------------

# Podman as docs/engines.md sets it up: containers.conf hooks_dir lists the
# usual hooks.d (our prestart/poststart entries) and the precreate
# directory of its own.
podman_setup() {
	fs_require_root
	fs_require_cmd podman jq tar
	[ -x "$JAVA17" ] || skip "no JDK 17 at $JAVA17"
	mkdir -p "$FS_TMP/hooks.d" "$FS_TMP/hooks-precreate.d"
	local f
	for f in "$FS_TOP"/config/hooks.d/*.json.in "$FS_TOP"/config/hooks-precreate.d/*.json.in; do
		jq --arg h "$FS_HOOK" --arg c "$FS_CONFIG" \
			'.hook.path = $h | .hook.args = ["flamehook", "--config", $c, .hook.args[-1]]' \
			"$f" >"$(dirname "$f" | sed "s|^$FS_TOP/config|$FS_TMP|")/$(basename "$f" .in)"
	done
	printf '[engine]\nhooks_dir = ["%s", "%s"]\n' "$FS_TMP/hooks.d" "$FS_TMP/hooks-precreate.d" \
		>"$FS_TMP/containers.conf"
	export CONTAINERS_CONF="$FS_TMP/containers.conf"
	# An image whose ENV sets JAVA_TOOL_OPTIONS: an empty rootfs imported with --change.
	mkdir -p "$FS_TMP/img"/{tmp,usr,etc,proc,sys,dev}
	chmod 1777 "$FS_TMP/img/tmp"
	for l in bin lib lib64 sbin; do ln -s "usr/$l" "$FS_TMP/img/$l"; done
	FP_IMAGE=localhost/fsfp-test:$$-$BATS_TEST_NUMBER
	tar -C "$FS_TMP/img" -c . | podman import -q \
		--change 'ENV JAVA_TOOL_OPTIONS=-Xmx80m' --change 'ENV PATH=/usr/bin:/bin' - "$FP_IMAGE" >/dev/null
}

podman_run() {
	podman --runtime runc --cgroup-manager=cgroupfs run --rm \
		--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --user 1000:1000 \
		-v /usr:/usr:ro -v /etc:/etc:ro "$@"
}

podman_java() { # podman_java [podman run options] -- [java options]
	local popts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do popts+=("$1"); shift; done
	shift
	podman_run "${popts[@]}" "$FP_IMAGE" "$JAVA17" "$@" -XX:+PrintFlagsFinal -version 2>&1
}

@test "installed hooks.d entries use only stages every reader knows (precreate lives apart)" {
	# CRI-O and buildah load hooks.d with no extension stages and refuse a
	# directory holding a "precreate" entry (buildah: unknown stage "precreate").
	for f in "$FS_TOP"/config/hooks.d/*.json.in "$FS_TOP"/config/hooks.d-optional/*.json.in; do
		jq -e '.stages - ["prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"] == []' "$f"
	done
	# The default install runs one hook process per start and none at the
	# stop: poststop is optional (stale entries go at the next read).
	! grep -l '"poststop"' "$FS_TOP"/config/hooks.d/*.json.in || false
	[ "$(jq -c .stages "$FS_TOP/config/hooks.d-optional/flamesidecar-poststop.json.in")" = '["poststop"]' ]
	[ "$(jq -c .stages "$FS_TOP/config/hooks-precreate.d/flamesidecar-precreate.json.in")" = '["precreate"]' ]
}

@test "podman + precreate via containers.conf hooks_dir: the image's JAVA_TOOL_OPTIONS extended, the JVM has frame pointers; unannotated untouched" {
	podman_setup
	run podman_java --annotation flamesidecar.io/enable=true --
	[ "$status" -eq 0 ]
	grep -E 'Picked|bool PreserveFramePointer' <<<"$output"
	[[ "$output" == *"Picked up JAVA_TOOL_OPTIONS: -Xmx80m $ADDED"* ]]
	grep -qE 'bool PreserveFramePointer += true .*\{environment\}' <<<"$output"
	grep -q "precreate -: appended $FP_ON to JAVA_TOOL_OPTIONS" "$FS_RUN/hook.log"
	# the env the container's process gets; the prestart entry registered it too
	run podman_run --annotation flamesidecar.io/enable=true "$FP_IMAGE" \
		sh -c 'printenv JAVA_TOOL_OPTIONS; cat /opt/flamesidecar/MARKER'
	[ "${lines[0]}" = "-Xmx80m $ADDED" ]
	[ "${lines[1]}" = "flamesidecar test bundle" ]
	# without the annotation the hook is not even started
	nlog=$(wc -l <"$FS_RUN/hook.log")
	run podman_java --
	[[ "$output" == *"Picked up JAVA_TOOL_OPTIONS: -Xmx80m"$'\n'* ]]
	grep -qE 'bool PreserveFramePointer += false' <<<"$output"
	[ "$(wc -l <"$FS_RUN/hook.log")" = "$nlog" ]
}

@test "podman + precreate: -XX:-PreserveFramePointer in _JAVA_OPTIONS or the args is respected" {
	podman_setup
	fp_only
	run podman_java --annotation flamesidecar.io/enable=true --env "_JAVA_OPTIONS=$FP_OFF" --
	grep -qE 'bool PreserveFramePointer += false' <<<"$output"
	[[ "$output" == *"Picked up JAVA_TOOL_OPTIONS: -Xmx80m"$'\n'* ]]
	run podman_java --annotation flamesidecar.io/enable=true -- "$FP_OFF"
	grep -qE 'bool PreserveFramePointer += false' <<<"$output"
	[[ "$output" == *"Picked up JAVA_TOOL_OPTIONS: -Xmx80m"$'\n'* ]]
	[ "$(grep -c "left alone: .* says $FP_OFF" "$FS_RUN/hook.log")" = 2 ]
}

@test "podman build still works with the documented hooks_dir (buildah ignores the precreate directory)" {
	podman_setup
	printf 'FROM %s\nRUN ["/usr/bin/true"]\n' "$FP_IMAGE" >"$FS_TMP/Containerfile"
	run podman build --runtime runc --cgroup-manager=cgroupfs --ulimit nofile=1024:1024 \
		--ulimit nproc=1024:1024 -v /usr:/usr:ro -t "$FP_IMAGE-built" "$FS_TMP"
	echo "$output"
	podman rmi -f "$FP_IMAGE-built" >/dev/null 2>&1 || true
	[ "$status" -eq 0 ]
}

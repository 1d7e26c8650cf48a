#!/usr/bin/env bats
# flamesidecar-runtime driven the way containerd's runc shim and Docker
# drive a runtime: global options, then create/start/state/kill/delete
# with --bundle and --pid-file. With opt-in the hook runs (entry, mount);
# without it config.json stays byte for byte the same. Pass-through of
# every other verb, fail-open, and the wrapper's own errors.

load ../lib/containers
bats_require_minimum_version 1.5.0 # run -127

WRAPPER="$FS_BUILD/flamesidecar-runtime"

setup() {
	[ -x "$WRAPPER" ] || skip "$WRAPPER is not built (make wrapper)"
	fs_setup
	NAME=fsw$$-$BATS_TEST_NUMBER
	ROOT="$FS_TMP/runc-root"
	RTLOG="$FS_TMP/runtime-log.json"
	mkdir -p "$ROOT"
}

teardown() {
	if [ -n "${FS_TMP:-}" ] && [ -d "${ROOT:-/nonexistent}" ]; then
		for c in $(runc --root "$ROOT" list -q 2>/dev/null); do
			runc --root "$ROOT" delete -f "$c" >/dev/null 2>&1 || true
		done
	fi
	if [ -n "${FS_TMP:-}" ] && [ -d "$FS_TMP/crun-root" ]; then
		unshare -m --propagation private sh -c 'umount /sys/fs/cgroup/unified 2>/dev/null
			for c in $(crun --root "$1" list -q 2>/dev/null); do crun --root "$1" delete -f "$c"; done' \
			sh "$FS_TMP/crun-root" >/dev/null 2>&1 || true
	fi
	fs_cleanup
}

# The runtime, as containerd's shim calls it (runc v2 shim: --root, --log,
# --log-format json before the verb).
rt() {
	"$WRAPPER" --root "$ROOT" --log "$RTLOG" --log-format json "$@"
}

# create as the shim does: stdio is the container's, so not bats' pipe.
rt_create() {
	local bundle=$1 name=$2
	rt create --bundle "$bundle" --pid-file "$bundle/init.pid" "$name" >"$bundle/out.log" 2>&1 </dev/null
}

status_is() {
	[ "$(runc --root "$ROOT" state "$1" | jq -r .status)" = "$2" ]
}

# A fake runtime that records its arguments (NUL-separated), stdin and
# one environment variable, and exits 42.
fake_runtime() {
	cat >"$FS_TMP/fake-runtime" <<SH
#!/bin/sh
printf '%s\0' "\$@" >"$FS_TMP/fake.args"
cat >"$FS_TMP/fake.stdin"
printf '%s' "\${FS_WRAPPER_TEST_VAR:-unset}" >"$FS_TMP/fake.env"
echo "fake runtime output"
exit 42
SH
	chmod 0755 "$FS_TMP/fake-runtime"
	fs_config_set '.runtime_path = $p' --arg p "$FS_TMP/fake-runtime"
}

@test "containerd-style lifecycle, opted in: createRuntime added, hook registers and mounts, delete unregisters" {
	fs_require_root
	fs_require_cmd runc jq
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	chmod 0640 "$FS_TMP/b/config.json"
	rt_create "$FS_TMP/b" "$NAME"
	status_is "$NAME" created
	pid=$(cat "$FS_TMP/b/init.pid")
	# createRuntime ran at create: the entry is there before start.
	[ "$(jq -r .pid "$FS_RUN/containers/$NAME.json")" = "$pid" ]
	# config.json now holds our createRuntime entry, with the private
	# config; no poststart (no profile asked for) and no poststop (the
	# wrapper's delete unregisters): one hook process per start.
	cfg="$FS_TMP/b/config.json"
	[ "$(jq -c '.hooks | keys' "$cfg")" = '["createRuntime"]' ]
	for s in createRuntime; do
		[ "$(jq -r --arg s $s '.hooks[$s][-1].path' "$cfg")" = "$FS_BUILD/flamehook" ]
		[ "$(jq -c --arg s $s '.hooks[$s][-1].args' "$cfg")" = "[\"flamehook\",\"--config\",\"$FS_CONFIG\",\"$s\"]" ]
		[ "$(jq -c --arg s $s '.hooks[$s][-1].env' "$cfg")" = '["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]' ]
		[ "$(jq -r --arg s $s '.hooks[$s][-1].timeout' "$cfg")" = 5 ]
	done
	[ "$(stat -c %a "$cfg")" = 640 ]
	! ls -A "$FS_TMP/b" | grep -q '^\.config\.json' || false
	rt start "$NAME"
	status_is "$NAME" running
	run rt state "$NAME"
	[ "$status" -eq 0 ]
	[ "$(jq -r .annotations[\"flamesidecar.io/enable\"] <<<"$output")" = true ]
	run rt exec --user 1000:1000 "$NAME" cat /opt/flamesidecar/MARKER
	[ "$output" = "flamesidecar test bundle" ]
	grep -q "added $FS_BUILD/flamehook to $FS_TMP/b/config.json" "$FS_RUN/hook.log"
	rt kill "$NAME" KILL
	fs_wait_for 10 status_is "$NAME" stopped
	rt delete "$NAME"
	[ ! -e "$FS_RUN/containers/$NAME.json" ]
	grep -q "flamesidecar-runtime\[[0-9]*\] delete $NAME: unregistered" "$FS_RUN/hook.log"
	# Nothing of ours in the runtime's own log but the create's lines.
	! grep -q unregistered "$RTLOG" || false
}

@test "delete: --force on a running container unregisters once the runtime deleted it; a failed delete keeps the entry" {
	fs_require_root
	fs_require_cmd runc jq
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true \
		--annotate flamesidecar.io/profile=1s -- sleep 1000
	rt_create "$FS_TMP/b" "$NAME"
	# A profile asked for: the poststart trigger is added too.
	[ "$(jq -c '.hooks | keys' "$FS_TMP/b/config.json")" = '["createRuntime","poststart"]' ]
	[ -f "$FS_RUN/containers/$NAME.json" ]
	rt start "$NAME"
	# Without --force runc refuses a running container: entry kept.
	run rt delete "$NAME"
	[ "$status" -ne 0 ]
	[ -f "$FS_RUN/containers/$NAME.json" ]
	# An id that is not a valid registry id, and one without an entry: passed through.
	run rt delete "../$NAME"
	[ "$status" -ne 0 ]
	[ -f "$FS_RUN/containers/$NAME.json" ]
	run rt delete "$NAME-none"
	[ "$status" -ne 0 ]
	rt delete --force "$NAME"
	[ ! -e "$FS_RUN/containers/$NAME.json" ]
	grep -q "delete $NAME: unregistered: the runtime deleted the container" "$FS_RUN/hook.log"
	run runc --root "$ROOT" state "$NAME"
	[ "$status" -ne 0 ]
}

@test "delete: a registry entry that is a symlink is removed as a link, its target untouched" {
	fs_require_root
	fs_require_cmd runc jq
	mkdir -p "$FS_RUN/containers"
	echo keep >"$FS_TMP/target"
	ln -s "$FS_TMP/target" "$FS_RUN/containers/$NAME.json"
	fs_make_bundle "$FS_TMP/b" --no-hooks -- sleep 1000
	rt_create "$FS_TMP/b" "$NAME"
	# The entry cannot be read (a symlink is refused): the link goes only
	# once the runtime deleted the container.
	rt delete --force "$NAME"
	[ ! -L "$FS_RUN/containers/$NAME.json" ]
	[ "$(cat "$FS_TMP/target")" = keep ]
}

@test "delete: a registry directory others can write is refused: entry left alone, the runtime still deletes" {
	fs_require_root
	fs_require_cmd runc jq
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	rt_create "$FS_TMP/b" "$NAME"
	[ -f "$FS_RUN/containers/$NAME.json" ]
	chmod 0777 "$FS_RUN/containers"
	rt delete --force "$NAME"
	chmod 0700 "$FS_RUN/containers"
	run runc --root "$ROOT" state "$NAME"
	[ "$status" -ne 0 ]
	[ -f "$FS_RUN/containers/$NAME.json" ]
	grep -q "delete $NAME: registry entry not checked: .*lets others write it" "$FS_RUN/hook.log"
}

@test "foreground run through the wrapper keeps a poststop entry: nothing else would unregister it" {
	fs_require_root
	fs_require_cmd runc jq
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- true
	rt run --bundle "$FS_TMP/b" "$NAME" >"$FS_TMP/out.log" 2>&1 </dev/null
	[ "$(jq -c '.hooks | keys' "$FS_TMP/b/config.json")" = '["createRuntime","poststop"]' ]
	grep -q "createRuntime $NAME: registered" "$FS_RUN/hook.log"
	grep -q "poststop $NAME: unregistered" "$FS_RUN/hook.log"
	[ ! -e "$FS_RUN/containers/$NAME.json" ]
}

@test "not opted in: config.json is byte-identical (not rewritten), no entry, no mount" {
	fs_require_root
	fs_require_cmd runc jq
	fs_make_bundle "$FS_TMP/b" --no-hooks -- sleep 1000
	cp -p "$FS_TMP/b/config.json" "$FS_TMP/config.orig"
	ino=$(stat -c %i "$FS_TMP/b/config.json")
	mtime=$(stat -c %Y.%y "$FS_TMP/b/config.json")
	rt_create "$FS_TMP/b" "$NAME"
	rt start "$NAME"
	status_is "$NAME" running
	cmp "$FS_TMP/config.orig" "$FS_TMP/b/config.json"
	[ "$(stat -c %i "$FS_TMP/b/config.json")" = "$ino" ]
	[ "$(stat -c %Y.%y "$FS_TMP/b/config.json")" = "$mtime" ]
	[ ! -e "$FS_RUN/containers/$NAME.json" ]
	run rt exec "$NAME" ls /opt/flamesidecar
	[ "$status" -ne 0 ]
}

@test "run -d (create + start) with the bundle as cwd; existing hooks keep running" {
	fs_require_root
	fs_require_cmd runc jq
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_bundle_set "$FS_TMP/b" '.hooks = {poststart: [{path: "/bin/sh", args: ["sh", "-c", "echo ran > " + $f]}]}' \
		--arg f "$FS_TMP/theirs"
	echo "runc $NAME" >>"$FS_TMP/containers"
	(cd "$FS_TMP/b" && rt run -d "$NAME" >out.log 2>&1 </dev/null)
	status_is "$NAME" running
	[ "$(cat "$FS_TMP/theirs")" = ran ]
	[ "$(jq -r '.hooks.poststart[0].path' "$FS_TMP/b/config.json")" = /bin/sh ]
	# No profile asked for: theirs is the only poststart entry; ours is createRuntime's.
	[ "$(jq -r '.hooks.poststart | length' "$FS_TMP/b/config.json")" = 1 ]
	[ "$(jq -r '.hooks.createRuntime[0].path' "$FS_TMP/b/config.json")" = "$FS_BUILD/flamehook" ]
	[ -f "$FS_RUN/containers/$NAME.json" ]
}

@test "config enable=always patches without the annotation; enable=never leaves an annotated bundle alone" {
	fs_require_root
	fs_require_cmd runc jq
	fs_config_set '.enable = "always"'
	fs_make_bundle "$FS_TMP/b" --no-hooks -- sleep 1000
	rt_create "$FS_TMP/b" "$NAME"
	[ -f "$FS_RUN/containers/$NAME.json" ]
	[ "$(jq -r '.hooks.createRuntime[0].path' "$FS_TMP/b/config.json")" = "$FS_BUILD/flamehook" ]

	fs_config_set '.enable = "never"'
	fs_make_bundle "$FS_TMP/b2" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	cp "$FS_TMP/b2/config.json" "$FS_TMP/config.orig"
	rt_create "$FS_TMP/b2" "$NAME-n"
	cmp "$FS_TMP/config.orig" "$FS_TMP/b2/config.json"
	[ ! -e "$FS_RUN/containers/$NAME-n.json" ]
}

@test "a bundle already carrying flamehook (hooks.d, or a second create) is not patched again" {
	fs_require_root
	fs_require_cmd runc jq
	# Without a JVM flag to add: not a byte changed.
	fs_config_set '.preserve_frame_pointer = false | .debug_nonsafepoints = false'
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	cp "$FS_TMP/b/config.json" "$FS_TMP/config.orig"
	rt_create "$FS_TMP/b" "$NAME"
	cmp "$FS_TMP/config.orig" "$FS_TMP/b/config.json"
	[ -f "$FS_RUN/containers/$NAME.json" ]
	grep -q "flamehook already in" "$FS_RUN/hook.log"
	# With it (the default): the hooks stay as they were, only the flag is
	# added; a second create then finds both and leaves the file alone.
	fs_config_set '.preserve_frame_pointer = true | .debug_nonsafepoints = true'
	fs_make_bundle "$FS_TMP/c" --annotate flamesidecar.io/enable=true -- sleep 1000
	cp "$FS_TMP/c/config.json" "$FS_TMP/c.orig"
	rt_create "$FS_TMP/c" "$NAME-c"
	[ "$(jq -c 'del(.process.env)' "$FS_TMP/c/config.json")" = "$(jq -c 'del(.process.env)' "$FS_TMP/c.orig")" ]
	[ "$(jq -r '.process.env[] | select(startswith("JAVA_TOOL_OPTIONS="))' "$FS_TMP/c/config.json")" = \
		"JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints" ]
	cp -p "$FS_TMP/c/config.json" "$FS_TMP/c.patched"
	ino=$(stat -c %i "$FS_TMP/c/config.json")
	rt_create "$FS_TMP/c" "$NAME-c2"
	cmp "$FS_TMP/c.patched" "$FS_TMP/c/config.json"
	[ "$(stat -c %i "$FS_TMP/c/config.json")" = "$ino" ] # not rewritten
	grep -q "create $NAME-c2: JAVA_TOOL_OPTIONS left alone: JAVA_TOOL_OPTIONS already says" "$FS_RUN/hook.log"
}

@test "crun behind the wrapper (runtime_path): opted-in container registered and unregistered" {
	fs_require_root
	fs_require_cmd crun unshare jq
	fs_config_set '.runtime_path = $p' --arg p "$(command -v crun)"
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	cat >"$FS_TMP/crun.sh" <<SH
rt() { "$WRAPPER" --root "$FS_TMP/crun-root" "\$@"; }
rt create --bundle "$FS_TMP/b" --pid-file "$FS_TMP/b/pid" "$NAME" >"$FS_TMP/b/out.log" 2>&1 </dev/null
rt start "$NAME"
echo "entry_pid=\$(jq -r .pid "$FS_RUN/containers/$NAME.json") pid=\$(cat "$FS_TMP/b/pid")"
rt exec "$NAME" cat /opt/flamesidecar/MARKER
rt kill "$NAME" KILL
fs_wait_stopped rt "$NAME"
rt delete "$NAME"
[ -e "$FS_RUN/containers/$NAME.json" ] && echo "entry left" || echo "entry removed"
SH
	fs_crun_ns "$FS_TMP/crun.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	pid=$(sed -n 's/.* pid=//p' <<<"$output")
	[ -n "$pid" ]
	[[ "$output" == *"entry_pid=$pid pid=$pid"* ]]
	[[ "$output" == *"flamesidecar test bundle"* ]]
	[[ "$output" == *"entry removed"* ]]
	[ "$(jq -r '.hooks.createRuntime[0].path' "$FS_TMP/b/config.json")" = "$FS_BUILD/flamehook" ]
}

@test "other verbs pass straight through: same arguments, stdin, stdout, environment, exit status" {
	fake_runtime
	printf 'to the runtime\n' >"$FS_TMP/in"
	run env FS_WRAPPER_TEST_VAR=kept "$WRAPPER" --root "$FS_TMP/r" exec --tty=false "$NAME" sh -c 'echo "a  b"' "" "é" <"$FS_TMP/in"
	[ "$status" -eq 42 ]
	[ "$output" = "fake runtime output" ]
	printf '%s\0' --root "$FS_TMP/r" exec --tty=false "$NAME" sh -c 'echo "a  b"' "" "é" >"$FS_TMP/want.args"
	cmp "$FS_TMP/want.args" "$FS_TMP/fake.args"
	cmp "$FS_TMP/in" "$FS_TMP/fake.stdin"
	[ "$(cat "$FS_TMP/fake.env")" = kept ]
	# features, state, --version: the same.
	for v in features "state $NAME" --version "delete -f $NAME"; do
		# shellcheck disable=SC2086
		run "$WRAPPER" $v </dev/null
		[ "$status" -eq 42 ]
		printf '%s\0' $v >"$FS_TMP/want.args"
		cmp "$FS_TMP/want.args" "$FS_TMP/fake.args"
	done
}

@test "fail-open: broken config or missing flamehook still runs the runtime, logs why, prints nothing" {
	fs_require_cmd jq
	fake_runtime
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	cp "$FS_TMP/b/config.json" "$FS_TMP/config.orig"

	# A wrapper with no flamehook next to it.
	mkdir "$FS_TMP/bin"
	cp "$WRAPPER" "$FS_TMP/bin/"
	run "$FS_TMP/bin/flamesidecar-runtime" --log "$RTLOG" --log-format json create --bundle "$FS_TMP/b" "$NAME"
	[ "$status" -eq 42 ]
	[ "$output" = "fake runtime output" ]
	cmp "$FS_TMP/config.orig" "$FS_TMP/b/config.json"
	grep -q "not patched: $FS_TMP/bin/flamehook is missing" "$FS_RUN/hook.log"
	# The runtime's own log got a warning in its format (JSON lines).
	[ "$(jq -r .level "$RTLOG")" = warning ]
	[[ "$(jq -r .msg "$RTLOG")" == "flamesidecar-runtime: $NAME: not patched: "* ]]

	# A config.json that is not JSON: the runtime still runs (and will say why).
	echo '{"annotations": {"flamesidecar.io/enable": "true"}, ' >"$FS_TMP/b/config.json"
	run "$WRAPPER" create --bundle "$FS_TMP/b" "$NAME"
	[ "$status" -eq 42 ]
	[ "$output" = "fake runtime output" ]
	grep -q "not patched: $FS_TMP/b/config.json: invalid JSON" "$FS_RUN/hook.log"

	# An unusable config: the runtime is runc from PATH, config.json untouched.
	cp "$FS_TMP/config.orig" "$FS_TMP/b/config.json"
	echo '{"enable": "sometimes"}' >"$FS_TMP/bad.json"
	mkdir "$FS_TMP/path"
	cp "$FS_TMP/fake-runtime" "$FS_TMP/path/runc"
	run env FLAMESIDECAR_CONFIG="$FS_TMP/bad.json" PATH="$FS_TMP/path:/usr/bin:/bin" \
		"$WRAPPER" create --bundle "$FS_TMP/b" "$NAME"
	[ "$status" -eq 42 ]
	[ "$output" = "fake runtime output" ]
	cmp "$FS_TMP/config.orig" "$FS_TMP/b/config.json"

	# An option the wrapper does not know: not patched (the bundle may be elsewhere).
	run "$WRAPPER" --frobnicate create --bundle "$FS_TMP/b" "$NAME"
	[ "$status" -eq 42 ]
	cmp "$FS_TMP/config.orig" "$FS_TMP/b/config.json"
	grep -q "does not know was given; bundle $FS_TMP/b not patched" "$FS_RUN/hook.log"
}

@test "no runtime to run: a clear error and exit 127, never an exec loop" {
	fs_config_set '.runtime_path = $p' --arg p "$WRAPPER"
	run -127 "$WRAPPER" state x
	[ "$status" -eq 127 ]
	[[ "$output" == *"runtime_path $WRAPPER is flamesidecar-runtime itself"* ]]
	fs_config_set '.runtime_path = $p' --arg p "$FS_TMP/nope"
	run -127 "$WRAPPER" state x
	[ "$status" -eq 127 ]
	[[ "$output" == *"runtime_path $FS_TMP/nope is not an executable file"* ]]
	fs_config_set 'del(.runtime_path)'
	mkdir "$FS_TMP/empty"
	run -127 env PATH="$FS_TMP/empty" "$WRAPPER" state x
	[ "$status" -eq 127 ]
	[[ "$output" == *"no runc in PATH ($FS_TMP/empty)"* ]]
}

@test "--help: our usage with examples, then the real runtime's help" {
	fs_require_cmd runc
	run "$WRAPPER" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"flamesidecar-runtime 0."* ]]
	[[ "$output" == *"Examples:"* ]]
	[[ "$output" == *"BinaryName"* ]]
	[[ "$output" == *"runc"*"COMMANDS"* ]]
}

@test "the wrapper is static: LD_PRELOAD from the engine's environment does not run in it" {
	[ -z "${FS_SANITIZE:-}" ] || skip "the sanitizer build links the wrapper dynamically"
	fs_require_cmd cc
	run file "$WRAPPER"
	[[ "$output" == *"static"* ]]
	cat >"$FS_TMP/preload.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void hit(void)
{
	FILE *f = fopen(getenv("FS_PRELOAD_MARK"), "a");
	if (f)
		fclose(f);
}
C
	cc -shared -fPIC -o "$FS_TMP/preload.so" "$FS_TMP/preload.c"
	# Control: a dynamic program does load it.
	env LD_PRELOAD="$FS_TMP/preload.so" FS_PRELOAD_MARK="$FS_TMP/mark" /bin/true
	[ -e "$FS_TMP/mark" ]
	rm "$FS_TMP/mark"
	# The wrapper, exec'ing a static runtime (flamehook --version stands in).
	fs_config_set '.runtime_path = $p' --arg p "$FS_BUILD/flamehook"
	run env LD_PRELOAD="$FS_TMP/preload.so" FS_PRELOAD_MARK="$FS_TMP/mark" "$WRAPPER" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "flamehook "* ]]
	[ ! -e "$FS_TMP/mark" ]
}

# A real containerd (private daemon, ctr run --runc-binary) is in containerd.bats.

@test "log_level: warn drops the info lines; FLAMESIDECAR_LOG_LEVEL wins over it; one line format" {
	fs_require_cmd jq
	fake_runtime
	fs_config_set '.log_level = "warn"'
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	cp -a "$FS_TMP/b" "$FS_TMP/b2"
	run "$WRAPPER" create --bundle "$FS_TMP/b" "$NAME"
	[ "$status" -eq 42 ]
	# Patched, but its info line is below the level.
	[ "$(jq -r '.hooks.createRuntime[-1].args[0]' "$FS_TMP/b/config.json")" = flamehook ]
	# (no hook.log at all: nothing passed the level)
	run grep -c "added $FS_BUILD/flamehook" "$FS_RUN/hook.log"
	[ "$output" = 0 ] || [ ! -e "$FS_RUN/hook.log" ]

	FLAMESIDECAR_LOG_LEVEL=info run "$WRAPPER" create --bundle "$FS_TMP/b2" "$NAME-2"
	[ "$status" -eq 42 ]
	grep -qE "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z info flamesidecar-runtime\[[0-9]+\] create $NAME-2: added $FS_BUILD/flamehook to $FS_TMP/b2/config.json\$" \
		"$FS_RUN/hook.log"
}

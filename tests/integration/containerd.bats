#!/usr/bin/env bats
# flamesidecar-runtime under a real containerd: `ctr run --runc-binary`, so
# containerd's io.containerd.runc.v2 shim calls the wrapper as its runc
# (BinaryName). Opted in by annotation or by "enable": "always": the hook
# registers the container with its host pid, mounts the agent bundle
# read-only, and the wrapper's own `delete` (the shim's runc delete)
# unregisters it when the task is deleted, without a hook process. Not
# opted in: no entry, no mount, and config.json stays exactly as containerd
# wrote it (same bytes, same inode).
#
# Each test starts its own containerd on a socket under $FS_TMP, with its
# own root, state, runc root and fifo dir; the system containerd and its
# paths are never used. The one path outside $FS_TMP: containerd 1.6's shim
# puts its socket in /run/containerd/s/<sha256 of socket/namespace/id>, a
# fixed directory; the shim removes it on exit and teardown checks.

load ../lib/containers

WRAPPER="$FS_BUILD/flamesidecar-runtime"
SHIM_SOCKET_DIR=/run/containerd/s
PATH_ENV=PATH=/usr/sbin:/usr/bin:/sbin:/bin

setup() {
	fs_require_root
	fs_require_cmd containerd ctr containerd-shim-runc-v2 runc jq sha256sum
	[ -x "$WRAPPER" ] || skip "$WRAPPER is not built (make wrapper)"
	fs_setup
	ID=fsc$$-$BATS_TEST_NUMBER
	# A namespace of our own: ctr's default cgroup parent is /<namespace>,
	# which runc leaves behind, so teardown can remove exactly that.
	NS=$ID
	ctrd_start
}

teardown() {
	ctrd_stop
	fs_cleanup
}

# ctrd_start: a private containerd with a minimal configuration. The shim,
# and so the wrapper, inherit containerd's environment: that is how the
# wrapper finds the test's $FLAMESIDECAR_CONFIG.
ctrd_start() {
	CTRD="$FS_TMP/ctrd"
	SOCK="$CTRD/ctrd.sock"
	mkdir -p "$CTRD/fifo"
	# Remember whether /run/containerd existed, to remove only what we made.
	CTRD_MADE_RUN=0
	[ -e /run/containerd ] || CTRD_MADE_RUN=1
	cat >"$CTRD/config.toml" <<TOML
version = 2
root = "$CTRD/root"
state = "$CTRD/state"
# No CRI (it wants CNI and its own paths), no snapshotters we do not use.
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CTRD/opt"
TOML
	# fd 3 closed: bats waits for every process that holds it.
	FLAMESIDECAR_CONFIG="$FS_CONFIG" containerd --root "$CTRD/root" --state "$CTRD/state" \
		--address "$SOCK" --config "$CTRD/config.toml" \
		>"$CTRD/containerd.log" 2>&1 </dev/null 3>&- &
	CTRD_PID=$!
	local end=$((SECONDS + 20))
	until [ -S "$SOCK" ] && c version >/dev/null 2>&1; do
		if ! kill -0 "$CTRD_PID" 2>/dev/null; then
			skip "containerd could not start here: $(tail -n 3 "$CTRD/containerd.log")"
		fi
		[ $SECONDS -lt $end ] || skip "containerd did not answer on $SOCK within 20 s: $(tail -n 3 "$CTRD/containerd.log")"
		sleep 0.05
	done
}

# ctr against the private containerd, bounded in time.
c() {
	timeout 60 ctr --address "$SOCK" --namespace "$NS" "$@"
}

# ctr run with the private fifo and runc roots; the caller adds the runc binary.
ctr_run() {
	c run --fifo-dir "$CTRD/fifo" --runc-root "$CTRD/runc" "$@"
}

# The options that make a --rootfs container like containers.bash's bundles:
# host /usr and /etc read-only, tmpfs /tmp. ctr does not set PATH without an
# image, so set it.
# shellcheck disable=SC2054 # commas belong to the --mount values
ROOTFS_OPTS=(--env "$PATH_ENV" --env HOME=/tmp
	--mount type=bind,src=/usr,dst=/usr,options=rbind:ro:nosuid:nodev
	--mount type=bind,src=/etc,dst=/etc,options=rbind:ro:nosuid:nodev
	--mount type=tmpfs,src=tmpfs,dst=/tmp,options=nosuid:nodev:mode=1777)

cexec() {
	local id=$1
	shift
	c task exec --fifo-dir "$CTRD/fifo" --exec-id "x$RANDOM$RANDOM" "$id" "$@" </dev/null
}

# task_field ID COLUMN: from `ctr task ls` (TASK PID STATUS).
task_field() {
	c task ls | awk -v id="$1" -v col="$2" '$1 == id {print $col}'
}

task_status_is() {
	[ "$(task_field "$1" 3)" = "$2" ]
}

entry() {
	jq -r ".$1" "$FS_RUN/containers/$2.json"
}

bundle_of() {
	echo "$CTRD/state/io.containerd.runtime.v2.task/$NS/$1"
}

shim_socket() {
	echo "$SHIM_SOCKET_DIR/$(printf '%s' "$SOCK/$NS/$1" | sha256sum | cut -d' ' -f1)"
}

# Pids of live shims serving our containerd (zombies have no cmdline).
ctrd_shims() {
	local f
	for f in /proc/[0-9]*/cmdline; do
		if { tr '\0' ' ' <"$f"; } 2>/dev/null | grep -q "^[^ ]*containerd-shim[^ ]* .*-address $SOCK\( \|$\)"; then
			f=${f#/proc/}
			echo "${f%/cmdline}"
		fi
	done
}

no_shim_for() {
	! ctrd_shims_for "$1" | grep -q . || false
}

ctrd_shims_for() {
	local p
	for p in $(ctrd_shims); do
		{ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | grep -q -- "-id $1 " && echo "$p"
	done
	return 0
}

# kill, wait for STOPPED, delete the task (runc delete: unregisters), delete the container.
ctr_remove() {
	local id=$1
	c task kill -s KILL "$id"
	fs_wait_for 10 task_status_is "$id" STOPPED
	c task delete "$id"
	c containers delete "$id"
}

# make_recorder NAME NEXT: a runc stand-in that, on create, records
# config.json's inode, mtime, size and checksum (and keeps a copy), then
# execs NEXT with the same arguments.
make_recorder() {
	cat >"$FS_TMP/$1" <<SH
#!/bin/sh
b= prev=
for a in "\$@"; do
	case "\$prev" in --bundle|-b) b=\$a ;; esac
	case "\$a" in --bundle=*) b=\${a#--bundle=} ;; esac
	prev=\$a
done
if [ -n "\$b" ]; then
	id=\$(basename "\$b")
	{ stat -c '%i %y %s' "\$b/config.json"; sha256sum <"\$b/config.json"; } >"$FS_TMP/$1.\$id.stat"
	cp "\$b/config.json" "$FS_TMP/$1.\$id.json"
fi
exec "$2" "\$@"
SH
	chmod 0755 "$FS_TMP/$1"
}

ctrd_stop() {
	[ -n "${CTRD_PID:-}" ] || return 0
	set +e
	local id p end
	for id in $(c containers ls -q 2>/dev/null); do
		c task kill -s KILL "$id" >/dev/null 2>&1
		fs_wait_for 10 sh -c "! timeout 10 ctr --address '$SOCK' -n $NS task ls | grep -q '^$id .*RUNNING'"
		c task delete -f "$id" >/dev/null 2>&1
		c containers delete "$id" >/dev/null 2>&1
	done
	kill -TERM "$CTRD_PID" 2>/dev/null
	end=$((SECONDS + 10))
	while kill -0 "$CTRD_PID" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$CTRD_PID/stat" 2>/dev/null)" != Z ] &&
		[ $SECONDS -lt $end ]; do
		sleep 0.05
	done
	kill -KILL "$CTRD_PID" 2>/dev/null
	wait "$CTRD_PID" 2>/dev/null
	# Shims outlive containerd by design: any left is a leak, kill it by pid.
	for p in $(ctrd_shims); do
		echo "# teardown: shim $p was still running" >&3
		kill -KILL "$p"
	done
	if [ -d "$CTRD/runc/$NS" ]; then
		for id in $(runc --root "$CTRD/runc/$NS" list -q 2>/dev/null); do
			echo "# teardown: runc container $id was left" >&3
			runc --root "$CTRD/runc/$NS" delete -f "$id" >/dev/null 2>&1
		done
	fi
	for id in "$ID" "$ID-on"; do
		rm -f "$(shim_socket "$id")"
	done
	for p in /sys/fs/cgroup/*/"$NS" /sys/fs/cgroup/"$NS"; do
		[ -d "$p" ] && rmdir "$p"
	done
	if [ "$CTRD_MADE_RUN" = 1 ]; then
		rmdir "$SHIM_SOCKET_DIR" /run/containerd 2>/dev/null
	fi
	CTRD_PID=
	set -e
	return 0
}

@test "ctr run -d --annotation flamesidecar.io/enable=true: entry with the host pid, read-only bundle, unregistered on task delete" {
	fs_make_bundle "$FS_TMP/b" --no-hooks -- true
	ctr_run -d --null-io --runc-binary "$WRAPPER" --annotation flamesidecar.io/enable=true \
		--rootfs "${ROOTFS_OPTS[@]}" "$FS_TMP/b/rootfs" "$ID" sleep 1000 </dev/null
	task_status_is "$ID" RUNNING
	pid=$(task_field "$ID" 2)
	[ -n "$pid" ] && [ "$pid" -gt 0 ]
	# The entry: our id, the host pid containerd reports, containerd's bundle.
	[ "$(entry id "$ID")" = "$ID" ]
	[ "$(entry pid "$ID")" = "$pid" ]
	[ "$(entry ns_pid "$ID")" = 1 ]
	[ "$(entry pid_ns "$ID")" = "$(stat -L -c %i /proc/"$pid"/ns/pid)" ]
	[ "$(entry bundle "$ID")" = "$(bundle_of "$ID")" ]
	[ "$(entry rootfs "$ID")" = "$FS_TMP/b/rootfs" ]
	# The shim gave the wrapper containerd's bundle, and the wrapper patched it.
	cfg="$(bundle_of "$ID")/config.json"
	[ "$(jq -r '.hooks.createRuntime[-1].path' "$cfg")" = "$FS_BUILD/flamehook" ]
	[ "$(jq -c '.hooks.createRuntime[-1].args' "$cfg")" = "[\"flamehook\",\"--config\",\"$FS_CONFIG\",\"createRuntime\"]" ]
	# One hook process per start: no poststart (no profile), no poststop.
	[ "$(jq -c '.hooks | keys' "$cfg")" = '["createRuntime"]' ]
	grep -q "create $ID: added $FS_BUILD/flamehook to $cfg" "$FS_RUN/hook.log"
	# The bundle, read-only even for the container's root.
	run cexec "$ID" cat /opt/flamesidecar/MARKER
	[ "$status" -eq 0 ]
	[ "$output" = "flamesidecar test bundle" ]
	run cexec "$ID" touch /opt/flamesidecar/new
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	opts=$(awk '$5 == "/opt/flamesidecar" {print $6}' /proc/"$pid"/mountinfo)
	[[ ",$opts," == *",ro,"* && ",$opts," == *",nosuid,"* && ",$opts," == *",nodev,"* ]]
	[ -S "$(shim_socket "$ID")" ]
	# The wrapper unregisters in runc delete, which `ctr task delete` waits for.
	c task kill -s KILL "$ID"
	fs_wait_for 10 task_status_is "$ID" STOPPED
	[ -f "$FS_RUN/containers/$ID.json" ]
	c task delete "$ID"
	[ ! -e "$FS_RUN/containers/$ID.json" ]
	grep -q "flamesidecar-runtime\[[0-9]*\] delete $ID: unregistered" "$FS_RUN/hook.log"
	c containers delete "$ID"
	# Nothing left: no shim, no shim socket, no runc state.
	fs_wait_for 10 no_shim_for "$ID"
	fs_wait_for 10 test ! -e "$(shim_socket "$ID")"
	[ -z "$(runc --root "$CTRD/runc/$NS" list -q)" ]
}

@test "ctr run --config with uid 1000 and \"enable\": \"always\" (no annotation): registered as uid 1000, bundle read-only" {
	fs_config_set '.enable = "always"'
	fs_make_bundle "$FS_TMP/b" --no-hooks -- sleep 1000
	# ctr 1.6 has no --user for run: a full spec, as containerd clients send.
	jq --arg r "$FS_TMP/b/rootfs" --arg cg "/$NS/$ID" '.root.path = $r | .linux.cgroupsPath = $cg' \
		"$FS_TMP/b/config.json" >"$FS_TMP/spec.json"
	[ "$(jq -c .annotations "$FS_TMP/spec.json")" = '{}' ]
	ctr_run -d --null-io --runc-binary "$WRAPPER" --config "$FS_TMP/spec.json" "$ID" </dev/null
	task_status_is "$ID" RUNNING
	pid=$(task_field "$ID" 2)
	[ "$(entry pid "$ID")" = "$pid" ]
	[ "$(entry uid "$ID")" = 1000 ]
	[ "$(awk '/^Uid:/ {print $2}' /proc/"$pid"/status)" = 1000 ]
	# exec takes the container's process (uid 1000) as its template.
	run cexec "$ID" sh -c 'id -u; cat /opt/flamesidecar/MARKER'
	[ "$status" -eq 0 ]
	[ "$output" = "1000
flamesidecar test bundle" ]
	run cexec "$ID" sh -c 'echo x >/opt/flamesidecar/MARKER'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	[ "$(cat "$FS_BUNDLE_DIR/MARKER")" = "flamesidecar test bundle" ]
	ctr_remove "$ID"
	[ ! -e "$FS_RUN/containers/$ID.json" ]
	fs_wait_for 10 no_shim_for "$ID"
}

@test "ctr run --rm, opted in: the whole lifecycle in one command leaves no entry, container or task" {
	fs_make_bundle "$FS_TMP/b" --no-hooks -- true
	run ctr_run --rm --runc-binary "$WRAPPER" --annotation flamesidecar.io/enable=true \
		--rootfs "${ROOTFS_OPTS[@]}" "$FS_TMP/b/rootfs" "$ID" \
		sh -c 'cat /opt/flamesidecar/MARKER; touch /opt/flamesidecar/new 2>&1' </dev/null
	echo "$output"
	# ctr exits with the task's status: touch failed on the read-only bundle.
	# (One stream: ctr copies the task's stdout and stderr independently.)
	[ "$status" -eq 1 ]
	[[ "$output" == "flamesidecar test bundle"* ]]
	[[ "$output" == *"Read-only file system"* ]]
	grep -q "createRuntime $ID: registered pid [0-9]* (ns pid 1, uid 0)" "$FS_RUN/hook.log"
	grep -q "flamesidecar-runtime\[[0-9]*\] delete $ID: unregistered" "$FS_RUN/hook.log"
	[ ! -e "$FS_RUN/containers/$ID.json" ]
	[ -z "$(c containers ls -q)" ]
	[ -z "$(c task ls -q)" ]
	fs_wait_for 10 no_shim_for "$ID"
}

@test "not opted in: no entry, no mount, config.json as containerd wrote it (same bytes and inode across the wrapper)" {
	fs_config_set '.enable = "annotation"'
	# shim -> before -> wrapper -> after -> runc: each recorder notes
	# config.json on create, so the wrapper's effect is observed exactly.
	make_recorder before "$WRAPPER"
	make_recorder after "$(command -v runc)"
	fs_config_set '.runtime_path = $p' --arg p "$FS_TMP/after"
	fs_make_bundle "$FS_TMP/b" --no-hooks -- true
	ctr_run -d --null-io --runc-binary "$FS_TMP/before" \
		--rootfs "${ROOTFS_OPTS[@]}" "$FS_TMP/b/rootfs" "$ID" sleep 1000 </dev/null
	task_status_is "$ID" RUNNING
	cfg="$(bundle_of "$ID")/config.json"
	# Both recorders saw the create, and saw the same file.
	[ -s "$FS_TMP/before.$ID.stat" ]
	cmp "$FS_TMP/before.$ID.stat" "$FS_TMP/after.$ID.stat"
	# The file is still the one containerd wrote: same inode, mtime, bytes...
	[ "$(stat -c '%i %y %s' "$cfg")" = "$(head -n 1 "$FS_TMP/before.$ID.stat")" ]
	cmp "$FS_TMP/before.$ID.json" "$cfg"
	# ...which is the spec containerd holds for the container, no hooks.
	[ "$(jq -S . "$cfg")" = "$(c containers info "$ID" | jq -S .Spec)" ]
	# (No bare `! cmd` in these tests: bats does not fail on it.)
	[ "$(grep -c flamehook "$cfg")" = 0 ]
	[ "$(jq -c '.hooks' "$cfg")" = null ]
	[ ! -e "$FS_RUN/containers/$ID.json" ]
	run cexec "$ID" ls /opt/flamesidecar
	[ "$status" -ne 0 ]
	[ -z "$(awk '$5 == "/opt/flamesidecar"' "/proc/$(task_field "$ID" 2)/mountinfo")" ]

	# Control: the same chain sees the wrapper's rewrite of an opted-in one.
	ctr_run -d --null-io --runc-binary "$FS_TMP/before" --annotation flamesidecar.io/enable=true \
		--rootfs "${ROOTFS_OPTS[@]}" "$FS_TMP/b/rootfs" "$ID-on" sleep 1000 </dev/null
	task_status_is "$ID-on" RUNNING
	[ "$(cat "$FS_TMP/before.$ID-on.stat")" != "$(cat "$FS_TMP/after.$ID-on.stat")" ]
	[ "$(grep -c flamehook "$FS_TMP/before.$ID-on.json")" = 0 ]
	grep -q flamehook "$FS_TMP/after.$ID-on.json"
	[ "$(entry pid "$ID-on")" = "$(task_field "$ID-on" 2)" ]

	ctr_remove "$ID-on"
	ctr_remove "$ID"
	[ ! -e "$FS_RUN/containers/$ID-on.json" ]
}

@test "ctr run --rm, opted in, a JVM: the wrapper appends -XX:+PreserveFramePointer to JAVA_TOOL_OPTIONS" {
	java=${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
	[ -x "$java" ] || skip "no JDK 17 at $java"
	fs_make_bundle "$FS_TMP/b" --no-hooks -- true
	run ctr_run --rm --runc-binary "$WRAPPER" --annotation flamesidecar.io/enable=true \
		--rootfs "${ROOTFS_OPTS[@]}" --env JAVA_TOOL_OPTIONS=-Xmx64m "$FS_TMP/b/rootfs" "$ID" \
		"$java" -XX:+PrintFlagsFinal -version </dev/null
	grep -E 'Picked up|bool PreserveFramePointer' <<<"$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Picked up JAVA_TOOL_OPTIONS: -Xmx64m -XX:+PreserveFramePointer"* ]]
	grep -qE 'bool PreserveFramePointer += true .*\{environment\}' <<<"$output"
	grep -q "create $ID: appended -XX:+PreserveFramePointer to JAVA_TOOL_OPTIONS" "$FS_RUN/hook.log"
}

@test "a claimed nerdctl name with a profile trigger under containerd: its quota key names the containerd namespace, from containerd's own bundle path" {
	# A stand-in profiler: the trigger's key is what this test is about.
	cat >"$FS_TMP/fake-sidecar" <<'SH'
#!/bin/sh
while [ $# -gt 0 ]; do
	case "$1" in -o|--folded|--pprof) : >"$2"; shift ;; esac
	shift
done
SH
	chmod +x "$FS_TMP/fake-sidecar"
	fs_config_set '.sidecar_path = $f' --arg f "$FS_TMP/fake-sidecar"
	fs_make_bundle "$FS_TMP/b" --no-hooks -- true
	ctr_run -d --null-io --runc-binary "$WRAPPER" --annotation flamesidecar.io/enable=true \
		--annotation flamesidecar.io/profile=1s --annotation nerdctl/name=web \
		--rootfs "${ROOTFS_OPTS[@]}" "$FS_TMP/b/rootfs" "$ID" sleep 1000 </dev/null
	[ "$(entry bundle "$ID")" = "$(bundle_of "$ID")" ]
	fs_wait_for 10 test -s "$FS_TMP/profiles/$ID/.key"
	cat "$FS_TMP/profiles/$ID/.key"
	[ "$(cat "$FS_TMP/profiles/$ID/.key")" = "claim name nerdctl/web in containerd/$NS" ]
	c task kill -s KILL "$ID"
	fs_wait_for 10 task_status_is "$ID" STOPPED
	c task delete "$ID"
	c containers delete "$ID"
}

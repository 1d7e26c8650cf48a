#!/usr/bin/env bats
# A real Docker engine (Debian's docker.io) with flamesidecar-runtime
# registered as runtimes, the way an operator sets it up in daemon.json:
#   flamesidecar        runtimeArgs ["--opt-in"]: every container started
#                       with it is profiled (Docker < 24 has no --annotation)
#   flamesidecar-plain  no arguments: only containers that opt in
#                       (FLAMESIDECAR_ENABLE=1, or an annotation on Docker 24+)
# One private dockerd for the file: its own socket, data root, exec root,
# cgroup parent, no iptables, no bridge, vfs storage. The image is made with
# `docker import` from an almost empty rootfs; host /usr and /etc are bound
# read-only into the containers. Everything is removed at the end.

load ../lib/containers
load ../lib/docker


setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	command -v dockerd >/dev/null && command -v runc >/dev/null && command -v jq >/dev/null || return 0
	DOCKER=$(docker_bin)
	[ -n "$DOCKER" ] || return 0
	fs_setup
	dockerd_start || { dockerd_stop; return 0; }
	export FS_TMP FS_RUN FS_CONFIG FLAMESIDECAR_CONFIG DK DK_CGROUP DOCKER DK_MADE_RUN
}

teardown_file() {
	dockerd_stop
	fs_cleanup
}

setup() {
	fs_require_root
	fs_require_cmd dockerd runc jq
	[ -n "${DK:-}" ] && [ -S "$DK/docker.sock" ] || skip "the private dockerd did not start (see its log)"
	NAME=fsdk$$-$BATS_TEST_NUMBER
}

entry() {
	jq -r ".$1" "$FS_RUN/containers/$2.json"
}

bundle_of() {
	echo "$DK/exec/containerd/daemon/io.containerd.runtime.v2.task/moby/$1"
}

# dk_run NAME RUNTIME [docker run options] -- COMMAND...
dk_run() {
	local name=$1 rt=$2
	shift 2
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	dk run -d --name "$name" --runtime "$rt" --network none --user 1000:1000 -e HOME=/tmp \
		-v /usr:/usr:ro -v /etc:/etc:ro "${opts[@]}" fstest:tiny "$@"
}

@test "docker: --opt-in runtime registers with Docker's name, bundle read-only; stop unregisters" {
	id=$(dk_run "$NAME" flamesidecar -- /usr/bin/sleep 1000)
	[ -f "$FS_RUN/containers/$id.json" ]
	[ "$(entry names.name "$id")" = "$NAME" ]
	[ "$(entry names.engine "$id")" = docker ]
	[ "$(entry pid "$id")" = "$(dk inspect -f '{{.State.Pid}}' "$NAME")" ]
	[ "$(entry uid "$id")" = 1000 ]
	[ "$(entry bundle "$id")" = "$(bundle_of "$id")" ]
	jq -e '.hooks.createRuntime[-1].args | index("--opt-in")' "$(bundle_of "$id")/config.json"
	# One hook process per start: no poststart (no profile asked for), no poststop.
	jq -e '[.hooks | to_entries[] | select(.value[]?.path | endswith("/flamehook")) | .key] == ["createRuntime"]' \
		"$(bundle_of "$id")/config.json"
	run dk exec "$NAME" cat /opt/flamesidecar/MARKER
	[ "$output" = "flamesidecar test bundle" ]
	run dk exec -u 0 "$NAME" touch /opt/flamesidecar/x
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	run "$FS_SIDECAR" list
	[[ "$output" == *"${id:0:12} "*"$NAME "* ]]
	dk stop -t 1 "$NAME"
	[ ! -e "$FS_RUN/containers/$id.json" ]
	# by the wrapper's delete (the shim's), not a poststop hook process
	grep -q "flamesidecar-runtime\[[0-9]*\] delete $id: unregistered" "$FS_RUN/hook.log"
	dk rm "$NAME"
}

@test "docker: FLAMESIDECAR_ENABLE=1 opts one container in; without it the plain runtime leaves it untouched" {
	id=$(dk_run "$NAME-env" flamesidecar-plain -e FLAMESIDECAR_ENABLE=1 -- /usr/bin/sleep 1000)
	[ "$(entry names.name "$id")" = "$NAME-env" ]
	plain=$(dk_run "$NAME-plain" flamesidecar-plain -- /usr/bin/sleep 1000)
	[ ! -e "$FS_RUN/containers/$plain.json" ]
	# config.json is the file Docker wrote: no hooks of ours.
	! grep -q flamehook "$(bundle_of "$plain")/config.json" || false
	run dk exec "$NAME-plain" sh -c 'grep -c " /opt/flamesidecar " /proc/self/mountinfo'
	[ "$output" = 0 ]
	! grep -q "$plain" "$FS_RUN/hook.log" || false
	dk rm -f "$NAME-env" "$NAME-plain"
	[ ! -e "$FS_RUN/containers/$id.json" ]
}

@test "docker: an annotation opts in where the engine passes it (Docker 24+)" {
	v=$(dk version -f '{{.Server.Version}}')
	[ "${v%%.*}" -ge 24 ] || skip "Docker $v has no --annotation (added in 24): use --opt-in or FLAMESIDECAR_ENABLE"
	id=$(dk_run "$NAME" flamesidecar-plain --annotation flamesidecar.io/enable=true -- /usr/bin/sleep 1000)
	[ "$(entry names.name "$id")" = "$NAME" ]
	dk rm -f "$NAME"
}

@test "docker: run, top and map on a JVM by its Docker name; the hot method is named" {
	[ -x "$JAVA17" ] || skip "no JDK 17 at $JAVA17"
	[ -f "$FS_BUILD/java/flametest/Workload.class" ] || skip "Java workloads not built (make agent)"
	id=$(dk_run "$NAME-jvm" flamesidecar -v "$FS_BUILD/java:/opt/fsjava:ro" -- \
		"$JAVA17" -XX:+PreserveFramePointer -cp /opt/fsjava flametest.Workload --threads 2)
	fs_wait_for 60 sh -c "'$DOCKER' -H 'unix://$DK/docker.sock' logs '$NAME-jvm' 2>&1 | grep -q READY"
	pid=$(dk inspect -f '{{.State.Pid}}' "$NAME-jvm")
	echo "$pid" >"$FS_TMP/jvm-pid"
	cd "$FS_TMP"
	run "$FS_SIDECAR" run "$NAME-jvm" -d 4s -F 199 -o docker.svg
	echo "$output"
	[ "$status" -eq 0 ]
	all=$(awk '{ n += $NF } END { print n + 0 }' docker.folded)
	hot=$(awk '/flametest\.Workload\.hotMethod/ { n += $NF } END { print n + 0 }' docker.folded)
	echo "# docker: $hot of $all samples in hotMethod" >&3
	[ "$all" -gt 50 ]
	[ $((hot * 2)) -gt "$all" ]
	grep -q 'flametest.Workload.hotMethod' docker.svg
	run "$FS_SIDECAR" top "$NAME-jvm" --once -d 2s
	[ "$status" -eq 0 ]
	[[ "$output" == *"flametest.Workload.hotMethod"* ]]
	run "$FS_SIDECAR" map "$NAME-jvm"
	[ "$status" -eq 0 ]
	grep -q 'flametest.Workload.hotMethod' "/tmp/perf-$pid.map"
	rm -f "/tmp/perf-$pid.map"
	dk rm -f "$NAME-jvm"
	[ ! -e "$FS_RUN/containers/$id.json" ]
}

@test "docker: nothing of the engine's is left in the registry after rm -f of running containers" {
	a=$(dk_run "$NAME-a" flamesidecar -- /usr/bin/sleep 1000)
	b=$(dk_run "$NAME-b" flamesidecar -- /usr/bin/sleep 1000)
	[ -f "$FS_RUN/containers/$a.json" ] && [ -f "$FS_RUN/containers/$b.json" ]
	dk rm -f "$NAME-a" "$NAME-b"
	[ ! -e "$FS_RUN/containers/$a.json" ] && [ ! -e "$FS_RUN/containers/$b.json" ]
	# and their shims are gone (they serve one container each)
	fs_wait_for 10 sh -c "! pgrep -f 'containerd-shim.* -id ($a|$b)( |\$)'"
}

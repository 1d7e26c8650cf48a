#!/usr/bin/env bats
# flamehook on real runc, crun and Podman containers: the read-only bundle
# mount, the registry entry, poststop, stale entries, hostile rootfs and
# hostile state JSON, concurrency, and immunity to LD_PRELOAD.

load ../lib/containers

setup() {
	fs_test_setup fsh
}

teardown() {
	fs_cleanup
}

# Entry field $1 of container $2
entry() {
	jq -r ".$1" "$FS_RUN/containers/$2.json"
}

@test "runc: annotated container as uid 1000 gets the bundle read-only and a registry entry matching /proc" {
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_runc_run "$NAME" "$FS_TMP/b"
	pid=$(fs_container_pid "$NAME")
	run runc exec --user 1000:1000 "$NAME" cat /opt/flamesidecar/MARKER
	[ "$status" -eq 0 ]
	[ "$output" = "flamesidecar test bundle" ]
	run runc exec --user 1000:1000 "$NAME" touch /opt/flamesidecar/new
	[ "$status" -ne 0 ]
	[[ "$output" == *"Read-only file system"* ]]
	opts=$(runc exec "$NAME" awk '$5 == "/opt/flamesidecar" {print $6}' /proc/self/mountinfo)
	[[ ",$opts," == *",ro,"* && ",$opts," == *",nosuid,"* && ",$opts," == *",nodev,"* ]]
	# The entry matches /proc.
	[ "$(entry id "$NAME")" = "$NAME" ]
	[ "$(entry pid "$NAME")" = "$pid" ]
	[ "$(entry ns_pid "$NAME")" = 1 ]
	[ "$(entry start_time "$NAME")" = "$(awk '{sub(/.*\) /, ""); print $20}' /proc/$pid/stat)" ]
	[ "$(entry uid "$NAME")" = 1000 ]
	[ "$(awk '/^Uid:/ {print $2}' /proc/$pid/status)" = 1000 ]
	[ "$(entry pid_ns "$NAME")" = "$(stat -L -c %i /proc/$pid/ns/pid)" ]
	[ "$(entry mnt_ns "$NAME")" = "$(stat -L -c %i /proc/$pid/ns/mnt)" ]
	[ "$(entry mount_point "$NAME")" = /opt/flamesidecar ]
	[ "$(entry rootfs "$NAME")" = "$FS_TMP/b/rootfs" ]
	[ "$(stat -c %a "$FS_RUN/containers")" = 700 ]
	[ "$(stat -c %a "$FS_RUN/containers/$NAME.json")" = 600 ]
	# The host does not see the mount.
	! grep -q " /opt/flamesidecar " /proc/self/mountinfo || false
	run "$FS_SIDECAR" list
	[ "$status" -eq 0 ]
	[[ "$output" == *"$NAME"*alive* ]]
}

@test "runc: without the annotation there is no mount and no entry" {
	fs_make_bundle "$FS_TMP/b" -- sleep 1000
	fs_runc_run "$NAME" "$FS_TMP/b"
	run runc exec "$NAME" ls /opt/flamesidecar
	[ "$status" -ne 0 ]
	[ ! -e "$FS_RUN/containers/$NAME.json" ]
}

@test "config enable=always registers a container without the annotation" {
	fs_config_set '.enable = "always"'
	fs_make_bundle "$FS_TMP/b" -- sleep 1000
	fs_runc_run "$NAME" "$FS_TMP/b"
	[ -f "$FS_RUN/containers/$NAME.json" ]
	runc exec "$NAME" cat /opt/flamesidecar/MARKER
}

@test "the optional poststop removes the entry at once; a runtime killed before poststop leaves a stale entry that gc removes" {
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_runc_run "$NAME" "$FS_TMP/b"
	[ -f "$FS_RUN/containers/$NAME.json" ]
	runc kill "$NAME" KILL
	fs_wait_for 10 sh -c "[ \"\$(runc state $NAME | jq -r .status)\" = stopped ]"
	runc delete "$NAME"
	[ ! -e "$FS_RUN/containers/$NAME.json" ]
	grep -q "poststop $NAME: unregistered" "$FS_RUN/hook.log"

	# Now the runtime "dies": the process is killed and nobody runs poststop.
	fs_make_bundle "$FS_TMP/b2" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_runc_run "$NAME-b" "$FS_TMP/b2"
	pid=$(fs_container_pid "$NAME-b")
	kill -9 "$pid"
	fs_wait_for 10 sh -c "! kill -0 $pid 2>/dev/null"
	# gc --dry-run only says what it would remove (and sweeps nothing).
	run "$FS_SIDECAR" gc --dry-run
	[ "$status" -eq 0 ]
	[[ "$output" == *"would remove $NAME-b"* ]]
	[ -f "$FS_RUN/containers/$NAME-b.json" ]
	run "$FS_SIDECAR" gc
	[ "$status" -eq 0 ]
	[[ "$output" == *"removed $NAME-b"* ]]
	[ ! -e "$FS_RUN/containers/$NAME-b.json" ]
}

@test "default hooks.d install (createRuntime only, no poststop): a stopped container's entry disappears at the next list, a live one stays" {
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true --no-poststop -- sleep 1000
	[ "$(jq -c '.hooks | keys' "$FS_TMP/b/config.json")" = '["createRuntime","poststart"]' ]
	fs_make_bundle "$FS_TMP/live" --annotate flamesidecar.io/enable=true --no-poststop -- sleep 1000
	fs_runc_run "$NAME" "$FS_TMP/b"
	fs_runc_run "live-$NAME" "$FS_TMP/live"
	[ -f "$FS_RUN/containers/$NAME.json" ]
	run "$FS_SIDECAR" list
	[[ "$output" == *"$NAME "*alive* ]]
	pid=$(fs_container_pid "$NAME")
	runc kill "$NAME" KILL
	fs_wait_for 10 sh -c "[ \"\$(runc state $NAME | jq -r .status)\" = stopped ]"
	runc delete "$NAME"
	# Gone for good once reaped (a zombie still counts as its process).
	fs_wait_for 10 sh -c "[ ! -e /proc/$pid ]"
	# Nothing ran at the stop: the entry is still there, stale...
	[ -f "$FS_RUN/containers/$NAME.json" ]
	# ...until the next verb that reads the registry.
	run "$FS_SIDECAR" list
	[ "$status" -eq 0 ]
	echo "$output"
	! grep -q "^$NAME " <<<"$output" || false
	[[ "$output" == *"live-$NAME "*alive* ]]
	[ ! -e "$FS_RUN/containers/$NAME.json" ]
	[ -f "$FS_RUN/containers/live-$NAME.json" ]
	# No leftovers of the sweep's rename either.
	[ -z "$(find "$FS_RUN/containers" -name '.sweep.*')" ]

	# The same id used again by a new container: registered afresh.
	fs_runc_run "$NAME" "$FS_TMP/b"
	pid=$(fs_container_pid "$NAME")
	[ "$(entry pid "$NAME")" = "$pid" ]
	runc kill "$NAME" KILL
	fs_wait_for 10 sh -c "[ \"\$(runc state $NAME | jq -r .status)\" = stopped ]"
	runc delete "$NAME"
	fs_wait_for 10 sh -c "[ ! -e /proc/$pid ]"
	# Any lookup sweeps too: `top` of the gone container does not find it.
	run "$FS_SIDECAR" top "$NAME"
	[ "$status" -ne 0 ]
	[[ "$output" == *"no registered container"* ]]
	[ ! -e "$FS_RUN/containers/$NAME.json" ]
	run "$FS_SIDECAR" list --json
	[ "$(jq -r --arg n "$NAME" '[.[] | select(.id == $n)] | length' <<<"$output")" = 0 ]
}

@test "crun: annotated container gets the bundle read-only and an entry" {
	fs_require_cmd crun unshare
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	cat >"$FS_TMP/crun.sh" <<SH
crun run -d --bundle "$FS_TMP/b" "$NAME" >"$FS_TMP/b/out.log" 2>&1 </dev/null
pid=\$(crun state "$NAME" | jq -r .pid)
echo "pid=\$pid"
crun exec --user 1000:1000 "$NAME" cat /opt/flamesidecar/MARKER
crun exec --user 1000:1000 "$NAME" touch /opt/flamesidecar/x 2>&1 || echo "write refused"
crun exec "$NAME" awk '\$5 == "/opt/flamesidecar" {print "opts=" \$6}' /proc/self/mountinfo
echo "entry_pid=\$(jq -r .pid "$FS_RUN/containers/$NAME.json") uid=\$(jq -r .uid "$FS_RUN/containers/$NAME.json")"
crun kill "$NAME" KILL
fs_wait_stopped crun "$NAME"
crun delete "$NAME"
[ -e "$FS_RUN/containers/$NAME.json" ] && echo "entry left" || echo "entry removed"
SH
	fs_crun_ns "$FS_TMP/crun.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	pid=$(sed -n 's/^pid=//p' <<<"$output")
	[[ "$output" == *"flamesidecar test bundle"* ]]
	[[ "$output" == *"Read-only file system"* ]]
	[[ "$output" == *opts=ro,nosuid,nodev* ]]
	[[ "$output" == *"entry_pid=$pid uid=1000"* ]]
	[[ "$output" == *"entry removed"* ]]
}

# podman_hooks_dir [DIR...]: our hooks.d files (config/hooks.d, and the
# files of the config/ subdirectories named, e.g. hooks.d-optional) in
# $FS_TMP/hooks.d, pointing at the build's hook and the test config.
podman_hooks_dir() {
	local dirs=(hooks.d "$@") d f
	mkdir -p "$FS_TMP/hooks.d"
	for d in "${dirs[@]}"; do for f in "$FS_TOP/config/$d"/*.json.in; do
		jq --arg h "$FS_HOOK" --arg c "$FS_CONFIG" \
			'.hook.path = $h | .hook.args = ["flamehook", "--config", $c, .hook.args[-1]]' \
			"$f" >"$FS_TMP/hooks.d/$(basename "$f" .in)"
	done; done
	mkdir -p "$FS_TMP/prootfs"/{tmp,usr,etc}
	chmod 1777 "$FS_TMP/prootfs/tmp"
	for l in bin lib lib64 sbin; do ln -s "usr/$l" "$FS_TMP/prootfs/$l"; done
}

podman_run() {
	podman --runtime runc --cgroup-manager=cgroupfs --hooks-dir "$FS_TMP/hooks.d" run \
		--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --user 1000:1000 \
		-v /usr:/usr:ro -v /etc:/etc:ro "$@"
}

@test "podman with hooks.d: annotated container is mounted and registered; unannotated never calls the hook" {
	fs_require_cmd podman
	podman_hooks_dir
	echo "podman $NAME" >>"$FS_TMP/containers"
	cid=$(podman_run -d --name "$NAME" --annotation flamesidecar.io/enable=true --rootfs "$FS_TMP/prootfs" sleep 1000)
	run podman exec "$NAME" cat /opt/flamesidecar/MARKER
	[ "$output" = "flamesidecar test bundle" ]
	run podman exec "$NAME" touch /opt/flamesidecar/x
	[[ "$output" == *"Read-only file system"* ]]
	[ "$(entry uid "$cid")" = 1000 ]
	[ "$(entry pid "$cid")" = "$(podman inspect -f '{{.State.Pid}}' "$NAME")" ]
	lines_before=$(wc -l <"$FS_RUN/hook.log")
	run podman_run --rm --name "$NAME-plain" --rootfs "$FS_TMP/prootfs" sh -c 'grep -c " /opt/flamesidecar " /proc/self/mountinfo'
	[ "$output" = 0 ]
	[ "$(wc -l <"$FS_RUN/hook.log")" = "$lines_before" ]
	pid=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	podman rm -f -t 0 "$NAME"
	# The default install has no poststop: the next read of the registry
	# removes the entry, once the process is gone (reaped).
	fs_wait_for 10 sh -c "[ ! -e /proc/$pid ]"
	run "$FS_SIDECAR" list
	[ "$status" -eq 0 ]
	[[ "$output" != *"${cid:0:12}"* ]]
	[ ! -e "$FS_RUN/containers/$cid.json" ]
	! grep -q "poststop" "$FS_RUN/hook.log" || false
}

@test "podman with the optional poststop hooks.d entry: podman rm removes the entry at once" {
	fs_require_cmd podman
	podman_hooks_dir hooks.d-optional
	[ -f "$FS_TMP/hooks.d/flamesidecar-poststop.json" ]
	echo "podman $NAME" >>"$FS_TMP/containers"
	cid=$(podman_run -d --name "$NAME" --annotation flamesidecar.io/enable=true --rootfs "$FS_TMP/prootfs" sleep 1000)
	[ -f "$FS_RUN/containers/$cid.json" ]
	podman rm -f -t 0 "$NAME"
	[ ! -e "$FS_RUN/containers/$cid.json" ]
	grep -q "poststop $cid: unregistered" "$FS_RUN/hook.log"
}

# --- hostile rootfs --------------------------------------------------------

snapshot() {
	{
		find "$FS_TMP/sentinel" -printf '%p %y %m %s\n' | sort
		grep -F "$FS_TMP" /proc/self/mountinfo | awk '{print $4, $5}' | sort
	} >"$1"
}

hostile_rootfs_case() {
	local what=$1
	mkdir -p "$FS_TMP/sentinel"
	echo secret >"$FS_TMP/sentinel/secret"
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	mkdir -p "$FS_TMP/b/rootfs/opt"
	case "$what" in
	abs-symlink) ln -s "$FS_TMP/sentinel" "$FS_TMP/b/rootfs/opt/flamesidecar" ;;
	rel-escape) ln -s "../../../../../../../../../../..$FS_TMP/sentinel" "$FS_TMP/b/rootfs/opt/flamesidecar" ;;
	dir-symlink) rmdir "$FS_TMP/b/rootfs/opt" && ln -s "$FS_TMP/sentinel" "$FS_TMP/b/rootfs/opt" ;;
	dangling) ln -s a "$FS_TMP/b/rootfs/opt/flamesidecar" && ln -s b "$FS_TMP/b/rootfs/opt/a" && ln -s /nonexistent/c "$FS_TMP/b/rootfs/opt/b" ;;
	proc-self) ln -s "/proc/self/root$FS_TMP/sentinel" "$FS_TMP/b/rootfs/opt/flamesidecar" ;;
	fifo) mkfifo "$FS_TMP/b/rootfs/opt/flamesidecar" ;;
	file) echo x >"$FS_TMP/b/rootfs/opt/flamesidecar" ;;
	device) mknod "$FS_TMP/b/rootfs/opt/flamesidecar" c 1 3 ;;
	socket) python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
		"$FS_TMP/b/rootfs/opt/flamesidecar" ;;
	esac
	snapshot "$FS_TMP/before"
	fs_runc_run "$NAME" "$FS_TMP/b"
	[ "$(runc state "$NAME" | jq -r .status)" = running ]
	snapshot "$FS_TMP/after"
	diff "$FS_TMP/before" "$FS_TMP/after"
	grep -q "agent bundle not mounted: .*refusing" "$FS_RUN/hook.log"
	# Registered without a mount: the sidecar can still sample it.
	[ "$(entry mount_point "$NAME")" = "" ]
	! runc exec "$NAME" grep -q " /opt/flamesidecar " /proc/self/mountinfo || false
}

@test "hostile rootfs: mount point is an absolute symlink to a host directory" { hostile_rootfs_case abs-symlink; }
@test "hostile rootfs: mount point is a relative ../../.. escape" { hostile_rootfs_case rel-escape; }
@test "hostile rootfs: a parent of the mount point is a symlink to a host directory" { hostile_rootfs_case dir-symlink; }
@test "hostile rootfs: mount point is a dangling symlink chain" { hostile_rootfs_case dangling; }
@test "hostile rootfs: mount point goes through /proc/self/root" { hostile_rootfs_case proc-self; }
@test "hostile rootfs: mount point is a FIFO" { hostile_rootfs_case fifo; }
@test "hostile rootfs: mount point is a regular file" { hostile_rootfs_case file; }
@test "hostile rootfs: mount point is a device node" { hostile_rootfs_case device; }
@test "hostile rootfs: mount point is a socket" { fs_require_cmd python3; hostile_rootfs_case socket; }

# --- hostile state JSON ------------------------------------------------------

# What a hostile state could leave behind: mounts under the test's
# directory or the states' bundles, registry entries, files beside the log.
hook_footprint() {
	awk -v t="$FS_TMP" '$5 ~ "^" t || $5 ~ "^/nonexistent" { print "mount " $5 }' /proc/self/mountinfo | sort
	ls -A "$FS_RUN" "$FS_RUN/containers" /run/flamesidecar/containers 2>/dev/null || true
}

# Run the hook on stdin file $1 with memory capped at 64 MiB; the state's
# bundle points into FS_TMP or nowhere. The hook must refuse it and leave
# nothing but its log line: fails (showing the difference) otherwise.
hook_on() {
	fs_config_set '.enable = "always"'
	mkdir -p "$FS_RUN"
	touch "$FS_RUN/hook.log"
	local before after
	before=$(hook_footprint)
	# 64 MiB of address space bounds the hook's memory (ASan's shadow
	# needs terabytes of it, so the sanitizer build runs without the cap).
	local cap="ulimit -v 65536;"
	[ -z "${FS_SANITIZE:-}" ] || cap=""
	run bash -c "$cap exec '$FS_HOOK' --config '$FS_CONFIG' createRuntime <'$1'"
	after=$(hook_footprint)
	if [ "$before" != "$after" ]; then
		echo "the hook changed something on a hostile state:" >&2
		diff <(echo "$before") <(echo "$after") >&2 || true
		return 1
	fi
}

@test "hostile state: 100 MB of input is refused with bounded memory" {
	head -c 100000000 /dev/zero | tr '\0' ' ' >"$FS_TMP/big"
	hook_on "$FS_TMP/big"
	[ "$status" -eq 0 ]
	[[ "$output" == *"larger than"* ]]
}

@test "hostile state: 10,000-deep nesting" {
	python3 -c 'print("{\"id\":\"x\",\"a\":" + "[" * 10000 + "]" * 10000 + "}")' >"$FS_TMP/deep"
	hook_on "$FS_TMP/deep"
	[ "$status" -eq 0 ]
	[[ "$output" == *"nested deeper"* ]]
}

@test "hostile state: invalid UTF-8 and NUL bytes" {
	printf '{"id":"ab\xff\xfe","pid":5}' >"$FS_TMP/utf8"
	hook_on "$FS_TMP/utf8"
	[ "$status" -eq 0 ]
	[[ "$output" == *"state rejected"* ]]
	printf '{"id":"a\0b","pid":5}' >"$FS_TMP/nul"
	hook_on "$FS_TMP/nul"
	[ "$status" -eq 0 ]
	[[ "$output" == *"NUL"* ]]
}

@test "hostile state: pid 0, 1, negative, 2^32, a host process" {
	for p in 0 1 -5 4294967296 99999999999999999999 "\"12\"" 1.5 $$; do
		printf '{"id":"c%s","pid":%s,"bundle":"%s"}' "${p//[^0-9]/}" "$p" "$FS_TMP/nob" >"$FS_TMP/st"
		hook_on "$FS_TMP/st"
		echo "pid $p: $output"
		[ "$status" -eq 0 ]
		[[ "$output" == *refusing* || "$output" == *rejected* || "$output" == *"not registered"* ]]
	done
	[ ! -e "$FS_RUN/containers" ] || [ -z "$(ls -A "$FS_RUN/containers")" ]
}

@test "hostile state: ids with / or .. never become paths" {
	for id in "../../etc/x" "a/b" ".." ".hidden" "-rf" "" "$(printf 'x%.0s' $(seq 200))"; do
		jq -cn --arg id "$id" '{id: $id, pid: 5, bundle: "/nonexistent"}' >"$FS_TMP/st"
		hook_on "$FS_TMP/st"
		[ "$status" -eq 0 ]
		[[ "$output" == *"state rejected"* ]]
	done
	[ ! -e "$FS_RUN/containers" ] || [ -z "$(ls -A "$FS_RUN/containers")" ]
	[ ! -e /etc/x.json ]
}

@test "hostile state: annotations with newlines give one escaped log line" {
	jq -cn '{id: "nl1", pid: 1, bundle: "/nonexistent", annotations: {"flamesidecar.io/enable": "true", "flamesidecar.io/profile": "5s\nFAKE LINE"}}' >"$FS_TMP/st"
	printf '{"id":"nl2\\nFAKE","pid":7}' >"$FS_TMP/st2"
	hook_on "$FS_TMP/st"
	[ "$status" -eq 0 ]
	hook_on "$FS_TMP/st2"
	[ "$status" -eq 0 ]
	! grep -q '^FAKE' "$FS_RUN/hook.log" || false
	grep -q 'x0a' "$FS_RUN/hook.log"
	[ "$(grep -c flamehook "$FS_RUN/hook.log")" = "$(wc -l <"$FS_RUN/hook.log")" ]
}

@test "a missing or broken config fails open" {
	echo '{"enable": 3' >"$FS_TMP/bad.json"
	run "$FS_HOOK" --config "$FS_TMP/bad.json" createRuntime <<<'{"id":"x","pid":5}'
	[ "$status" -eq 0 ]
	[[ "$output" == *"configuration unusable"* ]]
	run "$FS_HOOK" --config "$FS_TMP/none.json" poststop <<<'{"id":"x"}'
	[ "$status" -eq 0 ]
	run "$FS_HOOK" bogus-stage </dev/null
	[ "$status" -eq 0 ]
}

@test "50 annotated containers started concurrently: 50 intact entries, 50 mounts" {
	for i in $(seq 1 50); do
		fs_make_bundle "$FS_TMP/c$i" --annotate flamesidecar.io/enable=true -- sleep 1000
	done
	for i in $(seq 1 50); do
		fs_runc_run "$NAME-$i" "$FS_TMP/c$i" &
	done
	wait
	[ "$(ls "$FS_RUN/containers" | grep -c '\.json$')" = 50 ]
	for i in $(seq 1 50); do
		f="$FS_RUN/containers/$NAME-$i.json"
		jq -e --arg n "$NAME-$i" '.id == $n and .mount_point == "/opt/flamesidecar"' "$f" >/dev/null
		pid=$(jq -r .pid "$f")
		grep -q " /opt/flamesidecar .*ro,nosuid,nodev" "/proc/$pid/mountinfo"
	done
	[ -z "$(ls -A "$FS_RUN/containers" | grep -v '\.json$')" ]
}

@test "the hook ignores LD_PRELOAD (static binary; an image ENV cannot run code in it)" {
	[ -z "${FS_SANITIZE:-}" ] || skip "the sanitizer build links the hook dynamically"
	fs_require_cmd cc
	cat >"$FS_TMP/evil.c" <<C
#include <stdio.h>
#include <errno.h>
#include <string.h>
/* Leaves a mark named after the program it was loaded into. */
__attribute__((constructor)) static void evil(void) {
	char p[4096]; snprintf(p, sizeof(p), "$FS_TMP/pwned-%s", program_invocation_short_name);
	FILE *f = fopen(p, "w"); if (f) fclose(f);
}
C
	cc -D_GNU_SOURCE -shared -fPIC -o "$FS_TMP/evil.so" "$FS_TMP/evil.c"
	# The preload works on a dynamic program...
	LD_PRELOAD="$FS_TMP/evil.so" /bin/true
	[ -e "$FS_TMP/pwned-true" ]
	# ...and not on the hook.
	LD_PRELOAD="$FS_TMP/evil.so" LD_LIBRARY_PATH="$FS_TMP" "$FS_HOOK" --config "$FS_CONFIG" poststop <<<'{"id":"x"}'
	[ ! -e "$FS_TMP/pwned-flamehook" ]
	run readelf -l "$FS_HOOK"
	[[ "$output" != *"Requesting program interpreter"* ]]
	# And through a runtime whose environment carries it (runc itself is
	# dynamic and loads it; the hook it starts must not).
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	LD_PRELOAD="$FS_TMP/evil.so" fs_runc_run "$NAME" "$FS_TMP/b"
	[ -f "$FS_RUN/containers/$NAME.json" ]
	[ -e "$FS_TMP/pwned-runc" ]
	[ ! -e "$FS_TMP/pwned-flamehook" ]
}

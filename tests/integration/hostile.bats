#!/usr/bin/env bats
# Hostile containers, round two (issue 12): each test does what a hostile
# container would do and asserts what must stay true on the host.

load ../lib/containers

setup() {
	fs_test_setup fs-hostile
}

teardown() {
	fs_cleanup
}

# The host's mount points (field 5 of mountinfo), sorted.
host_mounts() {
	awk '{print $5}' /proc/self/mountinfo | sort
}

@test "propagation: a host directory bound rshared at /opt never gets the bundle mount (5 cycles)" {
	mkdir -p "$FS_TMP/srv/x"
	mount --bind "$FS_TMP/srv/x" "$FS_TMP/srv/x"
	mount --make-shared "$FS_TMP/srv/x"
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_bundle_set "$FS_TMP/b" '.mounts += [{destination: "/opt", type: "bind", source: $s,
		options: ["rbind", "rshared"]}] | .linux.rootfsPropagation = "shared"' --arg s "$FS_TMP/srv/x"
	before=$(host_mounts)
	for i in 1 2 3 4 5; do
		fs_runc_run "$NAME-$i" "$FS_TMP/b"
		# The container runs (fail-open), without the bundle.
		[ "$(runc state "$NAME-$i" | jq -r .status)" = running ]
		run runc exec "$NAME-$i" cat /opt/flamesidecar/MARKER
		[ "$status" -ne 0 ]
		[ "$(host_mounts)" = "$before" ]
		runc kill "$NAME-$i" KILL
		fs_wait_stopped runc "$NAME-$i"
		runc delete -f "$NAME-$i"
	done
	[ "$(host_mounts)" = "$before" ]
	[ ! -e "$FS_TMP/srv/x/flamesidecar/MARKER" ]
	grep -q "shared mount" "$FS_RUN/hook.log"
	# Still registered (without a mount point), so run can sample it.
	grep -q "no bundle" "$FS_RUN/hook.log"
}

@test "propagation: a privileged container cannot remount the bundle rw nor mount into the host's bundle" {
	fs_make_bundle "$FS_TMP/b" --uid 0 --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_bundle_set "$FS_TMP/b" '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"] | .value |= unique)'
	before_tree=$(cd "$FS_BUNDLE_DIR" && find . -printf '%p %s %T@\n' | sort; sha256sum ./*)
	before=$(host_mounts)
	fs_runc_run "$NAME" "$FS_TMP/b"
	run runc exec "$NAME" cat /opt/flamesidecar/MARKER
	[ "$output" = "flamesidecar test bundle" ]
	# What a hostile root with CAP_SYS_ADMIN does: remount rw, write,
	# mount on top of and inside the bundle.
	runc exec "$NAME" mount -o remount,rw /opt/flamesidecar
	runc exec "$NAME" sh -c 'echo evil >/opt/flamesidecar/MARKER; echo x >/opt/flamesidecar/new'
	runc exec "$NAME" mkdir /opt/flamesidecar/sub
	runc exec "$NAME" mount -t tmpfs evil /opt/flamesidecar/sub
	runc exec "$NAME" mount --make-shared /opt/flamesidecar
	runc exec "$NAME" mount -t tmpfs evil2 /opt/flamesidecar/sub
	# The container changed its own copy only.
	[ "$(runc exec "$NAME" cat /opt/flamesidecar/MARKER)" = evil ]
	after_tree=$(cd "$FS_BUNDLE_DIR" && find . -printf '%p %s %T@\n' | sort; sha256sum ./*)
	[ "$before_tree" = "$after_tree" ]
	[ "$(cat "$FS_BUNDLE_DIR/MARKER")" = "flamesidecar test bundle" ]
	[ "$(host_mounts)" = "$before" ]
}

@test "propagation: the bundle mount is a private tmpfs copy, read-only in its superblock too" {
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_runc_run "$NAME" "$FS_TMP/b"
	line=$(runc exec "$NAME" awk '$5 == "/opt/flamesidecar"' /proc/self/mountinfo)
	echo "$line"
	[[ "$line" == *" - tmpfs "* ]]
	[[ "$line" != *shared:* && "$line" != *master:* ]]
	[[ "$line" == *" ro,"* || "$line" == *" ro" ]]
	[ "$(runc exec "$NAME" sha256sum /opt/flamesidecar/MARKER | cut -d' ' -f1)" = \
		"$(sha256sum "$FS_BUNDLE_DIR/MARKER" | cut -d' ' -f1)" ]
}

# A stand-in profiler for the trigger tests: records its argv, then waits
# for $FS_TMP/release.
fake_sidecar() {
	cat >"$FS_TMP/fake-sidecar" <<SH
#!/bin/sh
printf '%s\n' "\$@" >"$FS_TMP/args.\$\$"
i=0
while [ ! -e "$FS_TMP/release" ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i+1)); done
SH
	chmod +x "$FS_TMP/fake-sidecar"
	fs_config_set '.sidecar_path = $f' --arg f "$FS_TMP/fake-sidecar"
}

args_count_is() { [ "$(ls "$FS_TMP"/args.* 2>/dev/null | wc -l)" -eq "$1" ]; }
no_markers() { [ -z "$(ls "$FS_RUN/profiling/" 2>/dev/null)" ]; }

@test "trigger: 8 annotated containers started at once never exceed max_concurrent_profiles=2" {
	fake_sidecar
	fs_config_set '.max_concurrent_profiles = 2'
	for i in 1 2 3 4 5 6 7 8; do
		fs_make_bundle "$FS_TMP/b$i" --annotate flamesidecar.io/enable=true \
			--annotate flamesidecar.io/profile=5s -- sleep 1000
	done
	for i in 1 2 3 4 5 6 7 8; do fs_runc_run "$NAME-$i" "$FS_TMP/b$i" & done
	wait
	# Every hook has returned: each decided, under the slot lock.
	started=$(grep -c "profiling: 5s" "$FS_RUN/hook.log")
	refused=$(grep -c "profile trigger refused: 2 profiles already running" "$FS_RUN/hook.log")
	echo "started $started refused $refused"
	[ "$started" -eq 2 ]
	[ "$refused" -eq 6 ]
	fs_wait_for 10 args_count_is 2
	# A slot comes free when its profile ends.
	touch "$FS_TMP/release"
	fs_wait_for 20 no_markers
	rm -f "$FS_TMP/release"
	fs_make_bundle "$FS_TMP/b9" --annotate flamesidecar.io/enable=true \
		--annotate flamesidecar.io/profile=5s -- sleep 1000
	fs_runc_run "$NAME-9" "$FS_TMP/b9"
	grep -q "$NAME-9: profiling: 5s" "$FS_RUN/hook.log"
	touch "$FS_TMP/release"
}

@test "trigger: a container that exits during the delay is never replaced by another whose id it prefixes" {
	"$FS_SIDECAR" run --help >/dev/null 2>&1 || skip "flamesidecar run is not in this build"
	fs_config_set '.sidecar_path = $s' --arg s "$FS_SIDECAR"
	# The other container: its id starts with the first one's.
	fs_make_bundle "$FS_TMP/other" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_runc_run "$NAME-other" "$FS_TMP/other"
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true \
		--annotate flamesidecar.io/profile=2s --annotate flamesidecar.io/delay=2s -- sleep 1000
	fs_runc_run "$NAME" "$FS_TMP/b"
	grep -q "$NAME: profiling: 2s" "$FS_RUN/hook.log"
	runc kill "$NAME" KILL
	fs_wait_stopped runc "$NAME"
	runc delete -f "$NAME"
	[ ! -e "$FS_RUN/containers/$NAME.json" ]
	fs_wait_for 30 test ! -e "$FS_RUN/profiling/$NAME.json"
	cat "$FS_TMP/profiles/$NAME"/*.log
	grep -q "not registered any more: it exited" "$FS_TMP/profiles/$NAME"/*.log
	# Nothing of the other container was profiled into this one's directory.
	[ -z "$(find "$FS_TMP/profiles/$NAME" -name '*.folded' -size +0)" ]
	[ -z "$(find "$FS_TMP/profiles/$NAME" -name '*.svg')" ]
	grep -q "$NAME: profiler failed" "$FS_RUN/hook.log"
}

# Bytes of $1 that a terminal acts on, other than the newline: "" when clean.
controls() {
	LC_ALL=C tr -d '\n\040-\176\200-\377' <<<"$1" | od -An -c | tr -d ' \n'
}

@test "escapes: a comm full of ESC sequences never reaches run/top/list output raw" {
	fs_require_cmd perf
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sh -c \
		'printf "\033[2J\033]0;pwn\007" >/proc/self/comm; while :; do :; done'
	fs_runc_run "$NAME" "$FS_TMP/b"
	pid=$(fs_container_pid "$NAME")
	fs_wait_for 10 grep -q pwn "/proc/$pid/comm"
	run "$FS_SIDECAR" top "$NAME" --once -d 1s --sort total -n 0
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(controls "$output")" ]
	run "$FS_SIDECAR" run "$NAME" -d 1s --with-pid -o "$FS_TMP/p.svg" --folded "$FS_TMP/p.folded"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$(controls "$output")" ]
	run "$FS_SIDECAR" list
	[ "$status" -eq 0 ]
	[ -z "$(controls "$output")" ]
	# The files keep the name as data, escaped for their own format.
	! grep -q $'\033' "$FS_TMP/p.svg" || false
	! grep -q $'\033' "$FS_TMP/p.folded" || false
}

@test "escapes: a JVM whose comm is an ESC sequence is named escaped in run's warning" {
	fs_require_cmd perf
	java=${JAVA_HOME_17}/bin/java
	[ -x "$java" ] || skip "openjdk-17 is not installed"
	[ -d "$FS_BUILD/java/flametest" ] || skip "the Java workloads are not built (make agent)"
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true --mount "$FS_BUILD/java:/opt/fsjava" -- \
		"/bin/"$'\033[2J\033]0;pwn\007jv' -cp /opt/fsjava flametest.Workload
	fs_bundle_set "$FS_TMP/b" '.process.args[0] = "/evil/" + (.process.args[0] | ltrimstr("/bin/"))'
	mkdir -p "$FS_TMP/b/rootfs/evil"
	ln -s "$java" "$FS_TMP/b/rootfs/evil/"$'\033[2J\033]0;pwn\007jv'
	fs_runc_run "$NAME" "$FS_TMP/b"
	fs_wait_for 30 grep -q READY "$FS_TMP/b/out.log" || { cat "$FS_TMP/b/out.log"; false; }
	pid=$(fs_container_pid "$NAME")
	grep -q pwn "/proc/$pid/comm"
	# --unwind fp: the warning is what frame-pointer sampling prints
	run "$FS_SIDECAR" run "$NAME" -d 1s --no-map --unwind fp -o "$FS_TMP/p.svg"
	echo "$output"
	[[ "$output" == *'(\x1b[2J\x1b]0;pwn\x07jv) runs without -XX:+PreserveFramePointer'* ]]
	[ -z "$(controls "$output")" ]
}

@test "registry: a world-writable or symlinked run_dir is refused by the hook and the CLI" {
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	mkdir -p "$FS_RUN/containers"
	chmod 0777 "$FS_RUN"
	run "$FS_SIDECAR" list
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"refusing $FS_RUN: mode 0777 lets others write it"* ]]
	fs_runc_run "$NAME" "$FS_TMP/b"
	[ "$(runc state "$NAME" | jq -r .status)" = running ]
	[ ! -e "$FS_RUN/containers/$NAME.json" ]
	grep -q "not registered: refusing $FS_RUN: mode 0777" "$FS_RUN/hook.log"
	# A symlinked registry pointing somewhere that looks fine.
	chmod 0700 "$FS_RUN"
	mkdir -m 0700 "$FS_TMP/elsewhere"
	rmdir "$FS_RUN/containers"
	ln -s "$FS_TMP/elsewhere" "$FS_RUN/containers"
	fs_runc_run "$NAME-2" "$FS_TMP/b"
	[ -z "$(ls -A "$FS_TMP/elsewhere")" ]
	grep -q "$NAME-2: not registered: refusing registry $FS_RUN/containers: it is a symlink" \
		"$FS_RUN/hook.log"
	run "$FS_SIDECAR" list
	[ "$status" -ne 0 ]
	[[ "$output" == *"it is a symlink"* ]]
}

@test "sandbox: a JVM chrooted inside its container is attached to in its own root" {
	java=${JAVA_HOME_17}/bin/java
	[ -x "$java" ] || skip "openjdk-17 is not installed"
	[ -d "$FS_BUILD/java/flametest" ] || skip "the Java workloads are not built (make agent)"
	fs_make_bundle "$FS_TMP/b" --uid 0 --annotate flamesidecar.io/enable=true -- \
		/usr/sbin/chroot /inner "$java" -XX:+PreserveFramePointer -cp /opt/fsjava flametest.Workload
	in="$FS_TMP/b/rootfs/inner"
	mkdir -p "$in"/{usr,etc,tmp,proc,dev,opt/fsjava}
	chmod 1777 "$in/tmp"
	for l in bin lib lib64 sbin; do ln -sfn "usr/$l" "$in/$l"; done
	fs_bundle_set "$FS_TMP/b" '
		.process.capabilities |= with_entries(.value += ["CAP_SYS_CHROOT"] | .value |= unique) |
		.mounts += [
		  {destination: "/inner/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]},
		  {destination: "/inner/etc", type: "bind", source: "/etc", options: ["rbind", "ro"]},
		  {destination: "/inner/opt/fsjava", type: "bind", source: $s, options: ["rbind", "ro"]},
		  {destination: "/inner/proc", type: "proc", source: "proc"},
		  {destination: "/inner/dev", type: "bind", source: "/dev", options: ["rbind"]},
		  {destination: "/inner/tmp", type: "tmpfs", source: "tmpfs", options: ["mode=1777"]}]' \
		--arg s "$FS_BUILD/java"
	fs_runc_run "$NAME" "$FS_TMP/b"
	fs_wait_for 30 grep -q READY "$FS_TMP/b/out.log" || { cat "$FS_TMP/b/out.log"; false; }
	pid=$(fs_container_pid "$NAME")
	run "$FS_SIDECAR" map "$NAME" --mode jcmd --timeout 10000
	echo "$output"
	rm -f "/tmp/perf-$pid.map"
	[ "$status" -eq 0 ]
}

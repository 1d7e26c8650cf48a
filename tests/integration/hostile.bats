#!/usr/bin/env bats
# Hostile containers, round two (issue 12): each test does what a hostile
# container would do and asserts what must stay true on the host.

load ../lib/containers

setup() {
	fs_require_root
	fs_require_cmd runc jq
	fs_setup
	NAME=fs-hostile$$-$BATS_TEST_NUMBER
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
	jq --arg s "$FS_TMP/srv/x" '.mounts += [{destination: "/opt", type: "bind", source: $s,
		options: ["rbind", "rshared"]}] | .linux.rootfsPropagation = "shared"' \
		"$FS_TMP/b/config.json" >"$FS_TMP/c.json"
	mv "$FS_TMP/c.json" "$FS_TMP/b/config.json"
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
	jq '.process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"] | .value |= unique)' \
		"$FS_TMP/b/config.json" >"$FS_TMP/c.json"
	mv "$FS_TMP/c.json" "$FS_TMP/b/config.json"
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

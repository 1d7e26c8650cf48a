#!/usr/bin/env bats
# Hostile containers, round three (issue 19), the hook side: nothing is
# created in a directory that is not the container's own.

load ../lib/containers
load hostile2-helpers

setup() {
	fs_test_setup fs-h3-
}

teardown() {
	fs_cleanup
}

vol_state() {
	(cd "$1" && find . -printf '%p %y %m %u %g %s\n' | sort)
}

@test "volumes: a host directory bound at /opt (private or rshared) gets no new file or directory; the container starts; the log says why" {
	mkdir -p "$FS_TMP/vol" "$FS_TMP/svol"
	echo keep >"$FS_TMP/vol/keep"
	echo keep >"$FS_TMP/svol/keep"
	mount --bind "$FS_TMP/svol" "$FS_TMP/svol"
	mount --make-shared "$FS_TMP/svol"
	local before sbefore pid
	before=$(vol_state "$FS_TMP/vol")
	sbefore=$(vol_state "$FS_TMP/svol")
	# a plain bind (a volume), then an rshared one
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_bundle_set "$FS_TMP/b" \
		'.mounts += [{destination: "/opt", type: "bind", source: $s, options: ["rbind", "rw"]}]' \
		--arg s "$FS_TMP/vol"
	fs_make_bundle "$FS_TMP/s" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_bundle_set "$FS_TMP/s" \
		'.mounts += [{destination: "/opt", type: "bind", source: $s, options: ["rbind", "rshared"]}]' \
		--arg s "$FS_TMP/svol"
	fs_runc_run "$NAME" "$FS_TMP/b" || { cat "$FS_TMP/b/out.log"; false; }
	fs_runc_run "$NAME-s" "$FS_TMP/s" || { cat "$FS_TMP/s/out.log"; false; }
	for n in "$NAME" "$NAME-s"; do
		[ "$(runc state "$n" | jq -r .status)" = running ]
		pid=$(fs_container_pid "$n")
		! has_bundle_mount "$pid" || false
		# registered all the same (without a mount point): run can sample it
		fs_wait_for 10 test -f "$FS_RUN/containers/$n.json"
	done
	[ "$(vol_state "$FS_TMP/vol")" = "$before" ]
	[ "$(vol_state "$FS_TMP/svol")" = "$sbefore" ]
	cat "$FS_RUN/hook.log"
	grep -q "would be created on another mount than the rootfs" "$FS_RUN/hook.log"
	grep -q "would be created on a shared mount" "$FS_RUN/hook.log"
	umount "$FS_TMP/svol"
}

@test "volumes: an existing mount point directory in a private volume is still used (nothing created)" {
	mkdir -p "$FS_TMP/vol/flamesidecar"
	local before pid
	before=$(vol_state "$FS_TMP/vol")
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_bundle_set "$FS_TMP/b" \
		'.mounts += [{destination: "/opt", type: "bind", source: $s, options: ["rbind", "rw"]}]' \
		--arg s "$FS_TMP/vol"
	fs_runc_run "$NAME" "$FS_TMP/b" || { cat "$FS_TMP/b/out.log"; false; }
	pid=$(fs_container_pid "$NAME")
	has_bundle_mount "$pid"
	[ "$(vol_state "$FS_TMP/vol")" = "$before" ]
}

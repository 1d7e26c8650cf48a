#!/usr/bin/env bats
# A node with 1,000 registered containers: `map`/`run` of one container
# opens O(1) registry entries (counted with strace on the real process), by
# id, unique id prefix, name and --pod; lookups give the same answers as
# before (ambiguous prefix an error, stale entries never returned).

load ../lib/containers

MANY=1000
TAIL=c0ffee0123456789abcdef0123456789abcdef0123456789abcdef0123

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	fs_setup
	export FS_TMP FS_RUN FS_CONFIG
	# The run directory on a tmpfs, as /run is on hosts (fs_cleanup
	# unmounts it).
	mkdir -p "$FS_RUN"
	mount -t tmpfs -o mode=0700,size=64m fslookup "$FS_RUN"
	mkdir -m 0700 "$FS_RUN/containers"
	# One live process all the fake containers claim (its pid and start
	# time, recorded in our pid namespace), in a pid namespace no JVM is
	# in: a lookup finds the entry, and `map` then says it has no JVM.
	sleep 600 &
	echo $! >"$FS_TMP/sleeper"
	local pid=$! st ns i id
	st=$(awk '{print $22}' "/proc/$pid/stat")
	ns=$(stat -L -c %i /proc/self/ns/pid)
	for ((i = 0; i < MANY; i++)); do
		printf -v id '%04x%s' "$i" "$TAIL"
		printf '{"id":"%s","pid":%d,"start_time":%s,"ns_pid":1,"pid_ns":1,"mnt_ns":1,"host_pid_ns":%s,"uid":1000,"gid":1000,"rootfs":"/x","bundle":"/x","mount_point":"","created":1700000000,"hook_version":"t","annotations":{"profile":"","delay":"","frequency":""},"names":{"engine":"docker","name":"svc-%d","pod":"","namespace":"","container":""}}\n' \
			"$id" "$pid" "$st" "$ns" "$i" >"$FS_RUN/containers/$id.json"
	done
	chmod 0600 "$FS_RUN/containers"/*.json
}

teardown_file() {
	[ -n "${FS_TMP:-}" ] || return 0
	[ ! -f "$FS_TMP/sleeper" ] || kill "$(cat "$FS_TMP/sleeper")" 2>/dev/null || true
	fs_cleanup
}

setup() {
	fs_require_root
	fs_require_cmd strace
	[ -f "${FS_TMP:-/nonexistent}/sleeper" ] || skip "setup_file did not run as root"
}

id_of() { printf '%04x%s' "$1" "$TAIL"; }

# opens VERB ARGS...: run `flamesidecar VERB ARGS` under strace; status and
# output as bats' run; ENTRY_OPENS = entry files it opened, REG_OPENS =
# everything it opened under the registry (directories, index included).
opens() {
	run strace -f -y -qq -e trace=open,openat,openat2 -o "$FS_TMP/trace" "$FS_SIDECAR" "$@"
	ENTRY_OPENS=$(grep -cE "= [0-9]+<$FS_RUN/containers/[^/>]+\.json>" "$FS_TMP/trace" || true)
	REG_OPENS=$(grep -cE "= [0-9]+<$FS_RUN/containers" "$FS_TMP/trace" || true)
	echo "$*: exit $status, $ENTRY_OPENS entry files, $REG_OPENS opens under the registry"
	echo "$output"
}

@test "without a name index (an older hook's registry) the first lookup reads every entry and builds it" {
	rm -rf "$FS_RUN/containers/names"
	opens map svc-500
	[ "$status" -eq 3 ]
	[[ "$output" == *"no JVM found in container $(id_of 500)"* ]]
	[ "$ENTRY_OPENS" -ge "$MANY" ]
	[ -f "$FS_RUN/containers/names/n.svc-500/$(id_of 500)" ]
	# and from then on, one entry
	opens map svc-500
	[ "$status" -eq 3 ]
	[[ "$output" == *"no JVM found in container $(id_of 500)"* ]]
	[ "$ENTRY_OPENS" -eq 1 ]
}

@test "1,000 registered: map by id, unique prefix and name opens one entry file" {
	"$FS_SIDECAR" gc >/dev/null # the index, whatever ran before
	local ref
	for ref in "$(id_of 500)" 01f4c0 svc-500; do
		opens map "$ref"
		[ "$status" -eq 3 ]
		[[ "$output" == *"no JVM found in container $(id_of 500)"* ]]
		[ "$ENTRY_OPENS" -eq 1 ]
		[ "$REG_OPENS" -le 6 ]
	done
	# run takes the same path
	opens run svc-999 -d 0.1s --no-map -o "$FS_TMP/p.svg"
	[ "$ENTRY_OPENS" -eq 1 ]
	[[ "$output" == *"$(id_of 999)"* ]]
}

@test "1,000 registered: misses and ambiguous prefixes are errors as before, reading no other entry" {
	"$FS_SIDECAR" gc >/dev/null
	opens map nosuch
	[ "$status" -eq 3 ]
	[[ "$output" == *"no registered container has the id, name or id prefix 'nosuch'"* ]]
	[ "$ENTRY_OPENS" -eq 0 ]
	opens map svc-1000
	[ "$status" -eq 3 ]
	[ "$ENTRY_OPENS" -eq 0 ]
	# 03e0..03e7: eight matches, each read (which are alive decides), no more
	opens map 03e
	[ "$status" -ne 0 ]
	[[ "$output" == *"id prefix '03e' matches 8 containers"* ]]
	[ "$ENTRY_OPENS" -eq 8 ]
	run "$FS_SIDECAR" list
	[ "$status" -eq 0 ]
	[ "$(grep -c ' svc-' <<<"$output")" -eq "$MANY" ]
}

@test "1,000 registered: a stale entry is never returned, by id, name or prefix, and goes" {
	"$FS_SIDECAR" gc >/dev/null
	local dead id=deadbeef$TAIL
	sh -c 'exit 0' &
	dead=$!
	wait "$dead" || true
	local ref
	for ref in "$id" svc-dead deadbe; do
		sed -e "s/\"id\":\"[^\"]*\"/\"id\":\"$id\"/" -e 's/"name":"svc-0"/"name":"svc-dead"/' \
			-e "s/\"pid\":[0-9]*/\"pid\":$dead/" "$FS_RUN/containers/$(id_of 0).json" \
			>"$FS_RUN/containers/$id.json"
		chmod 0600 "$FS_RUN/containers/$id.json"
		mkdir -p "$FS_RUN/containers/names/n.svc-dead"
		: >"$FS_RUN/containers/names/n.svc-dead/$id"
		opens map "$ref"
		[ "$status" -eq 3 ]
		[[ "$output" == *"no registered container"* ]]
		[ "$ENTRY_OPENS" -le 2 ]
		[ ! -e "$FS_RUN/containers/$id.json" ]
		[ ! -e "$FS_RUN/containers/names/n.svc-dead/$id" ]
	done
}

@test "the hook indexes a pod's container; --pod among 1,000 opens its entry only" {
	fs_require_cmd runc jq
	"$FS_SIDECAR" gc >/dev/null
	local name=fslk$$
	fs_make_bundle "$FS_TMP/pod" --annotate flamesidecar.io/enable=true \
		--annotate io.kubernetes.cri.container-type=container \
		--annotate io.kubernetes.cri.sandbox-name=checkout-7d9f \
		--annotate io.kubernetes.cri.sandbox-namespace=shop \
		--annotate io.kubernetes.cri.container-name=app -- sleep 1000
	fs_runc_run "$name" "$FS_TMP/pod"
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
	[ -f "$FS_RUN/containers/names/p.checkout-7d9f/$name" ]
	opens map --pod checkout-7d9f --namespace shop
	[[ "$output" == *"no JVM found in container $name"* ]]
	[ "$ENTRY_OPENS" -eq 1 ]
	fs_stop_containers runc "$name"
	# the poststop hook removed the entry and its index file
	[ ! -e "$FS_RUN/containers/$name.json" ]
	[ ! -e "$FS_RUN/containers/names/p.checkout-7d9f" ]
}

#!/usr/bin/env bats
# flamesidecar run --kernel-filter: the BPF sample filter on system-wide
# events (sidecar/profile/kfilter.h) against per-cgroup events, on a real
# runc container (registered by flamehook) running two busy shells, one of
# them moved into a sub-cgroup of the container's cgroup, while a busy shell
# runs on the host outside it.

load ../lib/containers

# samples FOLDED PATTERN: samples whose stack matches the awk regex
samples() {
	awk -v pat="$2" '$0 ~ pat { n += $NF } END { print n + 0 }' "$1"
}

total() {
	awk '{ n += $NF } END { print n + 0 }' "$1"
}

busy_children() {
	[ "$(pgrep -P "$CTR_PID" -x sh | wc -l)" -ge 2 ]
}

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	command -v runc >/dev/null && command -v jq >/dev/null || return 0
	fs_setup
	export FS_TMP FS_RUN FS_CONFIG FLAMESIDECAR_CONFIG
	CTR="fs-kfilter-$$"
	export CTR
	fs_make_bundle "$FS_TMP/$CTR" --annotate flamesidecar.io/enable=true -- \
		sh -c 'sh -c "while :; do :; done" & sh -c "while :; do :; done" & wait'
	fs_runc_run "$CTR" "$FS_TMP/$CTR" || return 0
	fs_wait_for 10 test -f "$FS_RUN/containers/$CTR.json" || return 0
	CTR_PID=$(fs_container_pid "$CTR")
	export CTR_PID
	fs_wait_for 10 busy_children || return 0
	# The container's cgroup v2 directory and a sub-cgroup holding one of
	# its two busy shells (unified hierarchy of a hybrid host, or the v2
	# root).
	local cg root=/sys/fs/cgroup/unified
	[ -d "$root" ] || root=/sys/fs/cgroup
	cg=$(awk -F: '$1 == "0" { print $3 }' "/proc/$CTR_PID/cgroup")
	if [ -n "$cg" ] && [ "$cg" != / ] && [ -d "$root$cg" ]; then
		CGDIR="$root$cg"
		SUBPID=$(pgrep -P "$CTR_PID" -x sh | tail -1)
		mkdir -p "$CGDIR/fskfsub" && echo "$SUBPID" >"$CGDIR/fskfsub/cgroup.procs" || CGDIR=
		export CGDIR SUBPID
	fi
	sh -c 'while :; do :; done' 3>&- &
	echo $! >"$FS_TMP/outside.pid"
}

teardown_file() {
	[ -f "${FS_TMP:-/nonexistent}/outside.pid" ] && kill "$(cat "$FS_TMP/outside.pid")" 2>/dev/null
	fs_cleanup
	if [ -n "${CGDIR:-}" ]; then
		rmdir "$CGDIR/fskfsub" 2>/dev/null
		rmdir "$CGDIR" 2>/dev/null
	fi
	return 0
}

needs_ctr() {
	fs_require_root
	[ -n "${CTR_PID:-}" ] || skip "the busy container did not start (runc, jq, flamehook)"
	[ -n "${CGDIR:-}" ] || skip "the container has no cgroup v2 directory"
}

@test "run --kernel-filter on: only the container's stacks, its sub-cgroup included; the summary names the filter" {
	needs_ctr
	cd "$BATS_TEST_TMPDIR"
	local outside
	outside=$(cat "$FS_TMP/outside.pid")
	run "$FS_SIDECAR" run "$CTR" --kernel-filter on -d 2s -F 499 -o f.svg --with-pid --no-map
	echo "$output" >&3
	[ "$status" -eq 0 ]
	[[ "$output" == *"scope cgroup (kernel filter)"* ]]
	[[ "$output" != *"no kernel filter"* ]]
	[ "$(total f.folded)" -gt 100 ]
	[ "$(samples f.folded "^sh-$SUBPID;")" -gt 0 ]
	[ "$(samples f.folded "^sh-$outside;")" -eq 0 ]
	# every sampled process is one of the container's
	local p
	cat "$CGDIR/cgroup.procs" "$CGDIR/fskfsub/cgroup.procs" >inside
	for p in $(awk '{ split($1, a, ";"); n = split(a[1], b, "-"); print b[n] }' f.folded | sort -u); do
		grep -qx "$p" inside || {
			echo "pid $p sampled, not in the container" >&2
			false
		}
	done
}

@test "run --kernel-filter off: cgroup events, the same scope" {
	needs_ctr
	cd "$BATS_TEST_TMPDIR"
	local outside
	outside=$(cat "$FS_TMP/outside.pid")
	run "$FS_SIDECAR" run "$CTR" --kernel-filter off -d 2s -F 499 -o c.svg --with-pid --no-map
	echo "$output" >&3
	[ "$status" -eq 0 ]
	[[ "$output" == *"scope cgroup (cgroup events)"* ]]
	[[ "$output" != *"no kernel filter"* ]]
	[ "$(samples c.folded "^sh-$SUBPID;")" -gt 0 ]
	[ "$(samples c.folded "^sh-$outside;")" -eq 0 ]
}

@test "run --pid with the kernel filter: one process; default auto uses it" {
	needs_ctr
	cd "$BATS_TEST_TMPDIR"
	run "$FS_SIDECAR" run "$CTR" --pid "$SUBPID" -d 2s -F 499 -o p.svg --with-pid --no-map
	echo "$output" >&3
	[ "$status" -eq 0 ]
	[[ "$output" == *"scope pid (kernel filter)"* ]]
	[ "$(total p.folded)" -gt 0 ]
	[ "$(samples p.folded "^sh-$SUBPID;")" -eq "$(total p.folded)" ]
}

@test "run: without CAP_BPF the filter cannot load; auto falls back to cgroup events and says why, on fails" {
	needs_ctr
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	cd "$BATS_TEST_TMPDIR"
	local outside drop=-bpf,-sys_admin
	outside=$(cat "$FS_TMP/outside.pid")
	# root keeping CAP_PERFMON (perf_event_open) but neither CAP_BPF nor
	# CAP_SYS_ADMIN: bpf(BPF_PROG_LOAD) is refused with EPERM
	setpriv --inh-caps="$drop" --bounding-set="$drop" true 2>/dev/null ||
		skip "setpriv cannot drop capabilities here"
	run setpriv --inh-caps="$drop" --bounding-set="$drop" \
		"$FS_SIDECAR" run "$CTR" -d 2s -F 499 -o b.svg --with-pid --no-map
	echo "$output" >&3
	[ "$status" -eq 0 ]
	[[ "$output" == *"scope cgroup (cgroup events)"* ]]
	[ "$(grep -c '^filter .*no kernel filter (bpf(BPF_PROG_LOAD) not permitted' <<<"$output")" -eq 1 ]
	[ "$(samples b.folded "^sh-$SUBPID;")" -gt 0 ]
	[ "$(samples b.folded "^sh-$outside;")" -eq 0 ]
	run setpriv --inh-caps="$drop" --bounding-set="$drop" \
		"$FS_SIDECAR" run "$CTR" --kernel-filter on -d 1s -o n.svg --no-map
	echo "$output" >&3
	[ "$status" -ne 0 ]
	[[ "$output" == *"not permitted"* ]]
}

@test "run --kernel-filter: a bad mode is a usage error" {
	run "$FS_SIDECAR" run somectr --kernel-filter maybe
	[ "$status" -eq 2 ]
	[[ "$output" == *"--kernel-filter takes auto, on or off"* ]]
}

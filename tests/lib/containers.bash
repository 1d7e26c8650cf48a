# containers.bash - helpers for bats tests that run real containers.
# Source from a .bats file:  load ../lib/containers
#
# Every helper works under $FS_TMP (a per-test directory) and records what it
# starts so fs_cleanup can remove it: nothing is left behind on the host.

: "${FS_TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${FS_BUILD:=$FS_TOP/build}"
FS_HOOK="$FS_BUILD/flamehook"
FS_SIDECAR="$FS_BUILD/flamesidecar"
# The same sidecar built with -DFS_TEST_BUILD: the only one that reads the
# FS_TEST_* hooks (Makefile, docs/testing.md). Only tests that set one run it.
FS_TEST_SIDECAR="$FS_BUILD/test/flamesidecar"
# JAVA17, JAVA25, JAVA_HOME_*, fs_needs_jvm
. "$(dirname "${BASH_SOURCE[0]}")/jvm.bash"
# fs_file_setup, fs_test_setup ...: the setup and teardown most files share
. "$(dirname "${BASH_SOURCE[0]}")/setup.bash"

fs_needs_test_sidecar() {
	[ -x "$FS_TEST_SIDECAR" ] || skip "the test build of the sidecar is missing (make $FS_TEST_SIDECAR)"
}

fs_require_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (runs real containers)"
}

fs_require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
	done
}

# fs_setup: a fresh temp dir, a hook config pointing at it, an agent bundle.
fs_setup() {
	FS_TMP=$(mktemp -d /tmp/fstest.XXXXXX)
	chmod 0755 "$FS_TMP"
	FS_RUN="$FS_TMP/run"
	FS_BUNDLE_DIR="$FS_TMP/agent-bundle"
	mkdir -p "$FS_BUNDLE_DIR"
	echo "flamesidecar test bundle" >"$FS_BUNDLE_DIR/MARKER"
	[ -f "$FS_BUILD/libflameagent.so" ] && cp "$FS_BUILD/libflameagent.so" "$FS_BUNDLE_DIR/"
	FS_CONFIG="$FS_TMP/config.json"
	cat >"$FS_CONFIG" <<JSON
{"bundle_dir": "$FS_BUNDLE_DIR", "run_dir": "$FS_RUN", "log_file": "$FS_RUN/hook.log",
 "mount_point": "/opt/flamesidecar", "profile_dir": "$FS_TMP/profiles",
 "sidecar_path": "$FS_SIDECAR"}
JSON
	export FLAMESIDECAR_CONFIG="$FS_CONFIG"
	: >"$FS_TMP/containers"
	# Some cases exercise the defaults on purpose (an unusable config makes
	# the programs fall back to /run/flamesidecar): remove it afterwards if
	# this test created it.
	FS_HOST_RUN_EXISTED=0
	if [ -e /run/flamesidecar ]; then FS_HOST_RUN_EXISTED=1; fi
}

# fs_make_bundle DIR [--uid N] [--annotate K=V]... [--no-hooks] [--no-poststart]
#                [--no-poststop] [--stage createRuntime|prestart]
#                [--mount SRC:DST]... -- ARGS...
# A runc bundle: host /usr and /etc bind-mounted read-only into an almost
# empty rootfs, tmpfs /tmp, the process as uid N (default 1000, a user that
# exists only in the container), our hook in createRuntime/poststart/poststop
# (--no-poststop: what the default hooks.d install gives, no poststop entry).
# --mount binds the host's SRC read-only at DST (after those three).
fs_make_bundle() {
	local dir=$1
	shift
	local uid=1000 hooks=1 ann='{}' stage=createRuntime poststart=1 poststop=1 mounts='[]'
	while [ $# -gt 0 ]; do
		case "$1" in
		--uid) uid=$2; shift 2 ;;
		--annotate) ann=$(jq -c --arg k "${2%%=*}" --arg v "${2#*=}" '. + {($k): $v}' <<<"$ann"); shift 2 ;;
		--mount) mounts=$(fs_mount_add "$mounts" "$2"); shift 2 ;;
		--no-hooks) hooks=0; shift ;;
		--no-poststart) poststart=0; shift ;;
		--no-poststop) poststop=0; shift ;;
		--stage) stage=$2; shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	mkdir -p "$dir/rootfs"/{usr,etc,tmp,proc,dev,sys}
	chmod 1777 "$dir/rootfs/tmp"
	for l in bin lib lib64 sbin; do ln -sfn "usr/$l" "$dir/rootfs/$l"; done
	local args='[]' a
	# One --arg per element: jq --args would take "-XX:..." as its own option.
	for a in "$@"; do args=$(jq -c --arg a "$a" '. + [$a]' <<<"$args"); done
	(cd "$dir" && rm -f config.json && runc spec)
	local hookjson='{}'
	if [ "$hooks" = 1 ]; then
		hookjson=$(jq -cn --arg h "$FS_HOOK" --arg c "$FS_CONFIG" --arg s "$stage" '{
			($s): [{path: $h, args: ["flamehook", "--config", $c, $s], env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], timeout: 10}],
			poststart: [{path: $h, args: ["flamehook", "--config", $c, "poststart"], env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], timeout: 10}],
			poststop: [{path: $h, args: ["flamehook", "--config", $c, "poststop"], env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], timeout: 10}]}')
		[ "$poststart" = 1 ] || hookjson=$(jq -c 'del(.poststart)' <<<"$hookjson")
		[ "$poststop" = 1 ] || hookjson=$(jq -c 'del(.poststop)' <<<"$hookjson")
	fi
	fs_bundle_set "$dir" '
		.process.terminal = false | .process.args = $args |
		.process.user = {uid: $uid, gid: $uid} |
		.process.env += ["HOME=/tmp", "JAVA_TOOL_OPTIONS="] |
		.root.readonly = false |
		.annotations = $ann | .hooks = $hooks |
		.mounts += [
		  {destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro", "nosuid", "nodev"]},
		  {destination: "/etc", type: "bind", source: "/etc", options: ["rbind", "ro", "nosuid", "nodev"]},
		  {destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777"]}
		] + $mounts |
		.linux.namespaces |= map(select(.type != "network"))
	' --argjson args "$args" --argjson uid "$uid" --argjson ann "$ann" --argjson hooks "$hookjson" \
		--argjson mounts "$mounts"
}

# fs_mount_add JSON SRC:DST: the JSON array of mounts with a read-only bind
# of the host's SRC at DST appended.
fs_mount_add() {
	jq -c --arg s "${2%%:*}" --arg d "${2#*:}" \
		'. + [{destination: $d, type: "bind", source: $s, options: ["rbind", "ro"]}]' <<<"$1"
}

# fs_bundle_set DIR FILTER [JQ ARGS...]: apply a jq filter to the bundle's
# DIR/config.json in place, e.g. fs_bundle_set "$b" '.process.env += [$e]'
# --arg e X=1 (strings from the shell with --arg, as for fs_config_set).
fs_bundle_set() {
	local dir=$1 filter=$2
	shift 2
	jq "$@" "$filter" "$dir/config.json" >"$dir/config.json.new" && mv "$dir/config.json.new" "$dir/config.json"
}

# fs_runc_run NAME BUNDLE [runtime]: start detached; output to BUNDLE/out.log.
fs_runc_run() {
	local name=$1 bundle=$2 rt=${3:-runc}
	echo "$rt $name" >>"$FS_TMP/containers"
	"$rt" run -d --bundle "$bundle" "$name" >"$bundle/out.log" 2>&1 </dev/null
}

# fs_wait_for DEADLINE_SECONDS COMMAND...: poll until the command succeeds;
# after the deadline say what was awaited (stderr) and fail.
fs_wait_for() {
	local secs=$1
	shift
	local end=$((SECONDS + secs))
	while ! "$@" >/dev/null 2>&1; do
		if [ $SECONDS -ge $end ]; then
			echo "timed out after ${secs} s waiting for: $*" >&2
			return 1
		fi
		sleep 0.05
	done
}

# fs_jvm_bundle DIR [--uid N] [--java PATH] [--jvm-opt OPT]... [--wrap SCRIPT]
#               [--cap CAP_X]... [--mount SRC:DST]... [--hide DIR]...
#               [--tmp-symlink] -- WORKLOAD_ARGS...
# A runc bundle (fs_make_bundle, annotated flamesidecar.io/enable=true) whose
# process is the Workload JVM (default $JAVA17, uid 1000,
# -XX:+PreserveFramePointer then the --jvm-opt options, which override it),
# with build/java at /opt/fsjava. --wrap runs it from `sh -c SCRIPT sh JAVA
# ARGS...` (the script's "$@" is the java command): a JVM that is not pid 1.
# --mount binds SRC read-only at DST, --hide puts an empty read-only tmpfs
# over DIR, --cap adds a capability, --tmp-symlink makes /tmp a symlink to
# /var/tmp (no tmpfs).
fs_jvm_bundle() {
	local dir=$1 uid=1000 java=$JAVA17 wrap="" mounts='[]' caps='[]' tmplink=0 opts=()
	shift
	while [ $# -gt 0 ]; do
		case "$1" in
		--uid) uid=$2; shift 2 ;;
		--java) java=$2; shift 2 ;;
		--jvm-opt) opts+=("$2"); shift 2 ;;
		--wrap) wrap=$2; shift 2 ;;
		--cap) caps=$(jq -c --arg c "$2" '. + [$c]' <<<"$caps"); shift 2 ;;
		--mount) mounts=$(fs_mount_add "$mounts" "$2"); shift 2 ;;
		--hide) mounts=$(jq -c --arg d "$2" \
			'. + [{destination: $d, type: "tmpfs", source: "tmpfs", options: ["ro", "mode=755"]}]' <<<"$mounts")
			shift 2 ;;
		--tmp-symlink) tmplink=1; shift ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	local cmd=("$java" -XX:+PreserveFramePointer "${opts[@]}" -cp /opt/fsjava flametest.Workload "$@")
	if [ -n "$wrap" ]; then
		cmd=(/bin/sh -c "$wrap" sh "${cmd[@]}")
	fi
	fs_make_bundle "$dir" --uid "$uid" --annotate flamesidecar.io/enable=true -- "${cmd[@]}"
	fs_bundle_set "$dir" '
		.mounts += [{destination: "/opt/fsjava", type: "bind", source: $s, options: ["rbind", "ro"]}] + $m |
		.process.capabilities |= with_entries(.value += $c) |
		if $tl == 1 then .mounts |= map(select(.destination != "/tmp")) else . end
	' --arg s "$FS_BUILD/java" --argjson m "$mounts" --argjson c "$caps" --argjson tl "$tmplink"
	if [ "$tmplink" = 1 ]; then
		rmdir "$dir/rootfs/tmp"
		mkdir -p "$dir/rootfs/var/tmp"
		chmod 1777 "$dir/rootfs/var/tmp"
		ln -s /var/tmp "$dir/rootfs/tmp"
	fi
}

fs_ready_lines() {
	[ "$(grep -cE '^(CHILD-)?READY' "$1" 2>/dev/null)" -ge "$2" ]
}

# fs_start_jvm NAME [--ready N] [fs_jvm_bundle options] -- [Workload args]:
# run the bundle $FS_TMP/NAME, wait (60 s) for N (default 1) lines READY or
# CHILD-READY and (10 s) for its registry entry. PID = the container's pid 1
# on the host, also appended to $FS_TMP/jvm-pids.
fs_start_jvm() {
	local name=$1 count=1
	shift
	if [ "${1:-}" = --ready ]; then
		count=$2
		shift 2
	fi
	fs_jvm_bundle "$FS_TMP/$name" "$@"
	fs_runc_run "$name" "$FS_TMP/$name"
	PID=$(fs_container_pid "$name")
	echo "$PID" >>"$FS_TMP/jvm-pids"
	fs_wait_for 60 fs_ready_lines "$FS_TMP/$name/out.log" "$count" || {
		cat "$FS_TMP/$name/out.log" >&2
		return 1
	}
	fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"
}

# fs_host_jvm JDK OUT [JVM options...] -- [Workload args...]: the Workload
# JVM on the host (not in a container), output to OUT, exiting after 120 s
# at the latest. Started through `env --default-signal=QUIT`: a background
# job of a non-interactive shell inherits SIGQUIT ignored, and HotSpot then
# never starts its attach listener; env execs java, so PID is the JVM's.
# The caller kills PID (and removes /tmp/perf-PID.map) in teardown.
fs_host_jvm() {
	local jdk=$1 out=$2
	shift 2
	local jopts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		jopts+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	env --default-signal=QUIT "$jdk/bin/java" -XX:+PreserveFramePointer "${jopts[@]}" \
		-cp "$FS_BUILD/java" flametest.Workload --exit-after 120 "$@" \
		>"$out" 2>&1 3>&- &
	PID=$!
}

# fs_wait_stopped RUNTIME NAME [SECONDS]: poll RUNTIME state NAME until it is
# no longer running (RUNTIME may be a shell function); after the deadline
# (default 5 s) say so on stderr and fail.
fs_wait_stopped() {
	local rt=$1 name=$2 end=$((SECONDS + ${3:-5})) st
	while :; do
		st=$("$rt" state "$name" 2>/dev/null | jq -r .status 2>/dev/null)
		[ "$st" = running ] || return 0
		if [ $SECONDS -ge $end ]; then
			echo "$rt $name: still running after ${3:-5} s" >&2
			return 1
		fi
		sleep 0.05
	done
}

# fs_crun_ns SCRIPT: run the bash SCRIPT the way crun works on this
# machine's hybrid cgroups (which crun refuses): in a private mount
# namespace without the unified hierarchy (see DESIGN.md). The script can
# call fs_wait_stopped. Sets status and output like bats' run.
fs_crun_ns() {
	run unshare -m --propagation private bash -c \
		"set -e; umount /sys/fs/cgroup/unified 2>/dev/null || true; $(declare -f fs_wait_stopped); . \"\$1\"" \
		bash "$1"
}

# fs_stop_containers RUNTIME NAME...: kill, wait (bounded), delete -f each
# container; best effort (one already gone does not stop the rest).
fs_stop_containers() {
	local rt=$1 c
	shift
	for c in "$@"; do
		"$rt" kill "$c" KILL >/dev/null 2>&1 || true
		# delete -f kills what is left; the message says a KILL was slow
		fs_wait_stopped "$rt" "$c" 10 || true
		"$rt" delete -f "$c" >/dev/null 2>&1 || true
	done
}

fs_container_pid() {
	"${2:-runc}" state "$1" | jq -r .pid
}

# fs_config_set FILTER [JQ ARGS...]: apply a jq filter to the test config
# ($FS_CONFIG) in place, e.g. fs_config_set '.sidecar_path = $f' --arg f X
# (a path or any string from the shell: --arg, never spliced into FILTER),
# fs_config_set '.max_concurrent_profiles = 2', fs_config_set 'del(.key)'.
# How the tests edit the config (a test that wants it broken writes it whole).
fs_config_set() {
	local filter=$1
	shift
	jq "$@" "$filter" "$FS_CONFIG" >"$FS_CONFIG.new" && mv "$FS_CONFIG.new" "$FS_CONFIG"
}

fs_cleanup() {
	[ -n "${FS_TMP:-}" ] || return 0
	local p
	# Best effort all the way: a container already gone must not stop the rest.
	set +e
	# The host perf maps (/tmp/perf-PID.map) of the JVMs fs_start_jvm started.
	if [ -f "$FS_TMP/jvm-pids" ]; then
		while read -r p; do [ -z "$p" ] || rm -f "/tmp/perf-$p.map"; done <"$FS_TMP/jvm-pids"
	fi
	if [ -f "$FS_TMP/containers" ]; then
		while read -r rt name; do
			[ -n "$name" ] || continue
			if [ "$rt" = podman ]; then
				podman rm -f -t 0 "$name" >/dev/null 2>&1 || true
				continue
			fi
			fs_stop_containers "$rt" "$name"
		done <"$FS_TMP/containers"
	fi
	# Unmount anything a test left under its temp dir, deepest first.
	awk -v t="$FS_TMP" '$5 ~ "^"t {print $5}' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
	rm -rf "$FS_TMP"
	if [ "${FS_HOST_RUN_EXISTED:-1}" = 0 ] && [ -d /run/flamesidecar ] &&
		[ -z "$(ls -A /run/flamesidecar/containers 2>/dev/null)" ]; then
		rm -rf /run/flamesidecar
	fi
	set -e
	return 0
}

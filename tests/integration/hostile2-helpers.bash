# hostile2-helpers.bash - helpers shared by hostile2*.bats (issue 12, the
# cases of our list that hostile.bats does not cover).

# The host's mount points (field 5 of mountinfo) that a test of ours could
# have changed: under its temp dir, or named like our mount point. Not the
# whole table: other tests may start containers meanwhile.
host_mounts() {
	awk -v t="$FS_TMP" 'index($5, t) == 1 || $5 ~ /flamesidecar|\/race|\/victim/ {print $4, $5}' \
		/proc/self/mountinfo | sort
}

# A host sentinel tree with a unique content; SENTINEL is that content.
make_sentinel() {
	SENTINEL="fs-sentinel-$$-$RANDOM$RANDOM"
	mkdir -p "$FS_TMP/sentinel/sub"
	echo "$SENTINEL" >"$FS_TMP/sentinel/secret"
	echo "$SENTINEL" >"$FS_TMP/sentinel/sub/secret2"
}

sentinel_state() {
	(cd "$FS_TMP/sentinel" && find . -printf '%p %y %m %s %T@\n' | sort && sha256sum secret sub/secret2)
}

# bundle_jq BUNDLE [JQ ARGS...] FILTER: fs_bundle_set with jq's order of
# arguments, for the callers written before it.
bundle_jq() {
	local b=$1
	shift
	fs_bundle_set "$b" "${@: -1}" "${@:1:$#-1}"
}

# Whether the container process $1 has the bundle mounted.
has_bundle_mount() {
	grep -q " /opt/flamesidecar " "/proc/$1/mountinfo"
}

# Every fd target of every process in the pid namespace of host pid $1.
container_fd_targets() {
	local ns p
	ns=$(stat -L -c %i "/proc/$1/ns/pid")
	for p in /proc/[0-9]*; do
		[ "$(stat -L -c %i "$p/ns/pid" 2>/dev/null)" = "$ns" ] || continue
		for f in "$p"/fd/*; do
			echo "${p#/proc/} $(readlink "$f" 2>/dev/null)"
		done
	done
}

# fs_cc OUT SOURCE [cc options]: compile a helper (skip when there is no cc).
fs_cc() {
	command -v cc >/dev/null 2>&1 || skip "cc is not installed"
	local out=$1 src=$2
	shift 2
	cc -D_GNU_SOURCE -O2 -o "$out" "$src" "$@"
}

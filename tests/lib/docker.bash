# docker.bash - a private Docker daemon for tests and benchmarks (source
# after containers.bash; needs fs_setup's FS_TMP, FS_CONFIG, FS_BUILD).
#   dockerd_start   dockerd under $FS_TMP/docker: own socket, data and exec
#                   roots, cgroup parent, no iptables/bridge, vfs storage;
#                   runtimes "flamesidecar" (runtimeArgs ["--opt-in"]) and
#                   "flamesidecar-plain"; image fstest:tiny imported from an
#                   almost empty rootfs. Sets DK, DK_CGROUP, DOCKER.
#   dk ARGS...      the docker client on that daemon
#   dockerd_stop    remove its containers, stop it, check nothing is left,
#                   remove its cgroups

# Debian's client (it matches the daemon) when there is one.
docker_bin() {
	if [ -x /usr/bin/docker ]; then echo /usr/bin/docker; else command -v docker; fi
}

dk() {
	"$DOCKER" -H "unix://$DK/docker.sock" "$@"
}

dockerd_start() {
	DOCKER=${DOCKER:-$(docker_bin)}
	# Its containerd's shims put their sockets in the fixed /run/containerd/s
	# (they remove them); remove the directories too if we caused them.
	DK_MADE_RUN=1
	[ ! -e /run/containerd ] || DK_MADE_RUN=0
	DK="$FS_TMP/docker"
	mkdir -p "$DK/rootfs"/{usr,etc,tmp,proc,dev,sys,opt}
	chmod 1777 "$DK/rootfs/tmp"
	for l in bin lib lib64 sbin; do ln -sfn "usr/$l" "$DK/rootfs/$l"; done
	jq -n --arg w "$FS_BUILD/flamesidecar-runtime" '{runtimes: {
		flamesidecar: {path: $w, runtimeArgs: ["--opt-in"]},
		"flamesidecar-plain": {path: $w}}}' >"$DK/daemon.json"
	DK_CGROUP="fsdock-$$"
	# The shim, and so the wrapper and the hook, get dockerd's environment:
	# FLAMESIDECAR_CONFIG goes to the daemon.
	FLAMESIDECAR_CONFIG="$FS_CONFIG" setsid dockerd --data-root "$DK/data" --exec-root "$DK/exec" \
		-H "unix://$DK/docker.sock" --pidfile "$DK/docker.pid" --config-file "$DK/daemon.json" \
		--iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --bridge=none \
		--storage-driver=vfs --exec-opt native.cgroupdriver=cgroupfs \
		--cgroup-parent "/$DK_CGROUP" >"$DK/dockerd.log" 2>&1 </dev/null &
	if ! fs_wait_for 60 dk version; then
		tail -5 "$DK/dockerd.log" >&2
		return 1
	fi
	tar -C "$DK/rootfs" -c . | dk import - fstest:tiny >/dev/null
}

dockerd_stop() {
	[ -n "${DK:-}" ] && [ -S "$DK/docker.sock" ] || return 0
	local ids
	ids=$(dk ps -aq 2>/dev/null)
	[ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1 || true
	local pid
	pid=$(cat "$DK/docker.pid" 2>/dev/null) || pid=
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		fs_wait_for 30 test ! -e "/proc/$pid" || kill -9 "$pid" 2>/dev/null || true
	fi
	# Its containerd and shims exit with it; check, then leave no cgroup behind.
	local p
	for p in $(pgrep -f "$DK/" || true); do
		echo "# teardown: process $p was left: $(tr '\0' ' ' </proc/$p/cmdline)" >&2
		kill -9 "$p" 2>/dev/null || true
	done
	find /sys/fs/cgroup -maxdepth 2 -type d -name "$DK_CGROUP" 2>/dev/null | while read -r d; do
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	if [ "${DK_MADE_RUN:-0}" = 1 ]; then
		rmdir /run/containerd/s /run/containerd 2>/dev/null || true
	fi
}

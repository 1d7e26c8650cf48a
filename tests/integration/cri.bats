#!/usr/bin/env bats
# Kubernetes on containerd, driven the way the kubelet drives it: a private
# containerd 1.6 with its CRI plugin configured as docs/engines.md says
# (flamesidecar-runtime as the runc BinaryName, pod_annotations
# ["flamesidecar.io/*"]), a pause image built here (a static binary), and
# pods created over the CRI gRPC API by tests/cri/cri.py: RunPodSandbox with
# the flamesidecar.io/* pod annotations, then CreateContainer and
# StartContainer; StopPodSandbox and RemovePodSandbox to delete the pod.
# Pods use the node's network (there is no CNI here). Everything is under
# $FS_TMP except containerd's fixed shim socket directory /run/containerd/s,
# which the shims clean themselves; teardown checks.

load ../lib/containers

PY=/usr/bin/python3
CRI="$FS_TOP/tests/cri/cri.py"

cri() {
	"$PY" "$CRI" "$CT/ctrd.sock" "$@"
}

ctrd_start() {
	CT="$FS_TMP/ctrd"
	# The shims' fixed socket directory: removed at the end if we caused it.
	CT_MADE_RUN=1
	[ ! -e /run/containerd ] || CT_MADE_RUN=0
	mkdir -p "$CT"/{pauseroot,approot/{usr,etc,tmp,proc,dev,sys,opt},logs,cni/bin,cni/conf}
	chmod 1777 "$CT/approot/tmp"
	for l in bin lib lib64 sbin; do ln -sfn "usr/$l" "$CT/approot/$l"; done
	cc -static -Os -o "$CT/pauseroot/pause" "$FS_TOP/tests/cri/pause.c" || return 1
	"$PY" "$CRI" - image "$CT/pause.tar" docker.io/fstest/pause:1 "$CT/pauseroot" /pause || return 1
	"$PY" "$CRI" - image "$CT/app.tar" docker.io/fstest/tiny:1 "$CT/approot" || return 1
	CT_CGROUP="fscri-$$"
	# restrict_oom_score_adj: the sandbox asks for oom_score_adj -998, which
	# needs a capability this machine's root lacks.
	cat >"$CT/config.toml" <<TOML
version = 2
root = "$CT/root"
state = "$CT/state"
[grpc]
  address = "$CT/ctrd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CT/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/fstest/pause:1"
  disable_apparmor = true
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CT/cni/bin"
    conf_dir = "$CT/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      pod_annotations = ["flamesidecar.io/*"]
      container_annotations = ["flamesidecar.io/*"]
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$FS_BUILD/flamesidecar-runtime"
        Root = "$CT/runc"
TOML
	FLAMESIDECAR_CONFIG="$FS_CONFIG" setsid containerd --config "$CT/config.toml" \
		>"$CT/containerd.log" 2>&1 </dev/null &
	echo $! >"$CT/containerd.pid"
	if ! fs_wait_for 30 cri version; then
		tail -5 "$CT/containerd.log" >&3
		return 1
	fi
	local i
	for i in pause app; do
		ctr --address "$CT/ctrd.sock" -n k8s.io images import --snapshotter native "$CT/$i.tar" \
			>/dev/null || return 1
	done
}

ctrd_stop() {
	[ -n "${CT:-}" ] && [ -f "$CT/containerd.pid" ] || return 0
	local pod
	for pod in $(cat "$CT/pods" 2>/dev/null); do cri pod-down "$pod" >/dev/null 2>&1 || true; done
	local pid
	pid=$(cat "$CT/containerd.pid")
	kill "$pid" 2>/dev/null || true
	fs_wait_for 30 test ! -e "/proc/$pid" || kill -9 "$pid" 2>/dev/null || true
	local p
	for p in $(pgrep -f "$CT/" || true); do
		echo "# teardown: process $p was left: $(tr '\0' ' ' </proc/$p/cmdline)" >&3
		kill -9 "$p" 2>/dev/null || true
	done
	find /sys/fs/cgroup -maxdepth 2 -type d -name "$CT_CGROUP" 2>/dev/null | while read -r d; do
		find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	if [ "${CT_MADE_RUN:-0}" = 1 ]; then
		rmdir /run/containerd/s /run/containerd 2>/dev/null || true
	fi
}

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	for c in containerd ctr containerd-shim-runc-v2 runc jq protoc cc; do
		command -v "$c" >/dev/null || return 0
	done
	"$PY" -c 'import grpc, google.protobuf' 2>/dev/null || return 0
	fs_setup
	ctrd_start || { ctrd_stop; return 0; }
	export FS_TMP FS_RUN FS_CONFIG FLAMESIDECAR_CONFIG CT CT_CGROUP CT_MADE_RUN
}

teardown_file() {
	ctrd_stop
	fs_cleanup
}

setup() {
	fs_require_root
	fs_require_cmd containerd ctr containerd-shim-runc-v2 runc jq protoc cc
	"$PY" -c 'import grpc, google.protobuf' 2>/dev/null ||
		skip "python3-grpcio and python3-protobuf are needed for the CRI client"
	[ -n "${CT:-}" ] && [ -S "$CT/ctrd.sock" ] || skip "the private containerd did not start (see its log)"
	POD=fscri$$-$BATS_TEST_NUMBER
}

entry() {
	jq -r ".$1" "$FS_RUN/containers/$2.json"
}

# pod_spec NAME NAMESPACE ANNOTATIONS-JSON CONTAINERS-JSON
pod_spec() {
	jq -n --arg n "$1" --arg ns "$2" --argjson ann "$3" --argjson c "$4" \
		--arg cg "/$CT_CGROUP" --arg logs "$CT/logs" --arg uid "uid-$1" '{
		pod: {name: $n, namespace: $ns, uid: $uid, cgroup_parent: $cg,
		      log_directory: $logs, annotations: $ann},
		containers: $c}' >"$CT/$1.json"
}

# A container of the tiny image with host /usr and /etc read-only, uid 1000.
ctr_json() {
	local name=$1
	shift
	local args='[]' a
	for a in "$@"; do args=$(jq -c --arg a "$a" '. + [$a]' <<<"$args"); done
	jq -cn --arg n "$name" --argjson cmd "$args" --arg java "$FS_BUILD/java" '{
		name: $n, image: "docker.io/fstest/tiny:1", command: $cmd, user: 1000,
		envs: {HOME: "/tmp"},
		mounts: [["/usr", "/usr", true], ["/etc", "/etc", true], [$java, "/opt/fsjava", true]]}'
}

pod_up() {
	cri pod-up "$CT/$1.json" >"$CT/$1.ids"
	jq -r .pod "$CT/$1.ids" >>"$CT/pods"
}

@test "cri: an annotated pod's containers are registered with pod, namespace and container names; the sandbox is not" {
	pod_spec "$POD" shop '{"flamesidecar.io/enable": "true"}' \
		"[$(ctr_json app /usr/bin/sleep 1000), $(ctr_json envoy /usr/bin/sleep 1000)]"
	pod_up "$POD"
	pod=$(jq -r .pod "$CT/$POD.ids")
	app=$(jq -r .containers.app "$CT/$POD.ids")
	envoy=$(jq -r .containers.envoy "$CT/$POD.ids")
	[ "$(entry names.pod "$app")" = "$POD" ]
	[ "$(entry names.namespace "$app")" = shop ]
	[ "$(entry names.container "$app")" = app ]
	[ "$(entry names.container "$envoy")" = envoy ]
	[ "$(entry uid "$app")" = 1000 ]
	# The pause container got no hooks: the wrapper left it alone.
	[ ! -e "$FS_RUN/containers/$pod.json" ]
	! grep -q flamehook "$CT/state/io.containerd.runtime.v2.task/k8s.io/$pod/config.json" || false
	grep -q flamehook "$CT/state/io.containerd.runtime.v2.task/k8s.io/$app/config.json"
	run "$FS_SIDECAR" list
	[[ "$output" == *"${app:0:12} "*"shop/$POD/app "* ]]
	run "$FS_SIDECAR" run --pod "$POD" -d 0.2s --no-map -o "$FS_TMP/x.svg" --no-folded
	[ "$status" -eq 3 ]
	[[ "$output" == *"matches 2 containers"*"--container NAME"* ]]
	cri pod-down "$pod"
	[ ! -e "$FS_RUN/containers/$app.json" ]
	[ ! -e "$FS_RUN/containers/$envoy.json" ]
}

@test "cri: a pod without the annotation is untouched" {
	pod_spec "$POD" shop '{}' "[$(ctr_json app /usr/bin/sleep 1000)]"
	pod_up "$POD"
	app=$(jq -r .containers.app "$CT/$POD.ids")
	[ ! -e "$FS_RUN/containers/$app.json" ]
	! grep -q flamehook "$CT/state/io.containerd.runtime.v2.task/k8s.io/$app/config.json" || false
	cri pod-down "$(jq -r .pod "$CT/$POD.ids")"
}

@test "cri: run --pod profiles the pod's JVM by name; a pod annotation triggers a profile; deleting the pod cleans up" {
	[ -x "$JAVA17" ] || skip "no JDK 17 at $JAVA17"
	[ -f "$FS_BUILD/java/flametest/Workload.class" ] || skip "Java workloads not built (make agent)"
	pod_spec "$POD" shop '{"flamesidecar.io/enable": "true", "flamesidecar.io/profile": "3s", "flamesidecar.io/delay": "2s"}' \
		"[$(ctr_json app "$JAVA17" -XX:+PreserveFramePointer -cp /opt/fsjava flametest.Workload --threads 2)]"
	pod_up "$POD"
	pod=$(jq -r .pod "$CT/$POD.ids")
	app=$(jq -r .containers.app "$CT/$POD.ids")
	[ "$(entry names.pod "$app")" = "$POD" ]
	[ "$(entry annotations.profile "$app")" = 3s ]
	fs_wait_for 60 grep -q READY "$CT/logs/app.log"
	cd "$FS_TMP"
	run "$FS_SIDECAR" run --pod "$POD" --namespace shop --container app -d 4s -F 199 -o pod.svg
	echo "$output"
	[ "$status" -eq 0 ]
	all=$(awk '{ n += $NF } END { print n + 0 }' pod.folded)
	hot=$(awk '/flametest\.Workload\.hotMethod/ { n += $NF } END { print n + 0 }' pod.folded)
	echo "# cri: $hot of $all samples in hotMethod" >&3
	[ "$all" -gt 50 ]
	[ $((hot * 2)) -gt "$all" ]
	# The triggered profile (poststart, 2 s delay, 3 s) lands in the profile directory.
	fs_wait_for 60 sh -c "ls '$FS_TMP/profiles/$app/'*.svg"
	fs_wait_for 30 test ! -e "$FS_RUN/profiling/$app.json"
	folded=$(ls "$FS_TMP/profiles/$app"/*.folded)
	grep -q 'flametest.Workload.hotMethod' "$folded"
	cri pod-down "$pod"
	[ ! -e "$FS_RUN/containers/$app.json" ]
	fs_wait_for 10 sh -c "! pgrep -f 'containerd-shim.* -id $pod( |\$)'"
	[ -z "$(cri list "$pod" 2>/dev/null | jq -r 'keys[]' 2>/dev/null)" ]
}

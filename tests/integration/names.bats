#!/usr/bin/env bats
# Containers by the names their engine gave them: Kubernetes pod,
# namespace and container names from the CRI annotations (containerd's and
# CRI-O's, written into real runc bundles exactly as those engines write
# them), Podman's name from its own state on disk, and the lookups every
# verb does: id, unique id prefix, name, --pod [--namespace] [--container];
# ambiguous and unknown names are clear errors.

load ../lib/containers

setup() {
	fs_test_setup fsn
}

teardown() {
	fs_cleanup
}

entry() {
	jq -r ".$1" "$FS_RUN/containers/$2.json"
}

# cri_bundle DIR TYPE POD NS CONTAINER: a bundle annotated as containerd's
# CRI plugin annotates it (pkg/cri/annotations), opted in.
cri_bundle() {
	fs_make_bundle "$1" --annotate flamesidecar.io/enable=true \
		--annotate io.kubernetes.cri.container-type="$2" \
		--annotate io.kubernetes.cri.sandbox-name="$3" \
		--annotate io.kubernetes.cri.sandbox-namespace="$4" \
		--annotate io.kubernetes.cri.container-name="$5" -- sleep 1000
}

# A short profile that says which container it picked ("container <id>").
profile() {
	"$FS_SIDECAR" run "$@" -d 0.2s --no-map -o "$FS_TMP/p.svg" --no-folded
}

@test "names: CRI pod, namespace and container names are registered; the sandbox is not" {
	cri_bundle "$FS_TMP/sb" sandbox checkout-7d9f shop ""
	fs_runc_run "$NAME-sandbox" "$FS_TMP/sb"
	cri_bundle "$FS_TMP/app" container checkout-7d9f shop app
	fs_runc_run "$NAME-app" "$FS_TMP/app"
	[ ! -e "$FS_RUN/containers/$NAME-sandbox.json" ]
	grep -q "$NAME-sandbox.*pod sandbox shop/checkout-7d9f: not registered" "$FS_RUN/hook.log"
	[ "$(entry names.pod "$NAME-app")" = checkout-7d9f ]
	[ "$(entry names.namespace "$NAME-app")" = shop ]
	[ "$(entry names.container "$NAME-app")" = app ]
	[ "$(entry names.engine "$NAME-app")" = kubernetes ]
	run "$FS_SIDECAR" list
	[ "$status" -eq 0 ]
	[[ "$output" == *"$NAME-app"*"shop/checkout-7d9f/app"* ]]
	run "$FS_SIDECAR" list --json
	[ "$(jq -r --arg id "$NAME-app" '.[] | select(.id == $id) | "\(.pod) \(.namespace) \(.container) \(.name)"' <<<"$output")" = "checkout-7d9f shop app null" ]
}

@test "names: CRI-O's annotations give the same names" {
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true \
		--annotate io.kubernetes.cri-o.ContainerType=container \
		--annotate io.kubernetes.pod.name=web-0 --annotate io.kubernetes.pod.namespace=default \
		--annotate io.kubernetes.container.name=jetty -- sleep 1000
	fs_runc_run "$NAME" "$FS_TMP/b"
	[ "$(entry names.pod "$NAME")" = web-0 ]
	[ "$(entry names.container "$NAME")" = jetty ]
}

@test "lookups: --pod, --namespace, --container; ambiguous pods list their containers" {
	cri_bundle "$FS_TMP/a" container checkout-7d9f shop app
	fs_runc_run "$NAME-a" "$FS_TMP/a"
	cri_bundle "$FS_TMP/b" container checkout-7d9f shop envoy
	fs_runc_run "$NAME-b" "$FS_TMP/b"
	run profile --pod checkout-7d9f --container envoy
	[ "$status" -eq 0 ]
	[[ "$output" == *"$NAME-b"* ]]
	run profile --pod=checkout-7d9f --namespace=shop --container=app
	[ "$status" -eq 0 ]
	[[ "$output" == *"$NAME-a"* ]]
	run profile --pod checkout-7d9f
	[ "$status" -eq 3 ]
	[[ "$output" == *"matches 2 containers"*"shop/checkout-7d9f app"*"shop/checkout-7d9f envoy"*"--container NAME"* ]]
	run profile --pod checkout-7d9f --namespace prod
	[ "$status" -eq 3 ]
	[[ "$output" == *"no registered container in pod 'checkout-7d9f' in namespace prod"* ]]
	run profile --container app
	[ "$status" -eq 2 ]
	[[ "$output" == *"need --pod NAME"* ]]
	run "$FS_SIDECAR" top --pod checkout-7d9f --container app --once -i 0.2s
	[ "$status" -eq 0 ]
	run "$FS_SIDECAR" map --pod nope
	[ "$status" -eq 3 ]
}

@test "lookups: id, unique prefix, and unknown names; list shows full ids" {
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_runc_run "$NAME-long-container-id-1" "$FS_TMP/b"
	fs_make_bundle "$FS_TMP/c" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_runc_run "$NAME-long-container-id-2" "$FS_TMP/c"
	run profile "$NAME-long-container-id-1"
	[ "$status" -eq 0 ]
	run profile "$NAME-long-container-id-"
	[ "$status" -eq 3 ]
	[[ "$output" == *"id prefix '$NAME-long-container-id-' matches 2 containers"* ]]
	run profile "$NAME-long-container-id-2"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$NAME-long-container-id-2"* ]]
	run profile no-such-name
	[ "$status" -eq 3 ]
	[[ "$output" == *"no registered container has the id, name or id prefix 'no-such-name'"* ]]
	run "$FS_SIDECAR" list
	[[ "$output" == *"$NAME-long-container-id-1 "* ]]
	[[ "$output" == *"$NAME-long-container-id-2 "* ]]
}

@test "podman: the container's name comes from Podman's own state; run and list use it" {
	fs_require_cmd podman
	mkdir -p "$FS_TMP/hooks.d" "$FS_TMP/prootfs/tmp" "$FS_TMP/prootfs/opt"
	chmod 1777 "$FS_TMP/prootfs/tmp"
	for l in bin lib lib64 sbin; do ln -sfn "usr/$l" "$FS_TMP/prootfs/$l"; done
	for st in prestart poststop; do
		jq -n --arg h "$FS_HOOK" --arg c "$FS_CONFIG" --arg s "$st" '{version: "1.0.0",
			hook: {path: $h, args: ["flamehook", "--config", $c, $s]},
			when: {annotations: {"^flamesidecar\\.io/enable$": "^true$"}}, stages: [$s]}' \
			>"$FS_TMP/hooks.d/fs-$st.json"
	done
	echo "podman $NAME-web" >>"$FS_TMP/containers"
	cid=$(podman --runtime runc --cgroup-manager=cgroupfs --hooks-dir "$FS_TMP/hooks.d" run -d \
		--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --user 1000:1000 \
		-v /usr:/usr:ro -v /etc:/etc:ro --name "$NAME-web" \
		--annotation flamesidecar.io/enable=true --rootfs "$FS_TMP/prootfs" sleep 1000)
	[ "$(entry names.name "$cid")" = "$NAME-web" ]
	[ "$(entry names.engine "$cid")" = podman ]
	run profile "$NAME-web"
	[ "$status" -eq 0 ]
	[[ "$output" == *"${cid:0:12}"* ]]
	run "$FS_SIDECAR" list
	[[ "$output" == *"${cid:0:12} "*"$NAME-web"* ]]
	podman rm -f -t 0 "$NAME-web"
	[ ! -e "$FS_RUN/containers/$cid.json" ]
}

# A stand-in for the triggered `run`: one small SVG, folded and pprof file
# each, then it waits while $FS_TMP/hold exists (a profile holding its slot).
fake_sidecar() {
	cat >"$FS_TMP/fake-sidecar" <<SH
#!/bin/sh
while [ \$# -gt 0 ]; do
	case "\$1" in
	-o|--folded|--pprof) head -c 100 /dev/zero >"\$2"; shift ;;
	esac
	shift
done
i=0
while [ -e "$FS_TMP/hold" ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done
SH
	chmod +x "$FS_TMP/fake-sidecar"
	fs_config_set '.sidecar_path = $f | .max_profiles_per_container = 1' --arg f "$FS_TMP/fake-sidecar"
}

@test "names: an annotation cannot take a Podman container's name, its profile slot or its quota" {
	fs_require_cmd podman
	fake_sidecar
	mkdir -p "$FS_TMP/hooks.d" "$FS_TMP/prootfs/tmp" "$FS_TMP/prootfs/opt"
	chmod 1777 "$FS_TMP/prootfs/tmp"
	for l in bin lib lib64 sbin; do ln -sfn "usr/$l" "$FS_TMP/prootfs/$l"; done
	for st in prestart poststart poststop; do
		jq -n --arg h "$FS_HOOK" --arg c "$FS_CONFIG" --arg s "$st" '{version: "1.0.0",
			hook: {path: $h, args: ["flamehook", "--config", $c, $s]},
			when: {annotations: {"^flamesidecar\\.io/enable$": "^true$"}}, stages: [$s]}' \
			>"$FS_TMP/hooks.d/fs-$st.json"
	done
	touch "$FS_TMP/hold"
	# The Podman container claims another name by annotation, as anyone
	# who can run it can: Podman's own record names it.
	echo "podman $NAME-web" >>"$FS_TMP/containers"
	cid=$(podman --runtime runc --cgroup-manager=cgroupfs --hooks-dir "$FS_TMP/hooks.d" run -d \
		--ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --user 1000:1000 \
		-v /usr:/usr:ro -v /etc:/etc:ro --name "$NAME-web" \
		--annotation flamesidecar.io/enable=true --annotation flamesidecar.io/profile=1s \
		--annotation "nerdctl/name=$NAME-other" --rootfs "$FS_TMP/prootfs" sleep 1000)
	[ "$(entry names.name "$cid")" = "$NAME-web" ]
	[ "$(entry names.engine "$cid")" = podman ]
	[ "$(entry names.name_source "$cid")" = engine ]
	fs_wait_for 10 test -e "$FS_RUN/profiling/$cid.json"
	# A runc container claims the Podman container's name by annotation.
	fs_make_bundle "$FS_TMP/claim1" --annotate flamesidecar.io/enable=true \
		--annotate flamesidecar.io/profile=1s --annotate "nerdctl/name=$NAME-web" -- sleep 1000
	fs_runc_run "$NAME-claim1" "$FS_TMP/claim1"
	[ "$(entry names.name_source "$NAME-claim1")" = annotation ]
	# Its profile gets a slot of its own: the Podman name's is not taken...
	fs_wait_for 10 test -e "$FS_RUN/profiling/$NAME-claim1.json"
	! grep -q "$NAME-claim1: profile trigger refused" "$FS_RUN/hook.log" || false
	rm -f "$FS_TMP/hold"
	fs_wait_for 20 test ! -e "$FS_RUN/profiling/$cid.json"
	fs_wait_for 20 test ! -e "$FS_RUN/profiling/$NAME-claim1.json"
	[ "$(cat "$FS_TMP/profiles/$cid/.key")" = "name podman/$NAME-web" ]
	[ "$(cat "$FS_TMP/profiles/$NAME-claim1/.key")" = "claim name nerdctl/$NAME-web" ]
	# ...and a second claim (quota 1 profile per name) pushes out the
	# first claim's profile, never the Podman container's.
	fs_make_bundle "$FS_TMP/claim2" --annotate flamesidecar.io/enable=true \
		--annotate flamesidecar.io/profile=1s --annotate "nerdctl/name=$NAME-web" -- sleep 1000
	fs_runc_run "$NAME-claim2" "$FS_TMP/claim2"
	fs_wait_for 20 test ! -e "$FS_RUN/profiling/$NAME-claim2.json"
	grep -q "$NAME-claim2: profile quota: removing .*container quota, claim name nerdctl/$NAME-web" "$FS_RUN/hook.log"
	[ -z "$(ls "$FS_TMP/profiles/$NAME-claim1/"*.svg 2>/dev/null)" ]
	[ -n "$(ls "$FS_TMP/profiles/$cid/"*.svg)" ]
	# list, list --json and the run summary say where each name came from.
	run "$FS_SIDECAR" list
	echo "$output"
	[[ "$output" =~ ${cid:0:12}\ +$NAME-web\ +engine\  ]]
	[[ "$output" =~ $NAME-claim1\ +$NAME-web\ +annotation\  ]]
	run "$FS_SIDECAR" list --json
	[ "$(jq -r --arg id "$cid" '.[] | select(.id == $id) | .name_source' <<<"$output")" = "engine state" ]
	[ "$(jq -r --arg id "$NAME-claim1" '.[] | select(.id == $id) | .name_source' <<<"$output")" = annotation ]
	# The name is the Podman container's: the claims neither take it nor
	# make it ambiguous.
	run profile "$NAME-web"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"container  ${cid:0:12} $NAME-web (name from engine state)"* ]]
	run profile "$NAME-claim1"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"container  $NAME-claim1 $NAME-web (name from annotation)"* ]]
	podman rm -f -t 0 "$NAME-web"
}

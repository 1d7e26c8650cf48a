#!/usr/bin/env bats
# Annotation-triggered profiling: flamesidecar.io/profile (+ delay,
# frequency) at poststart starts a detached profiler and returns at once.
# Most cases use a stand-in profiler that records how it was started and
# blocks until the test releases it; the last one runs the real thing.

load ../lib/containers

setup() {
	fs_test_setup fst
	FAKE="$FS_TMP/fake-sidecar"
	cat >"$FAKE" <<SH
#!/bin/sh
# Stand-in for flamesidecar: record argv, environment and open fds, then wait.
printf '%s\n' "\$@" >"$FS_TMP/args.\$\$"
env >"$FS_TMP/env.\$\$"
ls /proc/self/fd >"$FS_TMP/fds.\$\$"
i=0
while [ ! -e "$FS_TMP/release" ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i+1)); done
SH
	chmod +x "$FAKE"
	fs_config_set '.sidecar_path = $f | .max_profile_seconds = 20 | .max_frequency = 499' --arg f "$FAKE"
}

teardown() {
	touch "$FS_TMP/release" 2>/dev/null || true
	fs_cleanup
}

start() {
	local name=$1
	shift
	fs_make_bundle "$FS_TMP/$name" --annotate flamesidecar.io/enable=true "$@" -- sleep 1000
	fs_runc_run "$name" "$FS_TMP/$name"
}

args_file() { ls "$FS_TMP"/args.* 2>/dev/null | head -1; }
has_args() { [ -n "$(args_file)" ]; }

# The monitor of a triggered profile logs one last line for it, after the
# profiler exited and its marker was removed: that is when its files are in
# place (or known missing). Waiting for the marker to go instead would not
# wait if the marker were not there yet.
profile_ended() {
	grep -Eq " $1: (profile written|profiler failed|profiler killed|cannot start the profiler)" \
		"$FS_RUN/hook.log" 2>/dev/null && [ ! -e "$FS_RUN/profiling/$1.json" ]
}

# Wait for id's triggered profile to end; on a timeout (and in any case,
# for a failure below) show what there is: the profile dir, its .log, the
# hook log.
wait_profile() {
	local rc=0
	fs_wait_for "$2" profile_ended "$1" || rc=$?
	echo "# $FS_TMP/profiles/$1:"
	ls -l "$FS_TMP/profiles/$1" 2>&1 || true
	echo "# its .log:"
	cat "$FS_TMP/profiles/$1"/*.log 2>&1 || true
	echo "# hook.log (tail):"
	tail -n 30 "$FS_RUN/hook.log" 2>&1 || true
	return $rc
}

@test "profile=5s delay=1s: the runtime returns while the profiler runs; output under profile_dir/<id>" {
	start "$NAME" --annotate flamesidecar.io/profile=5s --annotate flamesidecar.io/delay=1s
	# runc run -d has returned and the profiler has not been released yet.
	[ "$(runc state "$NAME" | jq -r .status)" = running ]
	# The hook returned once the monitor's marker was written: a profile is
	# pending from the moment the container runs (the tests below wait for
	# the marker to go, which would not wait if it came later).
	[ -e "$FS_RUN/profiling/$NAME.json" ]
	fs_wait_for 10 has_args
	a=$(args_file)
	mapfile -t argv <"$a"
	echo "${argv[*]}"
	[ "${argv[0]}" = --config ] && [ "${argv[1]}" = "$FS_CONFIG" ]
	[ "${argv[2]}" = run ] && [ "${argv[3]}" = --exact-process ] && [ "${argv[5]}" = "$NAME" ]
	# This very process: the registered pid and start time.
	[ "${argv[4]}" = "$(jq -r '"\(.pid):\(.start_time)"' "$FS_RUN/containers/$NAME.json")" ]
	[[ " ${argv[*]} " == *" -d 5s -F 99 "* ]]
	[[ "${argv[*]}" == *"-o $FS_TMP/profiles/$NAME/"*Z.svg* ]]
	[[ "${argv[*]}" == *"--folded $FS_TMP/profiles/$NAME/"*Z.folded* ]]
	[[ "${argv[*]}" == *"--pprof $FS_TMP/profiles/$NAME/"*Z.pb.gz* ]]
	[ "$(stat -c %a "$FS_TMP/profiles/$NAME")" = 700 ]
	# Minimal environment, no inherited descriptors.
	pid=${a##*.}
	[ "$(grep -cv -e '^PATH=' -e '^LC_ALL=' -e '^PWD=' -e '^SHLVL=' -e '^_=' "$FS_TMP/env.$pid")" = 0 ]
	[ "$(grep -cvx -e 0 -e 1 -e 2 -e 3 "$FS_TMP/fds.$pid")" = 0 ] # 3 is ls's own dir fd
	# list shows it in progress; when it ends the marker goes.
	run "$FS_SIDECAR" list
	[[ "$output" == *profiling* ]]
	# --json names the three files it is writing
	run "$FS_SIDECAR" list --profiles --json
	echo "$output"
	local base
	base=$(jq -r --arg id "$NAME" '.[] | select(.id == $id and .state == "profiling") | .svg' <<<"$output")
	base=${base%.svg}
	[[ "$base" == "$FS_TMP/profiles/$NAME/"*Z ]]
	[ "$(jq -r --arg id "$NAME" '.[] | select(.id == $id) | "\(.folded) \(.pprof)"' <<<"$output")" = \
		"$base.folded $base.pb.gz" ]
	touch "$FS_TMP/release"
	fs_wait_for 20 test ! -e "$FS_RUN/profiling/$NAME.json"
	grep -q "profile written" "$FS_RUN/hook.log"
}

@test "a 10-hour profile and a 1 MHz frequency are capped as configured and logged" {
	start "$NAME" --annotate flamesidecar.io/profile=10h --annotate flamesidecar.io/frequency=1000000
	fs_wait_for 10 has_args
	run cat "$(args_file)"
	[[ "$output" == *$'\n-d\n20s\n-F\n499\n'* ]]
	grep -q "duration capped from 36000s to 20s" "$FS_RUN/hook.log"
	grep -q "frequency capped from 1000000 to 499 Hz" "$FS_RUN/hook.log"
	[ "$(runc state "$NAME" | jq -r .status)" = running ]
}

@test "a path or an option in an annotation is refused and logged; the container is unaffected" {
	for bad in "/etc/passwd" "5s;rm" "--help" "-5s" "5 s" "0s" "1e9"; do
		NAME2="$NAME-$RANDOM"
		start "$NAME2" --annotate "flamesidecar.io/profile=$bad"
		[ "$(runc state "$NAME2" | jq -r .status)" = running ]
	done
	start "$NAME-d" --annotate flamesidecar.io/profile=5s --annotate flamesidecar.io/delay=../x
	start "$NAME-f" --annotate flamesidecar.io/profile=5s --annotate flamesidecar.io/frequency=/tmp
	[ -z "$(args_file)" ]
	[ "$(grep -c "profile trigger refused" "$FS_RUN/hook.log")" = 9 ]
	[ ! -e /etc/passwd.svg ]
	[ -z "$(ls -A "$FS_RUN/profiling" 2>/dev/null)" ]
}

@test "beyond max_concurrent_profiles a trigger is refused" {
	fs_config_set '.max_concurrent_profiles = 1'
	start "$NAME-a" --annotate flamesidecar.io/profile=5s
	fs_wait_for 10 has_args
	start "$NAME-b" --annotate flamesidecar.io/profile=5s
	grep -q "$NAME-b: profile trigger refused: 1 profiles already running" "$FS_RUN/hook.log"
	[ ! -e "$FS_RUN/profiling/$NAME-b.json" ]
}

@test "podman with the installed hooks.d files: profile=5s delay=2s leaves an SVG and folded profile with the hot method" {
	fs_require_cmd podman java
	"$FS_SIDECAR" run --help >/dev/null 2>&1 || skip "flamesidecar run is not in this build"
	[ -f "$FS_BUILD/java/flametest/Workload.class" ] || skip "the Java workload is not built"
	# make install into a staging root, then use its hooks.d files.
	make -C "$FS_TOP" -s install DESTDIR="$FS_TMP/stage" PREFIX=/usr BUILD="$(realpath --relative-to="$FS_TOP" "$FS_BUILD")" >/dev/null
	hooks="$FS_TMP/stage/usr/share/containers/oci/hooks.d"
	[ -f "$hooks/flamesidecar.json" ] && [ -f "$hooks/flamesidecar-poststart.json" ]
	mkdir -p "$FS_TMP/hooks.d"
	for f in "$hooks"/*.json; do
		[ "$(jq -r .hook.path "$f")" = /usr/bin/flamehook ]
		jq --arg h "$FS_HOOK" --arg c "$FS_CONFIG" \
			'.hook.path = $h | .hook.args = ["flamehook", "--config", $c, .hook.args[-1]]' \
			"$f" >"$FS_TMP/hooks.d/$(basename "$f")"
	done
	fs_config_set '.sidecar_path = $s' --arg s "$FS_SIDECAR"
	mkdir -p "$FS_TMP/prootfs"/{tmp,usr,etc}
	chmod 1777 "$FS_TMP/prootfs/tmp"
	for l in bin lib lib64 sbin; do ln -s "usr/$l" "$FS_TMP/prootfs/$l"; done
	echo "podman $NAME" >>"$FS_TMP/containers"
	podman --runtime runc --cgroup-manager=cgroupfs --hooks-dir "$FS_TMP/hooks.d" run -d --name "$NAME" \
		--ulimit nofile=4096:4096 --ulimit nproc=4096:4096 --user 1000:1000 \
		--annotation flamesidecar.io/enable=true --annotation flamesidecar.io/profile=5s \
		--annotation flamesidecar.io/delay=2s -v /usr:/usr:ro -v /etc:/etc:ro \
		-v "$FS_BUILD/java:/app:ro" --rootfs "$FS_TMP/prootfs" \
		java -XX:+PreserveFramePointer -cp /app flametest.Workload --threads 1
	# podman run -d returned at once; the profile appears later.
	cid=$(podman inspect -f '{{.Id}}' "$NAME")
	[ -e "$FS_RUN/profiling/$cid.json" ]
	wait_profile "$cid" 60
	svg=$(ls "$FS_TMP/profiles/$cid"/*.svg)
	folded=$(ls "$FS_TMP/profiles/$cid"/*.folded)
	grep -q "flametest.Workload.hotMethod" "$folded"
	grep -q "hotMethod" "$svg"
	# the pprof beside them, read by go tool pprof
	if command -v go >/dev/null; then
		go tool pprof -top -sample_index=samples "${svg%.svg}.pb.gz" 2>/dev/null |
			grep -q flametest.Workload.hotMethod
	fi
}

@test "a container that exits after 1 s of a 10 s trigger still leaves a profile" {
	"$FS_SIDECAR" run --help >/dev/null 2>&1 || skip "flamesidecar run is not in this build"
	fs_config_set '.sidecar_path = $s' --arg s "$FS_SIDECAR"
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true --annotate flamesidecar.io/profile=10s \
		-- sh -c 'i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); done; sleep 0.5'
	fs_runc_run "$NAME" "$FS_TMP/b"
	wait_profile "$NAME" 30
	folded=$(ls "$FS_TMP/profiles/$NAME"/*.folded)
	[ -s "$folded" ]
	svg=$(ls "$FS_TMP/profiles/$NAME"/*.svg)
	[ -s "${svg%.svg}.pb.gz" ]
	gzip -t "${svg%.svg}.pb.gz"
	# list --profiles --json names all three files
	run "$FS_SIDECAR" list --profiles --json
	echo "$output"
	[ "$(jq -r --arg id "$NAME" '.[] | select(.id == $id) | "\(.svg) \(.folded) \(.pprof)"' <<<"$output")" = \
		"$svg $folded ${svg%.svg}.pb.gz" ]
}

@test "event=offcpu and wall reach run as --event; any other value is logged and profiles cpu" {
	local ev
	for ev in offcpu wall; do
		start "$NAME-$ev" --annotate flamesidecar.io/profile=5s --annotate "flamesidecar.io/event=$ev"
		fs_wait_for 10 has_args
		run cat "$(args_file)"
		[[ "$output" == *$'\n--event\n'"$ev"$'\n'* ]]
		grep -q "$NAME-$ev: profiling: 5s .*(event $ev)" "$FS_RUN/hook.log"
		touch "$FS_TMP/release"
		fs_wait_for 20 profile_ended "$NAME-$ev"
		rm -f "$FS_TMP/release" "$FS_TMP"/args.*
	done
	# hostile values: neither an argument of run nor a refusal of the profile
	local i=0 bad long
	long=$(printf 'wall%.0s' $(seq 1 40)) # past REGISTRY_ANNOTATION_MAX
	for bad in "--output=/etc/x" "wall;rm -rf /" "OFFCPU" "$long" "off"$'\n'"FAKE LINE"; do
		i=$((i + 1))
		start "$NAME-b$i" --annotate flamesidecar.io/profile=5s --annotate "flamesidecar.io/event=$bad"
		[ "$(runc state "$NAME-b$i" | jq -r .status)" = running ]
		fs_wait_for 10 has_args
		run cat "$(args_file)"
		[[ "$output" == *$'\n--event\ncpu\n'* ]]
		[[ "$output" != *"/etc/x"* && "$output" != *rm* && "$output" != *FAKE* ]]
		grep -q "$NAME-b$i: profile trigger: flamesidecar.io/event \".*\" is not cpu, offcpu or wall: a cpu profile" "$FS_RUN/hook.log"
		grep -q "$NAME-b$i: profiling: 5s .*(event cpu)" "$FS_RUN/hook.log"
		touch "$FS_TMP/release"
		fs_wait_for 20 profile_ended "$NAME-b$i"
		rm -f "$FS_TMP/release" "$FS_TMP"/args.*
	done
	# the newline stayed inside its escaped log line
	! grep -q '^FAKE LINE' "$FS_RUN/hook.log" || false
	grep -q 'off\\x0aFAKE LINE' "$FS_RUN/hook.log"
}

@test "event=offcpu with the real profiler: a sleeping container's graph is its blocked time" {
	"$FS_SIDECAR" run --help 2>&1 | grep -q -- --event || skip "run --event is not in this build"
	fs_config_set '.sidecar_path = $s' --arg s "$FS_SIDECAR"
	fs_make_bundle "$FS_TMP/b" --annotate flamesidecar.io/enable=true --annotate flamesidecar.io/profile=2s \
		--annotate flamesidecar.io/delay=0s --annotate flamesidecar.io/event=offcpu -- sleep 1000
	fs_runc_run "$NAME" "$FS_TMP/b"
	wait_profile "$NAME" 30
	folded=$(ls "$FS_TMP/profiles/$NAME"/*.folded)
	cat "$folded"
	# every microsecond of the one thread under its sleep: [sleeping] as the
	# leaf, the 2 s window as the total (the poller's weight), not 99 Hz samples
	total=$(awk '{ n += $NF } END { print n + 0 }' "$folded")
	asleep=$(awk '/hrtimer_nanosleep_\[k\];\[sleeping\] [0-9]+$/ { n += $NF } END { print n + 0 }' "$folded")
	[ "$total" -ge 1800000 ] && [ "$total" -le 2300000 ]
	[ "$asleep" -ge $((total * 95 / 100)) ]
	grep -q "(event offcpu)" "$FS_RUN/hook.log"
}

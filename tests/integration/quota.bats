#!/usr/bin/env bats
# Quotas and retention of triggered profiles (issue 19 item 6): a container
# restarted in a loop (a new id each time, one name) with
# flamesidecar.io/profile=1s stays under its quota, counted by the name;
# the oldest go first, or the new one is refused, as configured; a name
# holds at most its share of the concurrent slots; gc applies the age.
# A stand-in profiler writes the three files at once and exits (or, for
# the slot case, waits until released).

load ../lib/containers

setup() {
	fs_test_setup fsq
	FAKE="$FS_TMP/fake-sidecar"
	cat >"$FAKE" <<SH
#!/bin/sh
# Stand-in for flamesidecar run: 1000 bytes in each file it is asked for.
while [ \$# -gt 0 ]; do
	case "\$1" in
	-o|--folded|--pprof) head -c 1000 /dev/zero >"\$2"; shift ;;
	esac
	shift
done
i=0
while [ -e "$FS_TMP/hold" ] && [ ! -e "$FS_TMP/release" ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i+1)); done
SH
	chmod +x "$FAKE"
	fs_config_set '.sidecar_path = $f | .max_profiles_per_container = 2' --arg f "$FAKE"
}

teardown() {
	touch "$FS_TMP/release" 2>/dev/null || true
	fs_cleanup
}

# start ID NAME: a container with the engine name NAME, profile=1s.
start() {
	fs_make_bundle "$FS_TMP/b-$1" --annotate flamesidecar.io/enable=true \
		--annotate flamesidecar.io/profile=1s --annotate "nerdctl/name=$2" -- sleep 1000
	fs_runc_run "$1" "$FS_TMP/b-$1"
}

# The SVGs kept for engine name $1.
svgs_of() {
	local d
	for d in "$FS_TMP/profiles"/*/; do
		[ "$(cat "$d/.key" 2>/dev/null)" = "claim name nerdctl/$1" ] || continue
		ls "$d"*.svg 2>/dev/null
	done
}

# A restart loop of $1 starts of name web: each run deleted before the next.
restart_loop() {
	local i prev=
	for i in $(seq 1 "$1"); do
		[ -z "$prev" ] || runc delete -f "$prev"
		start "$NAME-$i" web
		fs_wait_for 10 test ! -e "$FS_RUN/profiling/$NAME-$i.json"
		# distinct mtimes: oldest first is then well defined
		touch -d "@$((1700000000 + i))" "$FS_TMP/profiles/$NAME-$i"/*.svg 2>/dev/null || true
		prev=$NAME-$i
	done
}

@test "a restart loop with profile=1s keeps the newest 2 of its name (remove_oldest)" {
	restart_loop 5
	run svgs_of web
	echo "$output"
	[ "${#lines[@]}" = 2 ]
	# the two newest restarts, by id
	[[ "${lines[*]}" == *"/$NAME-4/"* && "${lines[*]}" == *"/$NAME-5/"* ]]
	# the removed ones' directories went with them, and the log says so
	[ ! -e "$FS_TMP/profiles/$NAME-1" ] && [ ! -e "$FS_TMP/profiles/$NAME-3" ]
	[ "$(grep -c "profile quota: removing .*container quota, claim name nerdctl/web" "$FS_RUN/hook.log")" = 3 ]
	# every start was registered and profiled
	[ "$(grep -c "profiling: 1s" "$FS_RUN/hook.log")" = 5 ]
	# another name is not charged for web's profiles
	start "$NAME-x" other
	fs_wait_for 10 test ! -e "$FS_RUN/profiling/$NAME-x.json"
	run svgs_of other
	[ "${#lines[@]}" = 1 ]
	run svgs_of web
	[ "${#lines[@]}" = 2 ]
}

@test "profile_quota_full=refuse: the third is refused with a log line, the first two kept" {
	fs_config_set '.profile_quota_full = "refuse"'
	restart_loop 4
	run svgs_of web
	echo "$output"
	[ "${#lines[@]}" = 2 ]
	[[ "${lines[*]}" == *"/$NAME-1/"* && "${lines[*]}" == *"/$NAME-2/"* ]]
	[ "$(grep -c "profile trigger refused: container quota (claim name nerdctl/web" "$FS_RUN/hook.log")" = 2 ]
	! grep -q "profile quota: removing" "$FS_RUN/hook.log" || false
}

@test "the total quota in MiB counts every name" {
	fs_config_set '.max_profiles_per_container = 100 | .max_profile_mib_total = 1'
	# 3000 bytes each: the 1 MiB total holds ~349; make it hold 2 by
	# pre-filling with a 1 MiB - 5000 bytes old profile of no name: a and b
	# fit below the limit, c does not until the old one goes.
	mkdir -p "$FS_TMP/profiles/old"
	head -c $((1048576 - 5000)) /dev/zero >"$FS_TMP/profiles/old/20200101T000000Z.svg"
	touch -d "@$(($(date +%s) - 60))" "$FS_TMP/profiles/old/20200101T000000Z.svg"
	start "$NAME-a" a
	fs_wait_for 10 test ! -e "$FS_RUN/profiling/$NAME-a.json"
	start "$NAME-b" b
	fs_wait_for 10 test ! -e "$FS_RUN/profiling/$NAME-b.json"
	start "$NAME-c" c
	fs_wait_for 10 test ! -e "$FS_RUN/profiling/$NAME-c.json"
	# the old one went for the third (total quota), the three new ones stay
	[ ! -e "$FS_TMP/profiles/old" ]
	grep -q "profile quota: removing $FS_TMP/profiles/old/20200101T000000Z (total quota, id old)" "$FS_RUN/hook.log"
	[ "$(ls "$FS_TMP"/profiles/*/*.svg | wc -l)" = 3 ]
}

@test "one name holds at most max_concurrent_profiles_per_container slots; another name still gets one" {
	touch "$FS_TMP/hold"
	start "$NAME-a" web
	fs_wait_for 10 test -e "$FS_RUN/profiling/$NAME-a.json"
	start "$NAME-b" web
	grep -q "$NAME-b: profile trigger refused: claim name nerdctl/web already has 1 profiles running (max_concurrent_profiles_per_container 1)" "$FS_RUN/hook.log"
	[ ! -e "$FS_RUN/profiling/$NAME-b.json" ]
	start "$NAME-c" other
	fs_wait_for 10 test -e "$FS_RUN/profiling/$NAME-c.json"
	# once web's profile ends, web may profile again
	touch "$FS_TMP/release"
	fs_wait_for 10 test ! -e "$FS_RUN/profiling/$NAME-a.json"
	rm -f "$FS_TMP/hold"
	start "$NAME-d" web
	fs_wait_for 10 test ! -e "$FS_RUN/profiling/$NAME-d.json"
	[ -n "$(ls "$FS_TMP/profiles/$NAME-d/"*.svg)" ]
}

@test "gc removes profiles past profile_retention_seconds and keeps the others" {
	fs_config_set '.profile_retention_seconds = 3600'
	start "$NAME-a" web
	fs_wait_for 10 test ! -e "$FS_RUN/profiling/$NAME-a.json"
	mkdir -p "$FS_TMP/profiles/ancient"
	echo x >"$FS_TMP/profiles/ancient/20200101T000000Z.svg"
	echo x >"$FS_TMP/profiles/ancient/20200101T000000Z.log"
	touch -d @1600000000 "$FS_TMP/profiles/ancient"/*
	run "$FS_SIDECAR" --config "$FS_CONFIG" gc --dry-run
	echo "$output"
	[[ "$output" == *"would remove profile $FS_TMP/profiles/ancient/20200101T000000Z (age)"* ]]
	[ -e "$FS_TMP/profiles/ancient" ]
	run "$FS_SIDECAR" --config "$FS_CONFIG" gc
	echo "$output"
	[[ "$output" == *"1 of 2 triggered profiles removed"* ]]
	[ ! -e "$FS_TMP/profiles/ancient" ]
	[ -n "$(ls "$FS_TMP/profiles/$NAME-a/"*.svg)" ]
}

@test "list --json says the name came from an annotation (a claim anyone with annotations can make)" {
	start "$NAME-a" web
	fs_make_bundle "$FS_TMP/b-plain" --annotate flamesidecar.io/enable=true -- sleep 1000
	fs_runc_run "$NAME-p" "$FS_TMP/b-plain"
	run "$FS_SIDECAR" --config "$FS_CONFIG" list --json
	echo "$output"
	[ "$(jq -r --arg id "$NAME-a" '.[] | select(.id == $id) | "\(.name) \(.name_source)"' <<<"$output")" = "web annotation" ]
	[ "$(jq -r --arg id "$NAME-p" '.[] | select(.id == $id) | .name_source' <<<"$output")" = null ]
}

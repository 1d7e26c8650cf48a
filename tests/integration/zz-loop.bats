#!/usr/bin/env bats
# The JIT map covers the whole window: a JVM whose compiled code is
# recompiled, deoptimised, unloaded and whose code cache addresses are reused
# during the window (tests/java/flametest/Churn.java) still has its Java
# frames named; the agent's timed session is stopped and its log removed
# when the window ends.

load ../lib/containers


needs_jvm() {
	fs_needs_jvm "$JAVA17" Churn
	[ -n "${CHURN:-}" ] || skip "the Churn container did not start"
}

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	command -v runc >/dev/null && [ -x "$JAVA17" ] && [ -d "$FS_BUILD/java/flametest" ] || return 0
	fs_setup
	export FS_TMP FS_RUN FS_CONFIG FLAMESIDECAR_CONFIG
	local name="fsjit-$$-churn" dir
	dir="$FS_TMP/$name"
	fs_make_bundle "$dir" --annotate flamesidecar.io/enable=true -- \
		"$JAVA17" -XX:+PreserveFramePointer -XX:ReservedCodeCacheSize=8m -Xlog:disable \
		-cp /opt/fsjava flametest.Churn --rounds-per-gc 2 --round-ms 120
	jq --arg s "$FS_BUILD/java" '
		.mounts += [{destination: "/opt/fsjava", type: "bind", source: $s, options: ["rbind", "ro"]}]
	' "$dir/config.json" >"$dir/config.json.new" && mv "$dir/config.json.new" "$dir/config.json"
	fs_runc_run "$name" "$dir"
	if fs_wait_for 60 grep -q READY "$dir/out.log" &&
		fs_wait_for 10 test -f "$FS_RUN/containers/$name.json"; then
		export CHURN=$name
	else
		cat "$dir/out.log" >&2
	fi
}

teardown_file() {
	fs_cleanup
}

# java_frames FOLDED: "NAMED TOTAL" over the frames of Java code: the JIT
# frames (named ones carry a Java name, unnamed ones are [unknown] between
# or under named Java frames, above the JVM's own C++ frames).
java_frames() {
	awk '
	{
		n = split($0, f, ";"); c = f[n]; sub(/.* /, "", c); sub(/ [0-9]+$/, "", f[n])
		for (i = 2; i <= n; i++) {
			if (f[i] ~ /^(flametest|java|jdk|sun)\./) { named += c; total += c }
			else if (f[i] == "[unknown]") { total += c }
		}
	}
	END { print named + 0, total + 0 }' "$1"
}

java_frames_under() {
	awk '
	{
		n = split($0, f, ";"); c = f[n]; sub(/.* /, "", c); sub(/ [0-9]+$/, "", f[n])
		seen = 0
		for (i = 2; i <= n; i++) {
			if (f[i] ~ /^(flametest|java|jdk|sun)\./) { named += c; total += c; seen = 1 }
			else if (f[i] == "[unknown]" && seen) { total += c }
		}
	}
	END { print named + 0, total + 0 }' "$1"
}

@test "loop vms" {
	needs_jvm
	cd "$BATS_TEST_TMPDIR"
	for i in 1 2 3 4 5 6; do
	"$FS_SIDECAR" run "$CHURN" -d 5s -F 199 --map-mode vmstructs -o churn-vms.svg > out 2>&1
	read -r named total < <(java_frames_under churn-vms.folded)
	echo "# vmstructs map: Java frames named: $named of $total" >&3
	grep -E "unwind|hotspot|procmem|jit" out | sed 's/^/#   /' >&3
	done
}

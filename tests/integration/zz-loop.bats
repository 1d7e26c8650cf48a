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

# churn_wrong FOLDED: "MIXED WRONG TOTAL" over the Java frames: names that
# are not methods of their class (ChurnTask has work, churnMix and
# churnShape; a reflection accessor has invoke: any other name is a class
# and a method of two classes, as a cache of freed metadata gives), and
# calls into or out of ChurnTask that its source cannot make (ChurnTask is
# called only through reflection and calls only its own methods and
# Integer's or String's): a frame named by a method that did not own its
# code at the sample's time. TOTAL: the weight of named Java frames.
churn_wrong() {
	awk '
	function java(x) { return x ~ /^(flametest|java|jdk|sun)\./ }
	{
		n = split($0, f, ";"); c = f[n]; sub(/.* /, "", c); sub(/ [0-9]+$/, "", f[n])
		for (i = 2; i <= n; i++) {
			g = f[i]; sub(/_\[[^]]*\]$/, "", g); h[i] = g
			if (java(g)) total += c
			if ((g ~ /^flametest\.ChurnTask\./ && g !~ /\.(work|churnMix|churnShape|<init>|<clinit>)$/) ||
			    (g ~ /^jdk\.internal\.reflect\.GeneratedMethodAccessor[0-9]+\./ && g !~ /\.(invoke|<init>)$/))
				mixed += c
		}
		for (i = 3; i <= n; i++) {
			a = h[i - 1]; b = h[i]
			if (!java(a) || !java(b)) continue
			if ((b ~ /^flametest\.ChurnTask\./ && a !~ /^(flametest\.ChurnTask|jdk\.internal\.reflect|java\.lang\.invoke)\./) ||
			    (a ~ /^flametest\.ChurnTask\./ && b !~ /^(flametest\.ChurnTask|java\.lang\.(Integer|String|Object))\./))
				wrong += c
		}
	}
	END { print mixed + 0, wrong + 0, total + 0 }' "$1"
}

# No frame under a name a cache of freed metadata made, and at most 0.3%
# of the Java frames' weight in calls ChurnTask's source cannot make
# (before names were checked against the JVM's memory and taken at the
# sample's time: 0.1-2% and up to 15% misnamed; after: at most 0.1%).
assert_churn_true() {
	local mixed wrong total
	read -r mixed wrong total < <(churn_wrong "$1")
	echo "# $2: misnamed frames $mixed, impossible calls $wrong, of $total" >&3
	[ "$total" -gt 0 ]
	[ "$mixed" = 0 ]
	[ $((wrong * 1000)) -le $((total * 3)) ]
}

@test "dbg" {
	needs_jvm
	cd "$BATS_TEST_TMPDIR"
	FS_DBG_UNK=1 "$FS_SIDECAR" run "$CHURN" -d 4s -F 199 -o churn.svg > out 2>/tmp/unk.err
	cp churn.folded /tmp/dbg.folded; cp out /tmp/dbg.out
}

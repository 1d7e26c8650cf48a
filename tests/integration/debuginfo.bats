#!/usr/bin/env bats
# Names of native frames from separate debug info (sidecar/debuginfo/,
# docs/debuginfo.md), on a real runc container holding a JVM and a native
# program that spends its time in glibc (tests/fixtures/debuginfo/sortloop.c).
# Oracles: Debian's libc6-dbg (the names we show for glibc's internal
# functions are in its .symtab) and a real `debuginfod -F DIR` serving a copy
# of it on the loopback of a private network namespace.
# One container for the first three cases: its own /usr/lib/debug is hidden
# (an empty tmpfs), so names come from the host's, or from debuginfod when
# the sidecar runs in a mount namespace where the host's is hidden too.

load ../lib/containers

LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)

libc_build_id() {
	readelf -n "$LIBC" | awk '/Build ID:/ { print $3; exit }'
}

# make_minidebuginfo IN OUT: OUT is IN stripped of every symbol, with the
# functions its .dynsym lacks kept in an xz-compressed .gnu_debugdata, the
# way Fedora builds MiniDebugInfo (GDB manual, "MiniDebugInfo").
make_minidebuginfo() {
	local in=$1 out=$2 t
	t=$(mktemp -d)
	nm -D "$in" --format=posix --defined-only | awk '{ print $1 }' | sort >"$t/dyn"
	nm "$in" --format=posix --defined-only | awk '$2 ~ /^[Tt]$/ { print $1 }' | sort >"$t/func"
	comm -13 "$t/dyn" "$t/func" >"$t/keep"
	objcopy -S --remove-section .comment --keep-symbols="$t/keep" "$in" "$t/mini"
	xz "$t/mini"
	cp "$in" "$out"
	strip --strip-all -R .comment "$out"
	objcopy --add-section .gnu_debugdata="$t/mini.xz" "$out"
	rm -rf "$t"
}

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	command -v runc >/dev/null && command -v jq >/dev/null || return 0
	[ -f "$FS_BUILD/java/flametest/Workload.class" ] || return 0
	fs_setup
	export FS_TMP FS_RUN FS_CONFIG FLAMESIDECAR_CONFIG
	mkdir -p "$FS_TMP/bin"
	cc -O2 -fno-omit-frame-pointer -o "$FS_TMP/bin/sortloop" \
		"$FS_TOP/tests/fixtures/debuginfo/sortloop.c"
	cc -O2 -fno-omit-frame-pointer -DNAME='"sortmini"' -o "$FS_TMP/sortmini.full" \
		"$FS_TOP/tests/fixtures/debuginfo/sortloop.c"
	make_minidebuginfo "$FS_TMP/sortmini.full" "$FS_TMP/bin/sortmini" || return 1
	export DBG_CTR="dbg-$$"
	fs_start_jvm "$DBG_CTR" --mount "$FS_TMP/bin:/opt/fsbin" --hide /usr/lib/debug \
		--wrap '/opt/fsbin/sortloop & /opt/fsbin/sortmini & exec "$@"' -- --threads 1
	fs_wait_for 30 test "$(grep -c READY-NATIVE "$FS_TMP/$DBG_CTR/out.log")" -ge 2
	export DBG_PID=$PID
}

teardown_file() {
	[ -n "${FS_TMP:-}" ] || return 0
	fs_stop_containers runc "dbg-$$" "dbg-hostile-$$"
	fs_cleanup
}

setup() {
	fs_require_root
	fs_require_cmd runc jq readelf
	[ -n "${DBG_CTR:-}" ] || skip "the container did not start (Java workloads built? make agent)"
	OUT="$BATS_TEST_TMPDIR"
	DEBUG_FILE=/usr/lib/debug/.build-id/$(libc_build_id | cut -c1-2)/$(libc_build_id | cut -c3-).debug
}

# Frames of folded file $1 that are a process's libc label.
libc_labels() {
	grep -o '\[libc\.so\.6\]' "$1" | wc -l
}

# The sortloop process's stacks must show glibc's internal functions (local
# symbols: only separate debug info has them), and every glibc frame of its
# stacks must be a function of libc6-dbg's .symtab (the oracle).
native_named() {
	grep '^sortloop;' "$1" >"$OUT/native.folded" || true
	[ -s "$OUT/native.folded" ]
	sort -t' ' -k2 -nr "$OUT/native.folded" | head -5
	grep -q '__libc_start_call_main;main' "$OUT/native.folded"
	grep -q ';msort_with_tmp' "$OUT/native.folded"
	readelf -sW "$DEBUG_FILE" 2>/dev/null | awk '$4 == "FUNC" || $4 == "IFUNC" { print $8 }' |
		sed 's/@.*//' | sort -u >"$OUT/dbg.names"
	# PLT stubs (of the program or of libc) are named by their section
	# (.plt, .plt.sec, .plt.got): no symbol table covers them
	sed 's/ [0-9]*$//' "$OUT/native.folded" | tr ';' '\n' | sort -u |
		grep -vxE 'sortloop|main|cmp|_start|.*_\[k\]|\.plt(\.sec|\.got)?' >"$OUT/libc.names"
	echo "glibc frames: $(tr '\n' ' ' <"$OUT/libc.names")"
	[ -s "$OUT/libc.names" ]
	! grep -vxFf "$OUT/dbg.names" "$OUT/libc.names" || false
}

@test "debuginfo: libc6-dbg on the host names glibc in a JVM's and a native program's stacks" {
	[ -f "$DEBUG_FILE" ] || skip "libc6-dbg is not installed (no $DEBUG_FILE)"
	cd "$OUT"
	run env -u DEBUGINFOD_URLS "$FS_SIDECAR" run "$DBG_CTR" -d 3s -F 199 -o h.svg
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"debuginfo  "*" host build-id"* ]]
	[[ "$output" == *"debuginfod off"* ]]
	grep -q '^java;' h.folded
	grep -F '[libc.so.6]' h.folded | head -5
	[ "$(libc_labels h.folded)" -eq 0 ]
	native_named h.folded
	# the stripped program is named from its MiniDebugInfo; the oracle is
	# the unstripped program's own .symtab
	[[ "$output" == *" MiniDebugInfo"* ]]
	grep '^sortmini;' h.folded | sort -t' ' -k2 -nr | head -3
	grep -q '^sortmini;.*main' h.folded
	grep -q '^sortmini;.*cmp' h.folded
	! grep -q '\[sortmini\]' h.folded || false
	nm "$FS_TMP/sortmini.full" | grep -qw cmp
}

# run_hidden CTR SVG ENV...: `flamesidecar run CTR` in a private mount
# namespace whose /usr/lib/debug is an empty tmpfs and a private network
# namespace (loopback only), with the environment ENV. $DBG_SERVE, when set,
# is a server started there first (and killed by its pid after the run),
# $DBG_WAIT a command that says when it is ready.
run_hidden() {
	local ctr=$1 svg=$2
	shift 2
	run unshare -m -n --propagation private sh -c '
		ip link set lo up 2>/dev/null || true
		mount -t tmpfs -o size=1m tmpfs /usr/lib/debug || exit 97
		srv=""
		if [ -n "${DBG_SERVE:-}" ]; then
			sh -c "$DBG_SERVE" &
			srv=$!
			sh -c "$DBG_WAIT" || { kill $srv; wait $srv; exit 98; }
		fi
		env "$@"
		rc=$?
		[ -z "$srv" ] || { kill $srv; wait $srv; }
		exit $rc' sh "$@" "$FS_SIDECAR" run "$ctr" -d 3s -F 199 -o "$svg"
}

@test "debuginfo: without DEBUGINFOD_URLS nothing is downloaded and glibc stays [libc.so.6]" {
	fs_require_cmd unshare strace
	cd "$OUT"
	mkdir cache
	DBG_SERVE="" run_hidden "$DBG_CTR" n.svg -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$OUT/cache" \
		strace -f -qq -e trace=connect,execve -o "$OUT/strace.log"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"debuginfo  "*"debuginfod off"* ]]
	[[ "$output" != *" host build-id"* && "$output" != *"1 debuginfod"* ]]
	# the fallback this feature replaces: so the first case can fail
	[ "$(libc_labels n.folded)" -gt 0 ]
	[ -z "$(ls -A cache)" ]
	! grep -q 'flamesidecar-debuginfod' strace.log || false
	! grep -E 'connect\(.*(AF_INET|AF_INET6)' strace.log || false
}

@test "debuginfod: debug files served only by a local debuginfod name glibc; its cache is ours" {
	fs_require_cmd unshare debuginfod curl
	[ -f "$DEBUG_FILE" ] || skip "libc6-dbg is not installed (no $DEBUG_FILE)"
	[ -x "$FS_BUILD/flamesidecar-debuginfod" ] || skip "no $FS_BUILD/flamesidecar-debuginfod"
	cd "$OUT"
	mkdir serve cache
	cp "$DEBUG_FILE" serve/libc.debug
	local port=$((20000 + RANDOM % 20000)) id
	id=$(libc_build_id)
	# debuginfod and the sidecar share a fresh network namespace: the
	# server is reachable on its loopback only.
	export DBG_SERVE="exec debuginfod -F -p $port -d $OUT/db.sqlite $OUT/serve >$OUT/debuginfod.log 2>&1"
	export DBG_WAIT="for i in \$(seq 300); do curl -sf -o /dev/null http://127.0.0.1:$port/buildid/$id/debuginfo && break; sleep 0.1; done; curl -sf -o /dev/null http://127.0.0.1:$port/buildid/$id/debuginfo"
	run_hidden "$DBG_CTR" d.svg DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$OUT/cache"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"debuginfo  "*" debuginfod"*"debuginfod asked"* ]]
	[[ "$output" != *" host build-id"* ]]
	[ "$(libc_labels d.folded)" -eq 0 ]
	native_named d.folded
	# libdebuginfod kept the file in the cache the test chose
	cmp "cache/$id/debuginfo" "$DEBUG_FILE"
}

# build_id FILE: its GNU build-id in hex.
build_id() {
	readelf -n "$1" 2>/dev/null | awk '/Build ID:/ { print $3; exit }'
}

# plant DIR FILE: the path in DIR where FILE's debug file is looked up.
plant() {
	local id
	id=$(build_id "$2")
	mkdir -p "$1/.build-id/${id:0:2}"
	echo "$1/.build-id/${id:0:2}/${id:2}.debug"
}

@test "debuginfo: planted debug files and a garbage debuginfod reply are refused, names fall back" {
	fs_require_cmd unshare python3 curl
	[ -f "$DEBUG_FILE" ] || skip "libc6-dbg is not installed (no $DEBUG_FILE)"
	cd "$OUT"
	local dbg="$OUT/planted" jdk jvm port id
	jdk=$(dirname "$(dirname "$(readlink -f "$JAVA17")")")
	jvm="$jdk/lib/server/libjvm.so"
	[ -f "$jvm" ] || skip "no libjvm.so under $jdk"
	mkdir -p "$dbg"
	# Files every sample of this container maps (samples decide which
	# files are looked up): garbage where glibc's debug file goes,
	head -c 65536 /dev/urandom >"$(plant "$dbg" "$LIBC")"
	# a symlink out of the container's root for libjvm's,
	ln -s ../../../../../../../../etc/shadow "$(plant "$dbg" "$jvm")"
	# a real debug file of another build for one native program's,
	cp "$DEBUG_FILE" "$(plant "$dbg" "$FS_TMP/bin/sortmini")"
	# a huge (sparse) file for the other's.
	truncate -s 2G "$(plant "$dbg" "$FS_TMP/bin/sortloop")"
	local name="dbg-hostile-$$"
	fs_start_jvm "$name" --mount "$dbg:/usr/lib/debug" --mount "$FS_TMP/bin:/opt/fsbin" \
		--wrap '/opt/fsbin/sortloop & /opt/fsbin/sortmini & exec "$@"' -- --threads 1
	fs_wait_for 30 test "$(grep -c READY-NATIVE "$FS_TMP/$name/out.log")" -ge 2
	# a debuginfod that answers garbage for glibc's build-id
	id=$(libc_build_id)
	mkdir -p "www/buildid/$id" cache
	head -c 4096 /dev/urandom >"www/buildid/$id/debuginfo"
	port=$((20000 + RANDOM % 20000))
	export DBG_SERVE="exec python3 -m http.server --bind 127.0.0.1 $port --directory $OUT/www >$OUT/http.log 2>&1"
	export DBG_WAIT="for i in \$(seq 100); do curl -sf -o /dev/null http://127.0.0.1:$port/buildid/$id/debuginfo && exit 0; sleep 0.1; done; exit 1"
	run_hidden "$name" x.svg DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$OUT/cache"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"for [libc.so.6] refused: "*"not an ELF"* ]]
	[[ "$output" == *"refused: refusing /usr/lib/debug/.build-id/"*"symbolic link"* ]]
	[[ "$output" == *"[sortmini] refused: build-id "*" is not the file's "* ]]
	[[ "$output" == *"refused: refusing /usr/lib/debug/.build-id/"*"over the"* ]]
	[[ "$output" == *"debug file from debuginfod for [libc.so.6] refused"* ]]
	[[ "$output" == *"debuginfo  "*" 1 MiniDebugInfo;"*" refused"* ]]
	[[ "$output" != *"build-id,"* && "$output" != *"1 debuginfod"* ]]
	grep -q '^java;' x.folded
	[ "$(libc_labels x.folded)" -gt 0 ]
}

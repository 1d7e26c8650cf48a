#!/usr/bin/env bats
# cli.bats - the verbs' command lines, from their option tables
# (sidecar/opt.h): --help, the man page's option lists, what a bad command
# line gets (exit 2 and a line naming the option), and the exit codes of a
# container that goes away.

load ../lib/containers

VERBS="run top map list gc collapse render diff convert"

teardown() {
	fs_cleanup
}

# usage_error ARGS...: exit 2, a line saying what is wrong, the --help hint.
usage_error() {
	run "$FS_SIDECAR" "$@"
	echo "flamesidecar $*: status $status: $output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"Try 'flamesidecar $1 --help'."* ]]
}

@test "every verb's --help: usage line, its options, -h, examples; exit 0" {
	for v in $VERBS; do
		run "$FS_SIDECAR" "$v" --help
		[ "$status" -eq 0 ] || { echo "$v --help: $status"; false; }
		[[ "$output" == "Usage: flamesidecar $v "* ]] || { echo "$v: $output"; false; }
		[[ "$output" == *"  -h, --help "* ]]
		[[ "$output" == *"Examples:"* || "$output" == *"EXAMPLES"* ]]
		# every option of the man page's list is in the help, and back
		man=$("$FS_SIDECAR" --print-man-options "$v" | sed -n '/^\.B/s/.*\\-\\-\([a-z][a-z\\-]*\).*/\1/p' |
			sed 's/\\-/-/g' | sort -u)
		help=$(printf '%s\n' "$output" | sed -nE 's/^ {2,6}(-[A-Za-z], )?--([a-z][a-z-]+).*/\2/p' |
			grep -vx help | sort -u)
		[ -n "$man" ]
		[ "$man" = "$help" ] || { echo "$v: man [$man] help [$help]"; false; }
	done
	# run and top share the session group: the same lines, once each
	for o in frequency pid event no-map map-mode user-only kernel-filter pod; do
		r=$("$FS_SIDECAR" run --help | grep -cE -- "^ {2,6}(-[A-Za-z], )?--$o ")
		t=$("$FS_SIDECAR" top --help | grep -cE -- "^ {2,6}(-[A-Za-z], )?--$o ")
		[ "$r" -eq 1 ] && [ "$t" -eq 1 ] || { echo "--$o: run $r, top $t"; false; }
	done
}

@test "the man page's option lists are the verbs' tables; a drifted page fails the check" {
	for v in $VERBS; do
		grep -q "^\.\\\\\" BEGIN OPTIONS $v:" "$FS_TOP/docs/man/flamesidecar.1" ||
			{ echo "no generated option list for $v"; false; }
	done
	run "$FS_TOP/docs/man/options.sh" --check "$FS_SIDECAR" "$FS_TOP/docs/man/flamesidecar.1"
	echo "$output"
	[ "$status" -eq 0 ]
	# The check can fail: one word changed inside a generated list.
	page="$BATS_TEST_TMPDIR/flamesidecar.1"
	sed 's/^Length of the window:/Length of the time window:/' "$FS_TOP/docs/man/flamesidecar.1" >"$page"
	! cmp -s "$page" "$FS_TOP/docs/man/flamesidecar.1" || false
	run "$FS_TOP/docs/man/options.sh" --check "$FS_SIDECAR" "$page"
	[ "$status" -eq 1 ]
	[[ "$output" == *"Length of the time window"* ]]
	# and the rewrite puts it back
	"$FS_TOP/docs/man/options.sh" "$FS_SIDECAR" "$page"
	cmp "$page" "$FS_TOP/docs/man/flamesidecar.1"
}

@test "a value the table refuses: exit 2 and a line naming the option and the value" {
	usage_error run x -d forever
	[[ "$output" == *"--duration takes a time from 1ms to 24h"*"not 'forever'"* ]]
	usage_error run x --duration 25h
	[[ "$output" == *"--duration"*"not '25h'"* ]]
	usage_error top x -i 5ms
	[[ "$output" == *"--interval takes a time from 10ms to 24h"* ]]
	usage_error run x -F 0
	[[ "$output" == *"--frequency takes a number from 1 to 10000, not '0'"* ]]
	usage_error top x --pid 12ab
	[[ "$output" == *"--pid takes a pid"*"not '12ab'"* ]]
	usage_error run x --map-mode magic
	[[ "$output" == *"--map-mode takes agent, jcmd or vmstructs; not 'magic'"* ]]
	usage_error top x --event gpu
	[[ "$output" == *"--event takes cpu, offcpu or wall; not 'gpu'"* ]]
	usage_error run x --unwind dwarf
	[[ "$output" == *"--unwind takes auto, fp or hotspot; not 'dwarf'"* ]]
	usage_error run x --stack-copy 100
	[[ "$output" == *"--stack-copy takes a number from 512 to 61440"* ]]
	usage_error map x --timeout -5
	[[ "$output" == *"--timeout takes a number from 1 to 600000, not '-5'"* ]]
	usage_error render --minwidth wide
	[[ "$output" == *"--minwidth takes pixels"*"not 'wide'"* ]]
	usage_error collapse --max-stack-table 0
	[[ "$output" == *"--max-stack-table takes a number from"* ]]
	usage_error run x --exact-process 12
	[[ "$output" == *"--exact-process takes PID:START"* ]]
}

@test "an unknown option, a missing value, a value on a flag, an ambiguous prefix: exit 2 naming it" {
	usage_error run x --bogus
	[[ "$output" == *"unknown option '--bogus'"* ]]
	usage_error top x -Z
	[[ "$output" == *"unknown option '-Z'"* ]]
	usage_error run x -d
	[[ "$output" == *"--duration needs a value (TIME)"* ]]
	usage_error collapse -e
	[[ "$output" == *"--event-filter needs a value"* ]]
	usage_error run x --quiet=yes
	[[ "$output" == *"--quiet takes no value"* ]]
	usage_error run x --map
	[[ "$output" == *"ambiguous option '--map'"* ]]
	# getopt's own messages are not printed as well
	[[ "$output" != *"unrecognized"* && "$output" != *"invalid option"* ]]
}

@test "conflicting or incomplete options: exit 2 naming them" {
	usage_error run x -o - --pprof -
	[[ "$output" == *"only one output can be standard output"* ]]
	usage_error convert --pprof - --speedscope - /dev/null
	[[ "$output" == *"only one output can be standard output"* ]]
	usage_error map x --continuous --mode jcmd
	[[ "$output" == *"--continuous needs the agent, not --mode jcmd"* ]]
	usage_error list --profiles --unregistered
	[[ "$output" == *"--profiles and --unregistered"* ]]
	usage_error run x --namespace shop
	[[ "$output" == *"--namespace without --pod: --namespace and --container need --pod NAME"* ]]
	usage_error top --container app x
	[[ "$output" == *"--container without --pod"* ]]
	usage_error run x --pod checkout
	[[ "$output" == *"a container id and --pod"* ]]
	usage_error top
	[[ "$output" == *"expected one container id"* ]]
}

@test "no function over 80 lines in the verb layer" {
	cd "$FS_TOP"
	long=$(awk '
		FNR == 1 { inside = 0 }
		/^\{$/ { inside = 1; start = FNR; name = prev }
		/^\}$/ && inside { if (FNR - start > 80) print FILENAME ": " name " (" FNR - start " lines)"; inside = 0 }
		{ prev = $0 }
	' sidecar/cmd_*.c sidecar/cli.c sidecar/common.c sidecar/main.c sidecar/opt.c sidecar/run_summary.c \
		sidecar/*_cli.c sidecar/outfile.c sidecar/profiles.c)
	[ -z "$long" ] || { echo "$long"; false; }
}

# A busy container without a JVM: quick to start, stopped by a test.
start_busy() {
	fs_make_bundle "$FS_TMP/$1" --annotate flamesidecar.io/enable=true -- sh -c 'while :; do :; done'
	echo "runc $1" >>"$FS_TMP/containers"
	runc run -d --bundle "$FS_TMP/$1" "$1" >"$FS_TMP/$1.log" 2>&1 </dev/null
	fs_wait_for 10 sh -c "'$FS_SIDECAR' list | grep -F '$1' | grep -q alive"
}

@test "a container killed during the window: graph and exit 0; gone before it: exit 3 for run, top and map" {
	fs_require_root
	fs_require_cmd runc jq
	fs_setup
	local name="fscli-$$"
	start_busy "$name"
	cd "$BATS_TEST_TMPDIR"
	"$FS_SIDECAR" run "$name" -d 20s -o busy.svg >run.out 2>run.err &
	local spid=$!
	# the window is open once the sidecar says it records; let it sample
	fs_wait_for 10 grep -q "recording" run.err
	runc kill "$name" KILL
	fs_wait_stopped runc "$name" 10
	# gone: runc delete runs the poststop hook, which drops the entry
	runc delete -f "$name"
	# the window would last its 20 s; Ctrl-C ends it, as a user would
	kill -INT "$spid"
	local rc=0
	wait "$spid" || rc=$?
	cat run.err run.out
	[ "$rc" -eq 0 ]
	grep -q '^svg ' run.out
	[ -s busy.svg ]
	for v in "run $name -d 1s" "top $name --once -d 100ms" "map $name"; do
		run "$FS_SIDECAR" $v
		echo "$v: $status: $output"
		[ "$status" -eq 3 ]
		[[ "$output" == *"$name"* ]]
	done
}

@test "top: a container that goes away ends the live view with exit 3, not an endless table" {
	fs_require_root
	fs_require_cmd runc jq
	fs_setup
	local name="fscli-top-$$"
	start_busy "$name"
	cd "$BATS_TEST_TMPDIR"
	"$FS_SIDECAR" top "$name" -i 200ms >top.out 2>top.err </dev/null &
	local tpid=$!
	fs_wait_for 10 grep -q "SELF%" top.out
	runc kill "$name" KILL
	fs_wait_stopped runc "$name" 10
	runc delete -f "$name"
	local ended=0 rc=0
	fs_wait_for 10 sh -c "! kill -0 $tpid" && ended=1
	[ "$ended" = 1 ] || kill "$tpid"
	wait "$tpid" || rc=$?
	cat top.err
	[ "$ended" = 1 ]
	[ "$rc" -eq 3 ]
	grep -q "flamesidecar top: container $name is gone" top.err
}

#!/usr/bin/env bats
# tests/oracle/jfr_compare.py on small fixtures: the figures the oracle
# tests rely on (edge share, missing edges, whole stacks, named frames),
# name normalisation on both sides, exit status.

: "${FS_TOP:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
CMP="$FS_TOP/tests/oracle/jfr_compare.py"
FX="$FS_TOP/tests/oracle/fixtures"

setup() {
	command -v python3 >/dev/null || skip "python3 is not installed"
}

figure() { sed -n "s/^$1 *\([0-9.]*\).*/\1/p" <<<"$output"; }

@test "jfr_compare: figures of the text fixture" {
	run python3 "$CMP" --folded "$FX/small.folded" --jfr "$FX/small.jfr.txt"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(figure edge_share)" = 0.9500 ]
	[ "$(figure whole_share)" = 0.7222 ]
	[ "$(figure named_share)" = 0.9683 ]
	[ "$(figure missing_edges)" = 1 ]
	[[ "$output" == *"missing  11.1%  com.x.App.handle -> com.x.Log.debug"* ]]
	# what JFR saw the caller call instead, for whoever debugs the edge
	[[ "$output" == *"JFR: handle calls com.x.App.compute (1)"* ]]
	# the edge into JVM_FillInStackTrace is not checkable against JFR
	[[ "$output" == *"excluded into-VM edges 1, weight 5"* ]]
	[[ "$output" == *"holding a Java frame: 90"* ]]
}

@test "jfr_compare: thresholds decide the exit status and say why" {
	run python3 "$CMP" --folded "$FX/small.folded" --jfr "$FX/small.jfr.txt" \
		--min-edge-share 0.90 --max-missing-edge 0.01 --min-whole 0.95 --min-named 0.95
	[ "$status" -eq 1 ]
	[[ "$output" == *"FAIL 1 edges with >= 1.0% of Java samples never occur in JFR"* ]]
	[[ "$output" == *"FAIL whole stacks 0.7222 < 0.9500"* ]]
	[[ "$output" != *"FAIL named"* ]]
	[[ "$output" != *"FAIL edge share"* ]]
	run python3 "$CMP" --folded "$FX/small.folded" --jfr "$FX/small.jfr.txt" \
		--min-edge-share 0.95 --max-missing-edge 0.12 --min-whole 0.70 --min-named 0.96
	[ "$status" -eq 0 ]
	run python3 "$CMP" --folded "$FX/small.folded" --min-named 0.97
	[ "$status" -eq 1 ]
	[[ "$output" == *"FAIL named Java frames 0.9683 < 0.9700"* ]]
}

@test "jfr_compare: JSON from jfr print --json gives the same figures" {
	run python3 "$CMP" --folded "$FX/small.folded" --jfr "$FX/small.jfr.json" --json "$BATS_TEST_TMPDIR/r.json"
	[ "$status" -eq 0 ]
	[ "$(figure edge_share)" = 0.9500 ]
	[ "$(jq -r .jfr_samples "$BATS_TEST_TMPDIR/r.json")" = 1 ]
}

@test "jfr_compare: names normalised to class.method on both sides; C symbols are not Java" {
	run python3 - "$FS_TOP/tests/oracle" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from jfr_compare import normalise as n
cases = {
    "java.util.HashMap.get(Object) line: 556": "java.util.HashMap.get",
    "java.util.HashMap.get_[j]": "java.util.HashMap.get",
    "java.util.HashMap.get_[i]": "java.util.HashMap.get",
    "a.B.c_[0]": "a.B.c", "a.B.c_[1]": "a.B.c",
    "a.B$Inner.<init>()": "a.B$Inner.<init>",
    "a.App$$Lambda$14/0x0000000800c03000.run()": "a.App$$Lambda.run",
    "a.App$$Lambda$14.0x0000000800c03000.run": "a.App$$Lambda.run",
    "a.App$$Lambda/0x0000000800c03000.run": "a.App$$Lambda.run",
    "memcpy.part.0": None, "foo.cold": None, "JavaCalls::call_helper": None,
    "[libjvm.so]": None, "Interpreter": None, "[unknown]": None,
    "do_syscall_64_[k]": None, "java": None, "call_stub": None,
}
bad = [(k, n(k), v) for k, v in cases.items() if n(k) != v]
print(bad)
sys.exit(1 if bad else 0)
PY
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "jfr_compare: unreadable or malformed input exits 2" {
	run python3 "$CMP" --folded /nonexistent --jfr "$FX/small.jfr.txt"
	[ "$status" -eq 2 ]
	printf 'no count here\n' >"$BATS_TEST_TMPDIR/bad.folded"
	run python3 "$CMP" --folded "$BATS_TEST_TMPDIR/bad.folded"
	[ "$status" -eq 2 ]
	run python3 "$CMP" --folded "$FX/small.folded" --min-edge-share 0.9
	[ "$status" -eq 2 ]
}

@test "jfr_compare: hidden frames are joined over; edges seen only in the VM are not checked" {
	local d=$BATS_TEST_TMPDIR
	cat >"$d/o.folded" <<'F'
java;start_thread;thread_native_entry;a.A.f;a.A$$Lambda$3/0x0000000801000a00.run;a.A.g 10
java;start_thread;thread_native_entry;a.A.f;java.lang.invoke.LambdaForm$DMH/0x0000000801001000.invokeStatic;a.A.g 5
java;start_thread;thread_native_entry;a.A.h;java.lang.Thread.yield;__sched_yield 5
java;start_thread;thread_native_entry;a.A.f;a.A.g;a.A.k;[libjava.so] 5
java;start_thread;thread_native_entry;a.A.f;java.lang.invoke.VarHandleGuards.guard_LLL_Z_[i];a.A.g_[i] 5
F
	cat >"$d/j.txt" <<'F'
jdk.ExecutionSample {
  stackTrace = [
    a.A.g() line: 2
    a.A.f() line: 1
  ]
}
jdk.NativeMethodSample {
  stackTrace = [
    a.A.k()
    a.A.g() line: 3
    a.A.f() line: 1
  ]
}
F
	run python3 "$CMP" --folded "$d/o.folded" --jfr "$d/j.txt" --min-edge-share 1 --max-missing-edge 0.01
	echo "$output"
	[ "$status" -eq 0 ]
	# a.A.f -> a.A.g (15 + 5 + 5, one through a VarHandle guard), a.A.g ->
	# a.A.k (5); a.A.h -> Thread.yield is in the VM
	[[ "$output" == *"(2 Java->Java edges, weight 30; excluded into-VM edges 1, weight 5)"* ]]
}

@test "jfr_compare: an edge into a compiled leaf JFR never sampled is not checked; inlined or sampled ones are" {
	local d=$BATS_TEST_TMPDIR
	cat >"$d/o.folded" <<'F'
java;start_thread;thread_native_entry;a.A.f;a.V.type 10
java;start_thread;thread_native_entry;a.A.f;a.V.type;irq_exit_[k] 2
java;start_thread;thread_native_entry;a.A.f;a.A.g 10
java;start_thread;thread_native_entry;a.A.f;a.L.debug_[i] 5
java;start_thread;thread_native_entry;a.A.g;a.A.h 5
F
	cat >"$d/j.txt" <<'F'
jdk.ExecutionSample {
  stackTrace = [
    a.A.g() line: 2
    a.A.f() line: 1
  ]
}
jdk.ExecutionSample {
  stackTrace = [
    a.A.h() line: 2
    a.A.f() line: 1
  ]
}
F
	run python3 "$CMP" --folded "$d/o.folded" --jfr "$d/j.txt" --max-missing-edge 0.01
	echo "$output"
	[ "$status" -eq 1 ]
	# a.A.f -> a.V.type: JFR never saw a.V.type (its samples fall where
	# JFR cannot walk): listed, not checked
	[[ "$output" == *"unwalkable     1 edges, weight 12"* ]]
	[[ "$output" == *"excluded  37.5%  a.A.f -> a.V.type"* ]]
	# an inlined leaf JFR never saw is still checked; so is a.A.g -> a.A.h,
	# whose callee JFR did sample (under another caller)
	[[ "$output" == *"missing  15.6%  a.A.f -> a.L.debug"* ]]
	[[ "$output" == *"missing  15.6%  a.A.g -> a.A.h"* ]]
}

@test "jfr_compare: an edge JFR never recorded on a path into Unsafe.park is not checked; others are" {
	local d=$BATS_TEST_TMPDIR
	cat >"$d/o.folded" <<'F'
java;start_thread;thread_native_entry;a.P.run;a.P.idle;a.Q.poll;jdk.internal.misc.Unsafe.park;Unsafe_Park;Parker::park 20
java;start_thread;thread_native_entry;a.P.run;a.P.idle;a.Q.poll;a.Q.size 4
java;start_thread;thread_native_entry;a.P.run;a.P.idle;a.Q.count 3
java;start_thread;thread_native_entry;a.P.run;a.W.work 10
F
	cat >"$d/j.txt" <<'F'
jdk.ExecutionSample {
  stackTrace = [
    a.W.work() line: 2
    a.P.run() line: 1
  ]
}
jdk.ExecutionSample {
  stackTrace = [
    a.Q.size() line: 3
    a.Q.poll() line: 2
  ]
}
jdk.ExecutionSample {
  stackTrace = [
    a.Q.count() line: 3
    a.X.other() line: 2
  ]
}
F
	run python3 "$CMP" --folded "$d/o.folded" --jfr "$d/j.txt" --max-missing-edge 0.01
	echo "$output"
	[ "$status" -eq 1 ]
	# a.P.run -> a.P.idle and a.P.idle -> a.Q.poll lead into the park:
	# listed, not checked (a.Q.poll -> a.Q.size JFR did record)
	[[ "$output" == *"park_path      2 edges, weight 11"* ]]
	[[ "$output" == *"excluded  18.9%  a.P.run -> a.P.idle"* ]]
	# a.P.idle -> a.Q.count never leads into a park in our stacks (and JFR
	# sampled a.Q.count elsewhere): checked
	[[ "$output" == *"missing   8.1%  a.P.idle -> a.Q.count"* ]]
	[[ "$output" != *"missing  "*"a.P.run -> a.P.idle"* ]]
}

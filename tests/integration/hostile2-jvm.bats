#!/usr/bin/env bats
# Hostile containers, the JVM-side cases of our list still untested (issue
# 12): magic links at the perf map and the attach /tmp (3), LD_AUDIT,
# LD_PRELOAD and GCONV_PATH in the image env (10), a SIGSTOPped or
# FUSE-blocked target (12), fds leaked into the container (15), a ptrace of
# the attach child (25). The hook-side cases are in hostile2.bats.

load ../lib/containers
load hostile2-helpers

setup() {
	fs_needs_jvm
	fs_test_setup fs-h2j-
}

teardown() {
	local p
	for p in $(cat "$FS_TMP/jvm-pids" 2>/dev/null); do
		kill -CONT "$p" 2>/dev/null || true
	done
	[ -z "${FUSE_PID:-}" ] || kill "$FUSE_PID" 2>/dev/null || true
	[ -z "${VICTIM_PID:-}" ] || kill "$VICTIM_PID" 2>/dev/null || true
	fs_cleanup
}

@test "magic links: /tmp/perf-1.map through /proc/self/fd/N or /proc/1/root: nothing of the host is read" {
	make_sentinel
	fs_start_jvm "$NAME" --uid 0
	before=$(sentinel_state)
	for target in /proc/self/fd/3 "/proc/1/root$FS_TMP/sentinel/secret" \
		"/proc/self/root$FS_TMP/sentinel/secret" /proc/thread-self/fd/0; do
		rm -f "/tmp/perf-$PID.map"
		ln -sfn "$target" "/proc/$PID/root/tmp/perf-1.map"
		for mode in jcmd agent; do
			run "$FS_SIDECAR" map "$NAME" --mode "$mode" --timeout 10000
			echo "$target $mode: $output"
			[ "$status" -ne 0 ]
			[[ "$output" == *"perf-1.map"* ]]
			[[ "$output" != *"$SENTINEL"* ]]
			! grep -qs "$SENTINEL" "/tmp/perf-$PID.map" || false
			# Nothing wrote through the link either.
			[ "$(readlink "/proc/$PID/root/tmp/perf-1.map")" = "$target" ]
		done
	done
	[ "$(sentinel_state)" = "$before" ]
}

@test "magic links: a container /tmp, or its .java_pid1, that is a /proc magic link is refused for attach" {
	make_sentinel
	fs_start_jvm "$NAME" --tmp-symlink
	ln -sfn "/proc/self/root/var/tmp" "$FS_TMP/$NAME/rootfs/tmp"
	before=$(sentinel_state)
	run "$FS_SIDECAR" map "$NAME" --mode jcmd --timeout 10000
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"is a symbolic link"* ]]
	[[ "$output" != *"$SENTINEL"* ]]
	[ "$(sentinel_state)" = "$before" ]
	# The attach socket itself a magic link (planted before the JVM makes it).
	fs_start_jvm "$NAME-2"
	ln -s /proc/self/fd/3 "/proc/$PID/root/tmp/.java_pid1"
	run "$FS_SIDECAR" map "$NAME-2" --mode jcmd --timeout 10000
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *".java_pid1"* ]]
	[ "$(readlink "/proc/$PID/root/tmp/.java_pid1")" = /proc/self/fd/3 ]
	rm -f "/tmp/perf-$PID.map"
}

@test "LD_AUDIT, LD_PRELOAD and GCONV_PATH in the image env reach nothing of ours (hook, trigger, attach child)" {
	fs_require_cmd cc perf
	cat >"$FS_TMP/evil.c" <<C
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
/* Leaves a mark named after the program it was loaded into. */
__attribute__((constructor)) static void evil(void) {
	char p[4096]; snprintf(p, sizeof(p), "$FS_TMP/pwned-%s-%d", program_invocation_short_name, (int)getpid());
	FILE *f = fopen(p, "w");
	if (!f) { /* inside the container: its own copy at /evil */
		snprintf(p, sizeof(p), "/evil/pwned-%s-%d", program_invocation_short_name, (int)getpid());
		f = fopen(p, "w");
	}
	if (f) fclose(f);
}
unsigned int la_version(unsigned int v) { return v; }
C
	cc -D_GNU_SOURCE -shared -fPIC -o "$FS_TMP/evil.so" "$FS_TMP/evil.c"
	mkdir -p "$FS_TMP/gconv"
	printf 'module INTERNAL EVIL// %s/evil 1\nmodule EVIL// INTERNAL %s/evil 1\nalias UTF-8// EVIL//\n' \
		"$FS_TMP" "$FS_TMP" >"$FS_TMP/gconv/gconv-modules"
	fs_jvm_bundle "$FS_TMP/$NAME"
	# A copy at /evil in the container, so that its own processes load it
	# (the control: the image env is live); the host path for anything of
	# ours that would honour it.
	mkdir -p "$FS_TMP/$NAME/rootfs/evil"
	cp "$FS_TMP/evil.so" "$FS_TMP/$NAME/rootfs/evil/"
	chmod -R a+rwX "$FS_TMP/$NAME/rootfs/evil"
	fs_bundle_set "$FS_TMP/$NAME" '.process.env += [
		"LD_PRELOAD=/evil/evil.so:" + $t + "/evil.so", "LD_AUDIT=/evil/evil.so:" + $t + "/evil.so",
		"GCONV_PATH=" + $t + "/gconv", "LD_LIBRARY_PATH=" + $t] |
		.annotations["flamesidecar.io/profile"] = "1s"' --arg t "$FS_TMP"
	fs_runc_run "$NAME" "$FS_TMP/$NAME"
	PID=$(fs_container_pid "$NAME")
	echo "$PID" >>"$FS_TMP/jvm-pids"
	fs_wait_for 60 fs_ready_lines "$FS_TMP/$NAME/out.log" 1 || { cat "$FS_TMP/$NAME/out.log"; false; }
	ls "$FS_TMP/$NAME/rootfs/evil" | grep -q "^pwned-java"
	# The annotation-triggered profile (hook poststart -> flamesidecar run).
	fs_wait_for 60 grep -q "$NAME: profile written" "$FS_RUN/hook.log" || {
		cat "$FS_RUN/hook.log"; cat "$FS_TMP/profiles/$NAME"/*.log; false; }
	run "$FS_SIDECAR" map "$NAME" --timeout 10000
	echo "$output"
	[ "$status" -eq 0 ]
	run "$FS_SIDECAR" run "$NAME" -d 1s --folded "$FS_TMP/p.folded" -o "$FS_TMP/p.svg"
	echo "$output"
	[ "$status" -eq 0 ]
	ls "$FS_TMP"
	[ -z "$(ls "$FS_TMP" | grep '^pwned-')" ]
}

@test "a SIGSTOPped JVM: map and run finish within their deadline with a clear error" {
	fs_require_cmd perf
	fs_start_jvm "$NAME"
	kill -STOP "$PID"
	start=$SECONDS
	run timeout 60 "$FS_SIDECAR" map "$NAME" --timeout 3000
	took=$((SECONDS - start))
	echo "map ($took s): $output"
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ]
	[ "$took" -le 10 ]
	[[ "$output" == *"pid $PID is stopped (SIGSTOP or a debugger)"* ]]
	start=$SECONDS
	run timeout 60 "$FS_SIDECAR" run "$NAME" -d 1s --folded "$FS_TMP/p.folded" -o "$FS_TMP/p.svg"
	took=$((SECONDS - start))
	echo "run ($took s): $output"
	[ "$status" -ne 124 ]
	[ "$took" -le 20 ]
	# The JVM is left as it was: stopped, and it runs on when continued.
	grep -q '^State:.*T' "/proc/$PID/status"
	kill -CONT "$PID"
	run "$FS_SIDECAR" map "$NAME" --timeout 10000
	echo "$output"
	[ "$status" -eq 0 ]
}

# A FUSE mount whose server never answers (not even FUSE_INIT): every
# access to it blocks until the connection is aborted. Put over the
# container's /tmp (the attach socket's and the perf map's directory).
@test "a FUSE-blocked /tmp: map finishes within its deadline with a clear error" {
	[ -c /dev/fuse ] || skip "/dev/fuse is not available"
	fs_require_cmd python3
	fs_start_jvm "$NAME"
	cat >"$FS_TMP/fuse.py" <<'PY'
import ctypes, os, sys, time
pid, ready = sys.argv[1], sys.argv[2]
fd = os.open("/dev/fuse", os.O_RDWR)
r = open(ready, "w")  # before setns: a host path
libc = ctypes.CDLL(None, use_errno=True)
ns = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY)
if libc.setns(ns, 0) != 0:
    sys.exit("setns: %d" % ctypes.get_errno())
opts = f"fd={fd},rootmode=40000,user_id=0,group_id=0,allow_other".encode()
if libc.mount(b"fs-h2-fuse", b"/tmp", b"fuse", 0, opts) != 0:
    sys.exit("mount: %d" % ctypes.get_errno())
r.write("ok\n")
r.flush()
time.sleep(600)  # never reads /dev/fuse: every request waits
PY
	python3 "$FS_TMP/fuse.py" "$PID" "$FS_TMP/fuse-ready" &
	FUSE_PID=$!
	fs_wait_for 10 grep -q ok "$FS_TMP/fuse-ready"
	start=$SECONDS
	run timeout 60 "$FS_SIDECAR" map "$NAME" --mode jcmd --timeout 3000
	took=$((SECONDS - start))
	echo "map ($took s): $output"
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ]
	[ "$took" -le 10 ]
	[[ "$output" == *"timed out"* || "$output" == *"deadline"* || "$output" == *"did not answer"* ]]
	# Abort the connection (its server exits), then take the mount away.
	kill "$FUSE_PID"
	wait "$FUSE_PID" 2>/dev/null || true
	FUSE_PID=
	nsenter -t "$PID" -m umount -l /tmp || true
}

# Every fd of every process in the container's pid namespace.
no_fd_of_ours() {
	container_fd_targets "$PID" >"$FS_TMP/fds"
	cat "$FS_TMP/fds"
	! grep -E "$FS_RUN|$FS_BUNDLE_DIR|$FS_TMP/profiles|perf_event|\[pidfd\]|\[eventpoll\]|flamesidecar" "$FS_TMP/fds" || false
}

@test "fds leaked into the container: none of ours after the hook, map, run and a continuous map" {
	fs_require_cmd perf
	fs_start_jvm "$NAME"
	no_fd_of_ours
	run "$FS_SIDECAR" map "$NAME" --timeout 10000
	[ "$status" -eq 0 ]
	no_fd_of_ours
	run "$FS_SIDECAR" run "$NAME" -d 1s --folded "$FS_TMP/p.folded" -o "$FS_TMP/p.svg"
	echo "$output"
	[ "$status" -eq 0 ]
	no_fd_of_ours
	run "$FS_SIDECAR" map "$NAME" --continuous --timeout 10000
	[ "$status" -eq 0 ]
	no_fd_of_ours
	# The same for a process that is not the JVM (the runtime's init).
	runc exec -d "$NAME" sleep 100
	no_fd_of_ours
}

# A container that shares the host's pid namespace (so it sees the attach
# child) tries to PTRACE_SEIZE every child of a process named
# flamesidecar, and a control process (uid 0, no capabilities, dumpable).
@test "ptrace of the attach child by a root container process that can see it fails" {
	cat >"$FS_TMP/tracer.c" <<'C'
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>
static int field(const char *pid, char *comm, int *ppid)
{
	char p[64], b[1024];
	snprintf(p, sizeof(p), "/proc/%s/stat", pid);
	FILE *f = fopen(p, "r");
	if (!f) return -1;
	size_t n = fread(b, 1, sizeof(b) - 1, f);
	fclose(f);
	b[n] = 0;
	char *l = strchr(b, '('), *r = strrchr(b, ')');
	if (!l || !r) return -1;
	snprintf(comm, 64, "%.*s", (int)(r - l - 1), l + 1);
	return sscanf(r + 2, "%*c %d", ppid) == 1 ? 0 : -1;
}
int main(void)
{
	static char seen[1 << 22];
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			int pid = atoi(e->d_name), ppid;
			char comm[64], pcomm[64], ps[32];
			if (pid <= 0 || pid >= (1 << 22) || seen[pid] || field(e->d_name, comm, &ppid))
				continue;
			snprintf(ps, sizeof(ps), "%d", ppid);
			int victim = !strcmp(comm, "fsvictim");
			if (!victim && (field(ps, pcomm, &ppid) || strcmp(pcomm, "flamesidecar")))
				continue;
			seen[pid] = 1;
			long r = ptrace(PTRACE_SEIZE, pid, 0, 0);
			printf("%s %d %s\n", victim ? "victim" : "child", pid, r == 0 ? "ATTACHED" : strerror(errno));
			if (r == 0) ptrace(PTRACE_DETACH, pid, 0, 0);
		}
		if (d) closedir(d);
	}
}
C
	fs_cc "$FS_TMP/tracer" "$FS_TMP/tracer.c"
	fs_start_jvm "$NAME" --uid 0
	# The attacker: root, runc's default capabilities (no CAP_SYS_PTRACE), host pid namespace.
	fs_make_bundle "$FS_TMP/att" --uid 0 --no-hooks -- /tracer
	cp "$FS_TMP/tracer" "$FS_TMP/att/rootfs/tracer"
	fs_bundle_set "$FS_TMP/att" '.linux.namespaces |= map(select(.type != "pid"))'
	fs_runc_run "$NAME-att" "$FS_TMP/att"
	# The control: a dumpable root process without capabilities.
	cp /bin/sleep "$FS_TMP/fsvictim"
	setpriv --inh-caps=-all --bounding-set=-all "$FS_TMP/fsvictim" 100 &
	VICTIM_PID=$!
	fs_wait_for 10 grep -q "^victim $VICTIM_PID ATTACHED" "$FS_TMP/att/out.log"
	for i in 1 2 3; do
		run "$FS_SIDECAR" map "$NAME" --timeout 10000
		echo "$output"
		[ "$status" -eq 0 ]
		rm -f "/tmp/perf-$PID.map"
	done
	cat "$FS_TMP/att/out.log"
	echo "# ptrace: $(grep -c '^child ' "$FS_TMP/att/out.log") attach children seen: $(grep '^child ' "$FS_TMP/att/out.log" | cut -d' ' -f3- | sort | uniq -c | tr -s ' ')" >&3
	# It saw the children and got none of them.
	grep -q '^child ' "$FS_TMP/att/out.log"
	! grep -q '^child .*ATTACHED' "$FS_TMP/att/out.log" || false
}

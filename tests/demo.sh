#!/bin/bash
# demo.sh - `make demo`: profile the sample JVM in a real runc container from
# the host and write demo.svg + demo.folded in the repository root.
#
# The container follows docs/DESIGN.md's recipe: host /usr and /etc read-only,
# a tmpfs /tmp, uid 1000 (a user that exists only in the container). It is
# created as containerd and Docker create theirs, through the runtime
# wrapper flamesidecar-runtime in place of runc: the wrapper adds flamehook's
# createRuntime hook and the JVM options (frame pointers, debug info at every
# pc) to the opted-in bundle, with a private configuration and run directory
# under a temporary directory.
# Everything is removed on exit, also on Ctrl-C or an error.
#
#   make demo                 (as root, or sudo make demo; builds first)
#   sudo tests/demo.sh [-d DURATION] [--keep-tmp]
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) B=$BUILD ;; *) B=$TOP/$BUILD ;; esac
DURATION=10s
KEEP=0
while [ $# -gt 0 ]; do
	case "$1" in
	-d | --duration) DURATION=$2; shift 2 ;;
	--keep-tmp) KEEP=1; shift ;;
	-h | --help)
		sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
		exit 0 ;;
	*) echo "demo.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

say() { printf '==> %s\n' "$*"; }
die() { printf 'demo: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root: runc starts a real container and perf_event_open
      samples it system-wide. Try: sudo make demo"
for c in runc jq; do
	command -v "$c" >/dev/null || die "$c is not installed (tests/install-deps.sh installs it)"
done
for f in "$B/flamesidecar" "$B/flamehook" "$B/flamesidecar-runtime"; do
	[ -x "$f" ] || die "$f is missing: run 'make' first"
done
[ -f "$B/java/flametest/Workload.class" ] ||
	die "$B/java/flametest/Workload.class is missing: is a JDK (javac) installed? run 'make'"
JAVA=${JAVA_HOME_17:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
if [ ! -x "$JAVA" ]; then
	JAVA=$(readlink -f "$(command -v java || true)" 2>/dev/null || true)
	[ -x "$JAVA" ] || die "no java found (install openjdk-17-jdk-headless)"
fi
case "$JAVA" in /usr/*) ;; *) die "$JAVA is not under /usr, which is all the container sees" ;; esac

TMP=$(mktemp -d /tmp/flamesidecar-demo.XXXXXX)
chmod 0755 "$TMP"
NAME="flamesidecar-demo-$$"
STARTED=0

cleanup() {
	local rc=$?
	set +e
	if [ "$STARTED" = 1 ]; then
		runc kill "$NAME" KILL >/dev/null 2>&1
		local end=$((SECONDS + 5))
		while runc state "$NAME" 2>/dev/null | grep -q '"status": "running"'; do
			if [ $SECONDS -ge $end ]; then
				echo "demo: $NAME still running 5 s after KILL; deleting it anyway" >&2
				break
			fi
			sleep 0.05
		done
		"$B/flamesidecar-runtime" delete -f "$NAME" >/dev/null 2>&1
	fi
	# anything still mounted under the temp dir, deepest first
	awk -v t="$TMP" '$5 ~ "^"t {print $5}' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	if [ "$KEEP" = 1 ]; then
		echo "demo: kept $TMP"
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "private configuration in $TMP"
mkdir -p "$TMP/agent-bundle" "$TMP/run"
[ -f "$B/libflameagent.so" ] && cp "$B/libflameagent.so" "$TMP/agent-bundle/"
cat >"$TMP/config.json" <<JSON
{"enable": "annotation", "bundle_dir": "$TMP/agent-bundle", "run_dir": "$TMP/run",
 "log_file": "$TMP/run/hook.log", "mount_point": "/opt/flamesidecar",
 "profile_dir": "$TMP/profiles", "sidecar_path": "$B/flamesidecar"}
JSON
export FLAMESIDECAR_CONFIG="$TMP/config.json"

say "runc bundle: host /usr and /etc read-only, tmpfs /tmp, uid 1000, opted in"
BUNDLE="$TMP/bundle"
mkdir -p "$BUNDLE/rootfs"/{usr,etc,tmp,proc,dev,sys,opt/fsjava}
chmod 1777 "$BUNDLE/rootfs/tmp" # runc 1.1 takes the tmpfs mode from it
for l in bin lib lib64 sbin; do ln -sfn "usr/$l" "$BUNDLE/rootfs/$l"; done
(cd "$BUNDLE" && runc spec)
jq --arg java "$JAVA" --arg cp "$B/java" '
	.process.terminal = false |
	.process.args = [$java, "-cp", "/opt/fsjava",
	                 "flametest.Workload", "--threads", "2", "--syscalls"] |
	.process.user = {uid: 1000, gid: 1000} |
	.process.env += ["HOME=/tmp"] |
	.root.readonly = false |
	.annotations = {"flamesidecar.io/enable": "true"} |
	.mounts += [
	  {destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro", "nosuid", "nodev"]},
	  {destination: "/etc", type: "bind", source: "/etc", options: ["rbind", "ro", "nosuid", "nodev"]},
	  {destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777"]},
	  {destination: "/opt/fsjava", type: "bind", source: $cp, options: ["rbind", "ro"]}
	] |
	.linux.namespaces |= map(select(.type != "network"))
' "$BUNDLE/config.json" >"$BUNDLE/config.json.new"
mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"

say "starting the Workload JVM in container $NAME (flamesidecar-runtime run -d, as runc)"
STARTED=1
"$B/flamesidecar-runtime" run -d --bundle "$BUNDLE" "$NAME" >"$TMP/out.log" 2>&1 </dev/null ||
	{ cat "$TMP/out.log" >&2; die "runc could not start the container (output above)"; }

# wait_for SECONDS WHAT COMMAND...: poll with a deadline
wait_for() {
	local end=$((SECONDS + $1)) what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		if [ $SECONDS -ge "$end" ]; then
			cat "$TMP/out.log" >&2
			[ -f "$TMP/run/hook.log" ] && cat "$TMP/run/hook.log" >&2
			die "timed out waiting for $what"
		fi
		sleep 0.1
	done
}
wait_for 60 "the JVM to print READY" grep -q READY "$TMP/out.log"
wait_for 10 "the hook to register the container" test -f "$TMP/run/containers/$NAME.json"
"$B/flamesidecar" list

say "flamesidecar run $NAME -d $DURATION -o demo.svg --folded demo.folded"
cd "$TOP"
"$B/flamesidecar" run "$NAME" -d "$DURATION" -o demo.svg --folded demo.folded

say "done: open $TOP/demo.svg in a browser (click to zoom, Ctrl-F to search)"

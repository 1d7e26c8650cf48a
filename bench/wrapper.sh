#!/bin/bash
# bench/wrapper.sh - what flamesidecar-runtime adds to a runtime call.
#
# Each case runs N times through the wrapper and N times straight to the
# same "runtime" (/bin/true, so the wrapper's own cost is what differs), in
# the same invocation, and prints both and their ratio. Also one real
# `runc create` + `delete` for scale (root only).
#
#   bench/wrapper.sh [N]        (BUILD=build by default)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${1:-2000}
W="$PWD/$BUILD/flamesidecar-runtime"
[ -x "$W" ] || { echo "build $W first (make)" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "{\"runtime_path\": \"/bin/true\", \"log_file\": \"$T/log\", \"run_dir\": \"$T/run\"}" >"$T/config.json"
export FLAMESIDECAR_CONFIG="$T/config.json"
mkdir -p "$T/plain" "$T/optin"
(cd "$T/plain" && runc spec)
jq '.annotations = {"flamesidecar.io/enable": "true"}' "$T/plain/config.json" >"$T/optin/orig.json"
cp "$T/optin/orig.json" "$T/optin/config.json"

now() { date +%s%N; }
# run_case NAME CMD... : the loop of CMD, N times; prints ns per call
per_call() {
	local t0 t1 i
	t0=$(now)
	for ((i = 0; i < N; i++)); do "$@"; done
	t1=$(now)
	echo $(((t1 - t0) / N))
}
restore_and() { cp "$T/optin/orig.json" "$T/optin/config.json"; "$@"; }

report() { # NAME BASE_NS WRAPPED_NS
	awk -v n="$1" -v b="$2" -v w="$3" 'BEGIN {
		printf "%-34s baseline %8.1f us   wrapper %8.1f us   ratio %.2f   (+%.1f us)\n",
			n, b / 1000, w / 1000, w / b, (w - b) / 1000 }'
}

echo "N=$N calls per case; runtime = /bin/true; $(nproc) CPUs; $(uname -r)"
b=$(per_call /bin/true state c1); w=$(per_call "$W" state c1)
report "pass-through (state)" "$b" "$w"
b=$(per_call /bin/true --root "$T/r" create --bundle "$T/plain" c1)
w=$(per_call "$W" --root "$T/r" create --bundle "$T/plain" c1)
report "create, not opted in" "$b" "$w"
b=$(per_call restore_and /bin/true --root "$T/r" create --bundle "$T/optin" c1)
w=$(per_call restore_and "$W" --root "$T/r" create --bundle "$T/optin" c1)
report "create, opted in (patch+rename)" "$b" "$w"
jq -e '.hooks.createRuntime[0].path' "$T/optin/config.json" >/dev/null
# delete: the wrapper looks the id up in the registry. No entry (every
# container that did not opt in): a failed open, then exec. An entry whose
# process is gone (what a shim's delete finds): removed, then exec. The
# entry file is put back before each call on both sides.
mkdir -p -m 0700 "$T/run/containers"
b=$(per_call /bin/true delete c1)
w=$(per_call "$W" delete c1)
report "delete, no registry entry" "$b" "$w"
echo '{"id":"c1","pid":2147483647,"start_time":1,"ns_pid":1,"pid_ns":1,"mnt_ns":1,"uid":0,"gid":0,"created":0}' \
	>"$T/entry.json"
put_entry_and() { cp "$T/entry.json" "$T/run/containers/c1.json"; "$@"; }
b=$(per_call put_entry_and /bin/true delete c1)
w=$(per_call put_entry_and "$W" delete c1)
report "delete, stale entry (unregistered)" "$b" "$w"
[ ! -e "$T/run/containers/c1.json" ] || { echo "the wrapper's delete left the entry" >&2; exit 1; }

if [ "$(id -u)" = 0 ] && command -v runc >/dev/null; then
	mkdir -p "$T/b/rootfs"/{usr,etc,tmp,proc,dev,sys}
	for l in bin lib lib64 sbin; do ln -s "usr/$l" "$T/b/rootfs/$l"; done
	(cd "$T/b" && runc spec)
	jq '.process.terminal = false | .process.args = ["true"] | .root.readonly = false |
	    .mounts += [{destination: "/usr", type: "bind", source: "/usr", options: ["rbind", "ro"]}]' \
		"$T/b/config.json" >"$T/b/c.json" && mv "$T/b/c.json" "$T/b/config.json"
	t0=$(now)
	for i in 1 2 3 4 5; do
		runc --root "$T/rr" create --bundle "$T/b" "fsbench$$-$i" </dev/null >/dev/null 2>&1
		runc --root "$T/rr" delete -f "fsbench$$-$i" >/dev/null 2>&1
	done
	t1=$(now)
	awk -v ns=$(((t1 - t0) / 5)) 'BEGIN { printf "for scale: runc create + delete        %8.1f ms per container\n", ns / 1e6 }'
fi

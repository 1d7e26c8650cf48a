#!/bin/sh
# Install the Debian packages flamesidecar needs to build and test, only those
# missing. Idempotent. Used by `make check`, `make demo` and .ci/run.
set -eu

BUILD_PKGS="build-essential pkg-config libseccomp-dev libyajl-dev libcap-dev libelf-dev zlib1g-dev
protobuf-c-compiler libprotobuf-c-dev"
TEST_PKGS="openjdk-17-jdk-headless runc crun podman bats linux-perf musl-tools clang
libclang-rt-14-dev libfuzzer-14-dev libxml2-utils jq chromium util-linux procps iproute2
perl bc lintian rpm python3-yaml file man-db groff-base containerd clang-format
golang-go python3-jsonschema docker.io python3-grpcio python3-protobuf protobuf-compiler"
# A real Java application and load for it (framepointer.bats, bench/fp-cost.sh).
TEST_PKGS="$TEST_PKGS jetty9 wrk curl"
# GNU time's peak RSS of the profiler in a memory cgroup (hostile-memory.bats).
TEST_PKGS="$TEST_PKGS time"
# Real Java applications and the JFR oracle (tests/lib/apps.bash, tests/oracle).
TEST_PKGS="$TEST_PKGS python3 libservlet-api-java libh2-java libderby-java"
# The JDK's own sources, compiled in a loop by the big application (KIND=big).
TEST_PKGS="$TEST_PKGS openjdk-17-source"
PKGS="$BUILD_PKGS"
PKGS="$PKGS libdw-dev liblzma-dev libbz2-dev" # CFI of native frames (sidecar/unwind/cfi.c)
# Separate debug info (sidecar/debuginfo/): libdebuginfod to build the
# debuginfod helper; glibc's debug file, a real debuginfod server and strace
# as oracles (tests/integration/debuginfo.bats); strace also counts the
# registry entries a lookup opens (tests/integration/lookup-scale.bats).
PKGS="$PKGS libdebuginfod-dev"
TEST_PKGS="$TEST_PKGS libc6-dbg debuginfod strace"
# node --perf-basic-prof beside a JVM (tests/integration/perfmap-runtimes.bats)
TEST_PKGS="$TEST_PKGS nodejs"
[ "${FS_DEPS:-all}" = build ] || PKGS="$PKGS $TEST_PKGS"
# npm for the speedscope test (below); a machine with Node.js from elsewhere
# (e.g. NodeSource, whose nodejs conflicts with Debian's npm) keeps its own.
[ "${FS_DEPS:-all}" = build ] || command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "install-deps: not a Debian system; install the equivalents of: $PKGS" >&2
	exit 0
fi

# speedscope (the npm package) for tests/integration/export.bats, pinned, in a
# cache directory outside the tree; the test serves it from its own temp dir.
SPEEDSCOPE_VERSION=1.25.0
SPEEDSCOPE_CACHE=${FS_SPEEDSCOPE_CACHE:-/var/cache/flamesidecar-tests/npm}
install_speedscope() {
	[ "${FS_DEPS:-all}" = build ] && return 0
	command -v npm >/dev/null 2>&1 || return 0
	v=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' \
		"$SPEEDSCOPE_CACHE/node_modules/speedscope/package.json" 2>/dev/null | head -1)
	[ "$v" = "$SPEEDSCOPE_VERSION" ] && return 0
	mkdir -p "$SPEEDSCOPE_CACHE"
	echo "install-deps: npm install speedscope@$SPEEDSCOPE_VERSION into $SPEEDSCOPE_CACHE"
	npm install --no-audit --no-fund --silent --prefix "$SPEEDSCOPE_CACHE" \
		"speedscope@$SPEEDSCOPE_VERSION" >/dev/null ||
		echo "install-deps: npm install speedscope failed; its test will skip" >&2
}

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done
if [ -z "$missing" ]; then
	install_speedscope
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing Debian packages:$missing" >&2
	echo "install-deps: run as root, or: sudo apt-get install$missing" >&2
	exit 1
fi
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
# With recommends: that is how the tested machines got them (Podman needs
# its network plugins, Chromium its fonts).
apt-get install -y -qq $missing >/dev/null

install_speedscope

#!/bin/sh
# Install the Debian packages flamesidecar needs to build and test, only those
# missing. Idempotent. Used by `make check`, `make demo` and .ci/run.
set -eu

BUILD_PKGS="build-essential pkg-config libseccomp-dev libyajl-dev libcap-dev libelf-dev zlib1g-dev"
TEST_PKGS="openjdk-17-jdk-headless runc crun podman bats linux-perf musl-tools clang
libclang-rt-14-dev libfuzzer-14-dev libxml2-utils jq chromium util-linux procps iproute2
perl bc lintian python3 curl jetty9 libservlet-api-java wrk libh2-java libderby-java rpm python3-yaml file man-db groff-base containerd clang-format"
PKGS="$BUILD_PKGS"
[ "${FS_DEPS:-all}" = build ] || PKGS="$PKGS $TEST_PKGS"

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "install-deps: not a Debian system; install the equivalents of: $PKGS" >&2
	exit 0
fi

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

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

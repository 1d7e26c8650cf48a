#!/bin/bash
# oracle-app.sh KIND [app_start options] [-- jfr_compare options]
# One real application (jetty | h2 | derby) in a runc container, profiled by
# `flamesidecar run` and JFR over the same window, compared; everything is
# removed afterwards except a copy of the outputs in $ORACLE_KEEP (default
# ./oracle-<kind>-<pid>). Root only. Examples:
#   tests/oracle/oracle-app.sh jetty --fp
#   tests/oracle/oracle-app.sh h2 --shape scan --jdk 25 -- --min-edge-share 0.9
#   ORACLE_WINDOW=20 ORACLE_RUN_OPTS="-F 499" tests/oracle/oracle-app.sh derby --fp
set -u
FS_TOP=$(cd "$(dirname "$0")/../.." && pwd)
FS_BUILD=${FS_BUILD:-$FS_TOP/build}
export FS_TOP FS_BUILD
skip() {
	echo "oracle-app: cannot run here: $*" >&2
	exit 77
}
. "$FS_TOP/tests/lib/containers.bash"
. "$FS_TOP/tests/lib/apps.bash"
[ $# -ge 1 ] || { sed -n '2,11p' "$0"; exit 2; }
kind=$1
shift
start=() cmp=()
while [ $# -gt 0 ]; do
	[ "$1" = -- ] && { shift; cmp=("$@"); break; }
	start+=("$1")
	shift
done
jdk=17
for ((i = 0; i < ${#start[@]}; i++)); do
	[ "${start[i]}" = --jdk ] && jdk=${start[i + 1]}
done
app_require "$kind" --jdk "$jdk"
fs_setup
trap fs_cleanup EXIT
name="oracle-app-$$"
keep=${ORACLE_KEEP:-$PWD/oracle-$kind-$$}
app_start "$name" "$kind" "${start[@]}" || exit 1
# shellcheck disable=SC2086
app_profile "$name" "${ORACLE_WINDOW:-10}" "$FS_TMP/out" ${ORACLE_RUN_OPTS:--F 199} || exit 1
rc=0
app_compare "$FS_TMP/out" "${cmp[@]}" || rc=$?
mkdir -p "$keep" && cp -r "$FS_TMP/out"/. "$keep"/
echo "outputs in $keep"
exit $rc

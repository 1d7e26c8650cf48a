#!/bin/bash
# bench/elfjail.sh - the cost of parsing container ELF files in the sandboxed
# child (sidecar/symbolize/elfjail.h) against parsing them in the sidecar
# itself (the code before), on the same files in the same invocation:
#
#   inproc    elfsyms_load_fd in the process (libelf; C++ names demangled
#             lazily, only those a run hits)
#   jail      elfjail_parse with a warm child, as the symbolizer calls it
#             (libelf in the child, names left mangled, flat encoding,
#             transfer, validation)
#   cold      the first file of a new jail (fork + sandbox setup included)
#   name_us   one C++ name demangled: in process, and in the child (the
#             names a run's samples hit, each once: one round trip)
#
# then `flamesidecar run` on the Workload JVM, whose summary says how long
# symbolization took ("symbols N ms"), with the sandbox in place.
#
# Usage: bench/elfjail.sh [ROUNDS [BUILD_DIR]]   (default 9)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-9}
export FS_TOP=$PWD FS_BUILD=${2:-$PWD/build}

# shellcheck source=bench/lib.sh
. bench/lib.sh
[ -x "$FS_BUILD/tests/tools/elfbench" ] || skip "build first (make): no $FS_BUILD/tests/tools/elfbench"

files=()
for f in "$JDK/lib/server/libjvm.so" /usr/lib/jvm/temurin-25*/lib/server/libjvm.so \
	/usr/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
	"$JDK/lib/libjava.so" "$FS_BUILD/flamesidecar"; do
	[ -f "$f" ] && files+=("$(readlink -f "$f")")
done
echo "# bench/elfjail.sh: $ROUNDS rounds, $(nproc) CPUs, load average before: $(bench_load)"
fmt='%-56s %7s %9s %8s %8s %6s %13s %11s\n'
# shellcheck disable=SC2059 # the format is ours
printf "$fmt" file symbols inproc_ms jail_ms cold_ms ratio name_us_inproc name_us_jail
"$FS_BUILD/tests/tools/elfbench" "$ROUNDS" "${files[@]}" |
	while read -r f n a b c r di dj; do
		# shellcheck disable=SC2059
		printf "$fmt" "$f" "$n" "$a" "$b" "$c" "$r" "$di" "$dj"
	done

# A whole run: what symbolization costs with the sandbox.
[ "$(id -u)" = 0 ] && command -v runc >/dev/null && [ -x "$JDK/bin/java" ] || exit 0
bench_require_build
bench_setup
NAME=benchelf-$$
bench_start_workload "$NAME" -- --threads 2 --syscalls
(cd "$W" && "$FS_SIDECAR" run "$NAME" -d 10s -F 499 -o run.svg >"$W/run.out" 2>"$W/run.err")
grep -E '^graph ' "$W/run.out" | sed 's/^/# run: /'

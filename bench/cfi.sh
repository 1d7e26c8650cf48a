#!/bin/bash
# bench/cfi.sh - the cost of native-frame CFI walked in the sandboxed ELF
# child and looked up in a validated flat table (sidecar/unwind/cfitable.h)
# against libdw in the sidecar itself (cfi.c before), on the same files and
# the same pcs in the same invocation (tests/tools/cfibench.c):
#
#   build_ms   the file's whole .eh_frame walked in a warm child, sent and
#              validated: once per file and run
#   libdw_ns   one lookup the old way (dwarf_cfi_addrframe + the CFA and
#              return-address rules; the expression evaluation not counted)
#   table_ns   one lookup + step the new way (binary search, two reads)
#
# Usage: bench/cfi.sh [LOOKUPS [BUILD_DIR]]   (default 200000)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200000}
export FS_TOP=$PWD FS_BUILD=${2:-$PWD/build}

# shellcheck source=bench/lib.sh
. bench/lib.sh
[ -x "$FS_BUILD/tests/tools/cfibench" ] || skip "build first (make): no $FS_BUILD/tests/tools/cfibench"

files=()
for f in "$JDK/lib/server/libjvm.so" /usr/lib/jvm/temurin-25*/lib/server/libjvm.so \
	/usr/lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6; do
	[ -f "$f" ] && files+=("$(readlink -f "$f")")
done
echo "# bench/cfi.sh: $N lookups per file, $(nproc) CPUs, load average before: $(bench_load)"
printf '%-56s %7s %8s %9s %9s %9s %6s\n' file rows bytes build_ms libdw_ns table_ns ratio
"$FS_BUILD/tests/tools/cfibench" "$N" "${files[@]}" |
	while read -r f rows bytes b o n r; do
		printf '%-56s %7s %8s %9s %9s %9s %5sx\n' "$f" "$rows" "$bytes" "$b" "$o" "$n" "$r"
	done

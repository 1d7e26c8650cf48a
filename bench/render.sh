#!/bin/bash
# bench/render.sh - time `flamesidecar render` on a large folded profile.
#
#   bench/render.sh [STACKS] [SEED]     (defaults: 350000 unique stacks, seed 42)
#
# Generates a seeded, sorted folded file of Java-like stacks (a random walk
# over a fixed call graph of 4,000 methods, depth 6-30), then times, in the
# same invocation and on the same file:
#   baseline  `LC_ALL=C sort` of the file (what every flamegraph.pl pipeline does
#             first) and `cat > /dev/null` (reading it)
#   render    flamesidecar render (sorted input, and the same lines shuffled)
# and prints seconds (wall clock, and CPU = user + system, which a busy
# machine does not inflate), the render/baseline ratios and the SVG size.
# Best of 3 runs each. Needs perl and bc. BUILD selects the build directory.
set -eu
cd "$(dirname "$0")/.."
STACKS=${1:-350000}
SEED=${2:-42}
BUILD=${BUILD:-build}
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_corpus "$STACKS" "$SEED"
perl -e 'srand($ARGV[0]); my @l = <STDIN>; for (my $i = @l; --$i;) { my $j = int rand($i + 1); @l[$i, $j] = @l[$j, $i]; } print @l;' \
	"$SEED" <"$in" >"$dir/shuf.folded"

lines=$(wc -l <"$in")
bytes=$(wc -c <"$in")
cat "$in" "$dir/shuf.folded" >/dev/null # warm the page cache
read -r w_cat c_cat <<<"$(bench_best "cat '$in'")"
read -r w_sort c_sort <<<"$(bench_best "LC_ALL=C sort '$in'")"
read -r w_render c_render <<<"$(bench_best "'$FS' render '$in' >'$dir/out.svg'")"
read -r w_shuf c_shuf <<<"$(bench_best "'$FS' render '$dir/shuf.folded' >'$dir/shuf.svg'")"
svg=$(wc -c <"$dir/out.svg")
frames=$(grep -c '^<g><title>' "$dir/out.svg")

echo "input:    $lines unique stacks, $bytes bytes (seed $SEED)"
echo "            wall s   cpu s"
printf 'cat       %7s %7s   (baseline: reading the file)\n' "$w_cat" "$c_cat"
printf 'sort      %7s %7s   (baseline: LC_ALL=C sort)\n' "$w_sort" "$c_sort"
printf 'render    %7s %7s   sorted input\n' "$w_render" "$c_render"
printf 'render    %7s %7s   shuffled input\n' "$w_shuf" "$c_shuf"
echo "ratio:    render/sort wall $(bench_ratio "$w_render" "$w_sort") cpu $(bench_ratio "$c_render" "$c_sort")," \
	"shuffled render/sort wall $(bench_ratio "$w_shuf" "$w_sort") cpu $(bench_ratio "$c_shuf" "$c_sort")"
echo "svg:      $svg bytes, $frames frames drawn (minwidth 0.1 px)"
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min; figures above are noisy when > $(nproc))"

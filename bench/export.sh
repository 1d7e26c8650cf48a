#!/bin/bash
# bench/export.sh - time and size of the pprof and speedscope writers beside
# the SVG's, on the render benchmark's corpus.
#
#   bench/export.sh [STACKS] [SEED]     (defaults: 350000 unique stacks, seed 42)
#
# The seeded folded file of bench/render-corpus.pl (what bench/render.sh uses),
# then, in the same invocation and on the same file, best of 3 runs each:
#   baseline    flamesidecar render (folded -> SVG)
#   pprof       flamesidecar convert --pprof (folded -> gzip'd profile.proto)
#   speedscope  flamesidecar convert --speedscope (folded -> JSON)
# Each reads and parses the folded text itself, as it would in a pipeline.
# Prints seconds (wall, and CPU = user + system), the ratios to the SVG, the
# sizes, and peak RSS (GNU time). Needs perl, bc; /usr/bin/time for RSS.
set -eu
cd "$(dirname "$0")/.."
STACKS=${1:-350000}
SEED=${2:-42}
BUILD=${BUILD:-build}
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_corpus "$STACKS" "$SEED"

# peak RSS in MiB of one run, or "-" without GNU time
rss() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M' sh -c "$1" 2>&1 >/dev/null | tail -1 | awk '{ printf "%.1f", $1 / 1024 }'
	else
		echo -
	fi
}

lines=$(wc -l <"$in")
bytes=$(wc -c <"$in")
cat "$in" >/dev/null # warm the page cache
svg_cmd="'$FS' render '$in' >'$dir/out.svg'"
pprof_cmd="'$FS' convert --pprof '$dir/out.pb.gz' '$in'"
ss_cmd="'$FS' convert --speedscope '$dir/out.json' '$in'"
read -r w_svg c_svg <<<"$(bench_best "$svg_cmd")"
read -r w_pb c_pb <<<"$(bench_best "$pprof_cmd")"
read -r w_ss c_ss <<<"$(bench_best "$ss_cmd")"
m_svg=$(rss "$svg_cmd")
m_pb=$(rss "$pprof_cmd")
m_ss=$(rss "$ss_cmd")
s_svg=$(wc -c <"$dir/out.svg")
s_pb=$(wc -c <"$dir/out.pb.gz")
s_ss=$(wc -c <"$dir/out.json")
s_pbraw=$(gzip -dc "$dir/out.pb.gz" | wc -c)

echo "input:      $lines unique stacks, $bytes bytes (seed $SEED)"
echo "              wall s   cpu s   peak MiB        bytes"
printf 'svg        %7s %7s   %8s %12s   (baseline: render)\n' "$w_svg" "$c_svg" "$m_svg" "$s_svg"
printf 'pprof      %7s %7s   %8s %12s   (%s bytes before gzip)\n' "$w_pb" "$c_pb" "$m_pb" "$s_pb" "$s_pbraw"
printf 'speedscope %7s %7s   %8s %12s\n' "$w_ss" "$c_ss" "$m_ss" "$s_ss"
echo "ratio:      pprof/svg wall $(bench_ratio "$w_pb" "$w_svg") cpu $(bench_ratio "$c_pb" "$c_svg") size $(bench_ratio "$s_pb" "$s_svg");" \
	"speedscope/svg wall $(bench_ratio "$w_ss" "$w_svg") cpu $(bench_ratio "$c_ss" "$c_svg") size $(bench_ratio "$s_ss" "$s_svg")"
echo "load:       $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min; figures above are noisy when > $(nproc))"

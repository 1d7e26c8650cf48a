#!/bin/sh
# options.sh - the option lists of flamesidecar.1 come from the verbs'
# option tables (sidecar/opt.h), not from hand editing. Between the lines
#     .\" BEGIN OPTIONS <verb> ...
#     .\" END OPTIONS <verb>
# of the page stands exactly what `flamesidecar --print-man-options <verb>`
# prints.
#
#   docs/man/options.sh FLAMESIDECAR PAGE          rewrite the lists in PAGE
#   docs/man/options.sh --check FLAMESIDECAR PAGE  exit 1 (and show the diff)
#                                                  when PAGE has drifted
set -eu
check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
[ $# -eq 2 ] || { echo "usage: $0 [--check] FLAMESIDECAR PAGE" >&2; exit 2; }
fs=$1 page=$2
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
awk -v fs="$fs" '
	/^\.\\" BEGIN OPTIONS / {
		print
		verb = $4
		sub(/:$/, "", verb)
		cmd = fs " --print-man-options " verb
		n = 0
		while ((cmd | getline line) > 0) { print line; n++ }
		if (close(cmd) != 0 || n == 0) { print "no options for " verb > "/dev/stderr"; exit 3 }
		skipping = 1
		next
	}
	/^\.\\" END OPTIONS / { skipping = 0 }
	!skipping { print }
' "$page" >"$tmp"
if [ "$check" = 1 ]; then
	if ! diff -u "$page" "$tmp"; then
		echo "$page: the option lists differ from the verbs' tables; run $0 $fs $page" >&2
		exit 1
	fi
	exit 0
fi
cat "$tmp" >"$page"

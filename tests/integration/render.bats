#!/usr/bin/env bats
# flamesidecar render / diff: folded stacks -> SVG. Every SVG is checked with
# xmllint; frame facts are read back through XPath, not grep.

bats_require_minimum_version 1.5.0

FIX="$FS_TOP/tests/fixtures/render"
FRAMES='//*[local-name()="g"][@id="frames"]/*[local-name()="g"]'

setup() {
	FS="$FS_BUILD/flamesidecar"
	[ -x "$FS" ] || skip "flamesidecar not built ($FS)"
	command -v xmllint >/dev/null || skip "xmllint not installed (libxml2-utils)"
}

# titles FILE: the text of every frame's <title>, one a line (xmllint prints
# text nodes re-escaped; undo that).
titles() {
	xmllint --xpath "$FRAMES/*[local-name()=\"title\"]/text()" "$1" |
		sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&apos;/'"'"'/g; s/&amp;/\&/g'
}

# frames FILE: one "title<TAB>fill" line per drawn frame, in document order.
frames() {
	paste <(titles "$1") \
		<(xmllint --xpath "$FRAMES/*[local-name()=\"rect\"]/@fill" "$1" |
			sed 's/^ *fill="\(.*\)"$/\1/')
}

# palette_family "rgb(R,G,B)": the family of palette.c whose range holds the
# colour (each channel is base + span * v, v in [0,1)), or "none".
palette_family() {
	local r g b
	IFS=', ' read -r r g b <<<"$(printf '%s' "$1" | tr -c '0-9,' ' ')"
	within() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
	if [ "$r" = "$b" ] && within "$r" 50 110 && within "$g" 190 250; then echo green
	elif [ "$g" = "$b" ] && within "$r" 50 110 && within "$g" 165 220; then echo aqua
	elif [ "$r" = "$g" ] && within "$r" 175 230 && within "$b" 50 70; then echo yellow
	elif [ "$b" = 0 ] && within "$r" 190 255 && within "$g" 90 155; then echo orange
	elif [ "$g" = "$b" ] && within "$r" 200 255 && within "$g" 50 130; then echo red
	else echo none; fi
}

# xp FILE XPATH: the string value of an XPath expression.
xp() {
	xmllint --xpath "string($2)" "$1"
}

# frame_attr FILE NAME ATTR: ATTR of the first frame's rect whose title starts with "NAME ("
frame_attr() {
	xp "$1" "($FRAMES[starts-with(*[local-name()=\"title\"], \"$2 (\")])[1]/*[local-name()=\"rect\"]/@$3"
}

@test "render: --help has usage and examples, exits 0" {
	run "$FS" render --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: flamesidecar render"* ]]
	[[ "$output" == *"Examples:"* ]]
	[[ "$output" == *"--minwidth"* ]]
}

@test "render: java fixture gives valid XML with one frame per call path" {
	run -0 --separate-stderr "$FS" render "$FIX/java.folded"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/j.svg"
	xmllint --noout "$BATS_TEST_TMPDIR/j.svg"
	n=$(xp "$BATS_TEST_TMPDIR/j.svg" "count($FRAMES)")
	# all + 19 distinct call paths in the fixture
	[ "$n" -eq 20 ]
	title=$(frames "$BATS_TEST_TMPDIR/j.svg" | head -1 | cut -f1)
	[ "$title" = "all (900 samples, 100.00%)" ]
	# the java palette (the default): every frame's fill in the range of its
	# kind's family (palette.c): Java green, inlined aqua (its _[i] stripped
	# from the label), C++ yellow, kernel orange, the rest red
	frames "$BATS_TEST_TMPDIR/j.svg" >"$BATS_TEST_TMPDIR/j.frames"
	n=0
	while IFS=$'\t' read -r title f; do
		case "$title" in
		"com/example/Service.hotMethod (25 samples"*) want=aqua ;;
		*/*) want=green ;;
		*::*) want=yellow ;;
		entry_SYSCALL_64* | do_syscall_64* | ksys_write*) want=orange ;;
		*) want=red ;;
		esac
		got=$(palette_family "$f")
		echo "$title: $f is $got, want $want"
		[ "$got" = "$want" ]
		n=$((n + 1))
	done <"$BATS_TEST_TMPDIR/j.frames"
	[ "$n" -eq 20 ]
	# the label has no annotation left
	[ "$(grep -c '_\[i\]' "$BATS_TEST_TMPDIR/j.frames")" -eq 0 ]
}

@test "render: hostile frame names still give well-formed XML" {
	run "$FS" render -o "$BATS_TEST_TMPDIR/n.svg" "$FIX/nasty.folded"
	[ "$status" -eq 0 ]
	[[ "$output" == *"skipped 1 of 10 lines"* ]]
	xmllint --noout "$BATS_TEST_TMPDIR/n.svg"
	# no entity from the input is expanded, no script element injected
	[ "$(xp "$BATS_TEST_TMPDIR/n.svg" 'count(//*[local-name()="script"])')" -eq 1 ]
	titles=$(titles "$BATS_TEST_TMPDIR/n.svg")
	[[ "$titles" == *'<script>alert(1)</script> (10 samples'* ]] || { echo "$titles"; false; }
	[[ "$titles" == *'x]]>y (5 samples'* ]]
	[[ "$titles" == *'&e (1 samples'* ]]
	[[ "$titles" == *'<!DOCTYPE x [<!ENTITY e "boom">]> (1 samples'* ]]
	[[ "$titles" == *'"quoted" '"'"'single'"'"' (5 samples'* ]]
	[[ "$titles" == *$'ctl\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd[31m (3 samples'* ]]
	[[ "$titles" == *$'tab\xef\xbf\xbdhere (3 samples'* ]]
	[[ "$titles" == *$'caf\xc3\xa9 (2 samples'* ]]
	# invalid UTF-8 never reaches the file
	run iconv -f UTF-8 -t UTF-8 "$BATS_TEST_TMPDIR/n.svg"
	[ "$status" -eq 0 ]
	# the same input through every palette and layout option stays valid
	for args in "--colors hot" "--colors mem" "--colors io" "--colors js" "--colors perl" \
		"--colors wakeup" "--colors chain --hash" "--reverse" "--inverted" "--minwidth 0"; do
		# shellcheck disable=SC2086
		"$FS" render $args --title '<&"]]>' --subtitle $'\x01&' --countname '<b>' \
			--nametype '"x"' "$FIX/nasty.folded" >"$BATS_TEST_TMPDIR/o.svg" 2>/dev/null
		xmllint --noout "$BATS_TEST_TMPDIR/o.svg" || { echo "invalid with $args"; false; }
	done
	[ "$(xp "$BATS_TEST_TMPDIR/o.svg" '//*[@id="title"]')" = '<&"]]>' ]
}

@test "render: options change the output" {
	f="$FIX/java.folded" d="$BATS_TEST_TMPDIR"
	"$FS" render "$f" >"$d/base.svg"
	"$FS" render --title 'My Title' --subtitle 'sub' "$f" >"$d/title.svg"
	[ "$(xp "$d/title.svg" '//*[@id="title"]')" = "My Title" ]
	[ "$(xp "$d/title.svg" '//*[@id="subtitle"]')" = "sub" ]
	[ "$(xp "$d/base.svg" '//*[@id="title"]')" = "Flame Graph" ]

	"$FS" render --width 600 "$f" >"$d/w.svg"
	[ "$(xp "$d/w.svg" '/*/@width')" = 600 ]
	[ "$(frame_attr "$d/w.svg" all width)" = "580.00" ]

	"$FS" render --height 24 "$f" >"$d/h.svg"
	[ "$(frame_attr "$d/h.svg" all height)" = "23.0" ]

	# inverted: the root is at the top instead of the bottom
	"$FS" render --inverted "$f" >"$d/i.svg"
	yb=$(frame_attr "$d/base.svg" all y) yi=$(frame_attr "$d/i.svg" all y)
	[ "${yi%.*}" -lt "${yb%.*}" ]
	[ "$(xp "$d/i.svg" '//*[@id="title"]')" = "Icicle Graph" ]

	# reverse: leaf functions sit right on top of "all"
	"$FS" render --reverse "$f" >"$d/r.svg"
	yroot=$(frame_attr "$d/r.svg" all y) yk=$(frame_attr "$d/r.svg" ksys_write y)
	[ "$(( ${yroot%.*} - ${yk%.*} ))" -eq 16 ]
	[ "$(frame_attr "$d/r.svg" com/example/Service.hotMethod width)" != "" ]

	# minwidth: a 60/900 frame is 78.67 px wide; 100 px elides it
	"$FS" render --minwidth 100 "$f" >"$d/m.svg"
	[ -z "$(frame_attr "$d/m.svg" ksys_write width)" ]
	[ -n "$(frame_attr "$d/base.svg" ksys_write width)" ]
	"$FS" render --minwidth 10% "$f" >"$d/mp.svg"
	[ -z "$(frame_attr "$d/mp.svg" ksys_write width)" ]

	# countname and nametype
	"$FS" render --countname allocs --nametype 'Method:' "$f" >"$d/c.svg"
	[[ "$(frames "$d/c.svg" | head -1)" == "all (900 allocs, 100.00%)"* ]]
	[ "$(xp "$d/c.svg" '//*[@id="details"]/@data-prefix')" = "Method:" ]

	# palettes: java colours Java frames green, C++ yellow, kernel orange
	fill() { frame_attr "$1" "$2" fill | tr -c '0-9\n' ' '; }
	read -r r g b <<<"$(fill "$d/base.svg" java/lang/Thread.run)"; [ "$g" -gt "$r" ] && [ "$g" -gt "$b" ]
	read -r r g b <<<"$(fill "$d/base.svg" JavaThread::run)"; [ "$r" -gt 150 ] && [ "$g" -gt 150 ] && [ "$b" -lt 100 ]
	read -r r g b <<<"$(fill "$d/base.svg" ksys_write)"; [ "$r" -gt "$g" ] && [ "$g" -gt "$b" ] && [ "$b" -eq 0 ]
	read -r r g b <<<"$(fill "$d/base.svg" Interpreter)"; [ "$r" -gt "$g" ] && [ "$g" -eq "$b" ]
	"$FS" render --colors mem "$f" >"$d/mem.svg"
	[ "$(frames "$d/mem.svg" | cut -f2)" != "$(frames "$d/base.svg" | cut -f2)" ]
	read -r r g b <<<"$(fill "$d/mem.svg" java/lang/Thread.run)"; [ "$r" -lt 50 ]

	# --hash: a function has the same colour in different graphs
	"$FS" render --hash "$f" >"$d/h1.svg"
	grep -v Interpreter "$f" | "$FS" render --hash >"$d/h2.svg"
	[ "$(fill "$d/h1.svg" com/example/Codec.encode)" = "$(fill "$d/h2.svg" com/example/Codec.encode)" ]
	# ... and the output is reproducible
	"$FS" render "$f" | cmp - "$d/base.svg"
}

@test "render: input order does not matter; --reverse merges by leaf" {
	d="$BATS_TEST_TMPDIR"
	"$FS" render "$FIX/java.folded" >"$d/sorted.svg"
	# reversed line order, and the same stacks split over repeated lines
	tac "$FIX/java.folded" >"$d/rev.folded"
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); print $0, n - 1; print $0, 1 }' "$FIX/java.folded" |
		tac >>"$d/split.folded"
	"$FS" render "$d/rev.folded" | cmp - "$d/sorted.svg"
	"$FS" render "$d/split.folded" | cmp - "$d/sorted.svg"

	printf 'a;x 1\nb;x 2\nc;y 4\n' | "$FS" render --reverse >"$d/r.svg"
	xmllint --noout "$d/r.svg"
	[ "$(frames "$d/r.svg" | cut -f1 | tr '\n' '|')" = \
		"all (7 samples, 100.00%)|x (3 samples, 42.86%)|a (1 samples, 14.29%)|b (2 samples, 28.57%)|y (4 samples, 57.14%)|c (4 samples, 57.14%)|" ]
}

@test "render: reads stdin, writes -o atomically, reports errors" {
	"$FS" render -o "$BATS_TEST_TMPDIR/out.svg" <"$FIX/java.folded"
	xmllint --noout "$BATS_TEST_TMPDIR/out.svg"
	[ "$(ls "$BATS_TEST_TMPDIR" | grep -c tmp)" -eq 0 ]

	run "$FS" render "$BATS_TEST_TMPDIR/missing.folded"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot open '$BATS_TEST_TMPDIR/missing.folded'"* ]]

	run "$FS" render --colors nope "$FIX/java.folded"
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown palette"*"java, hot"* ]]
	run "$FS" render --width abc "$FIX/java.folded"
	[ "$status" -eq 2 ]
	run "$FS" render a b
	[ "$status" -eq 2 ]

	run "$FS" render -o "$BATS_TEST_TMPDIR/none/x.svg" "$FIX/java.folded"
	[ "$status" -eq 1 ]
	[[ "$output" == *"none/x.svg"* ]]

	# no stacks: an SVG that says so, and a failure that says why
	run --separate-stderr "$FS" render </dev/null
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no stacks"* ]]
	printf '%s\n' "$output" | xmllint --noout -
	[[ "$output" == *"No stack counts found"* ]]
}

@test "diff: only the changed method is coloured, red when it grew" {
	d="$BATS_TEST_TMPDIR"
	"$FS" diff "$FIX/diff_a.folded" "$FIX/diff_b.folded" >"$d/d.svg"
	xmllint --noout "$d/d.svg"
	frames "$d/d.svg" >"$d/frames.txt"
	coloured=$(awk -F'\t' '$2 != "rgb(235,235,235)"' "$d/frames.txt")
	[ "$(printf '%s\n' "$coloured" | wc -l)" -eq 1 ] || { cat "$d/frames.txt"; false; }
	[[ "$coloured" == "com/example/Service.hotMethod (650 samples, 54.17%; +25.00%)"$'\t'"rgb(255,0,0)" ]]
	# widths come from B: 1200 samples
	[[ "$(head -1 "$d/frames.txt")" == "all (1,200 samples"* ]]

	# the other way round the same method is blue
	"$FS" diff "$FIX/diff_b.folded" "$FIX/diff_a.folded" >"$d/r.svg"
	coloured=$(frames "$d/r.svg" | awk -F'\t' '$2 != "rgb(235,235,235)"')
	[ "$(printf '%s\n' "$coloured" | wc -l)" -eq 1 ]
	[[ "$coloured" == "com/example/Service.hotMethod (350 samples, 38.89%; -33.33%)"$'\t'"rgb(0,0,255)" ]]
}

@test "diff: -n normalises, --negate takes widths from A, --folded prints counts" {
	d="$BATS_TEST_TMPDIR"
	printf 'main;a 10\nmain;b 10\nmain;gone 5\n' >"$d/a.folded"
	printf 'main;a 40\nmain;b 20\n' >"$d/b.folded"

	run -0 "$FS" diff --folded "$d/a.folded" "$d/b.folded"
	[ "$output" = $'main;a 10 40\nmain;b 10 20\nmain;gone 5 0' ]
	# -n: A (25) scaled to B's total (60)
	run -0 "$FS" diff --folded -n "$d/a.folded" "$d/b.folded"
	[ "$output" = $'main;a 24 40\nmain;b 24 20\nmain;gone 12 0' ]

	# without -n b grew (10 -> 20): red; with -n it shrank (24 -> 20): blue
	"$FS" diff "$d/a.folded" "$d/b.folded" >"$d/plain.svg"
	[[ "$(frame_attr "$d/plain.svg" b fill)" == "rgb(255,"* ]]
	"$FS" diff -n "$d/a.folded" "$d/b.folded" >"$d/norm.svg"
	[[ "$(frame_attr "$d/norm.svg" b fill)" == "rgb("*",255)" ]]

	# widths from B: "gone" (only in A) is not drawn; --negate draws A, gone is blue
	[ -z "$(frame_attr "$d/plain.svg" gone width)" ]
	"$FS" diff --negate "$d/a.folded" "$d/b.folded" >"$d/neg.svg"
	xmllint --noout "$d/neg.svg"
	[[ "$(frames "$d/neg.svg" | head -1)" == "all (25 samples"* ]]
	[[ "$(frame_attr "$d/neg.svg" gone fill)" == "rgb("*",255)" ]]
	[[ "$(frame_attr "$d/neg.svg" a fill)" == "rgb(255,"* ]]

	# the folded output renders to the same graph
	"$FS" diff --folded "$d/a.folded" "$d/b.folded" | "$FS" render >"$d/via.svg"
	cmp "$d/via.svg" "$d/plain.svg"
}

@test "diff: usage errors and --help" {
	run "$FS" diff --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Examples:"* ]]
	run "$FS" diff "$FIX/diff_a.folded"
	[ "$status" -eq 2 ]
	[[ "$output" == *"expected two folded files"* ]]
	run "$FS" diff "$FIX/diff_a.folded" "$BATS_TEST_TMPDIR/nope"
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot open '$BATS_TEST_TMPDIR/nope'"* ]]
}

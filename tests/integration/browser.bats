#!/usr/bin/env bats
# The flame graph's script in a real browser: headless Chromium loads the SVG
# with URL parameters (?s=REGEX searches, ?x=..&y=.. zooms) and we read the
# DOM it dumps after load. Needs chromium; skips without it.

bats_require_minimum_version 1.5.0

FIX="$FS_TOP/tests/fixtures/render"
CHROME="$FS_TOP/tests/browser/chromium.sh"
FRAMES='//*[local-name()="g"][@id="frames"]/*[local-name()="g"]'

setup() {
	FS="$FS_BUILD/flamesidecar"
	[ -x "$FS" ] || skip "flamesidecar not built ($FS)"
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null ||
		skip "chromium not installed (apt-get install chromium)"
	command -v xmllint >/dev/null || skip "xmllint not installed (libxml2-utils)"
	SVG="$BATS_TEST_TMPDIR/java.svg"
	"$FS" render --title "browser test" "$FIX/java.folded" >"$SVG"
}

xp() {
	xmllint --xpath "string($2)" "$1"
}

# frame_attr FILE NAME ATTR [N]: ATTR of the Nth (default 1st) frame rect titled "NAME (..."
frame_attr() {
	xp "$1" "($FRAMES[starts-with(*[local-name()=\"title\"], \"$2 (\")])[${4:-1}]/*[local-name()=\"rect\"]/@$3"
}

dump() {
	"$CHROME" dump "file://$SVG$1" >"$BATS_TEST_TMPDIR/dom.xml"
	[ -s "$BATS_TEST_TMPDIR/dom.xml" ] || { echo "chromium dumped nothing for $1"; return 1; }
	xmllint --noout "$BATS_TEST_TMPDIR/dom.xml"
}

@test "browser: ?s=REGEX highlights matches and shows the matched percentage" {
	# expected: samples of stacks through hotMethod (nested calls counted once)
	want=$(awk '{ n = $NF; t += n } /hotMethod/ { m += n } END { printf "%.1f", 100 * m / t }' \
		"$FIX/java.folded")
	[ "$want" = "41.7" ]
	dump "?s=hotMethod"
	[ "$(xp "$BATS_TEST_TMPDIR/dom.xml" '//*[@id="matched"]')" = "Matched: $want%" ]
	# all three hotMethod frames (one nested, one inlined) are magenta, nothing else
	hits=$(xp "$BATS_TEST_TMPDIR/dom.xml" "count($FRAMES/*[local-name()=\"rect\"][@fill=\"rgb(230,0,230)\"])")
	[ "$hits" -eq 3 ]
	[ "$(xp "$BATS_TEST_TMPDIR/dom.xml" '//*[@id="search"]')" = "Reset Search" ]

	# a regex, not a substring: anchored alternatives
	dump "?s=%5E(Interpreter%7CGC%20Thread%230)%24"
	[ "$(xp "$BATS_TEST_TMPDIR/dom.xml" '//*[@id="matched"]')" = "Matched: 19.4%" ]

	# a bad regex says so instead of throwing
	dump "?s=%28"
	[[ "$(xp "$BATS_TEST_TMPDIR/dom.xml" '//*[@id="matched"]')" == "Bad regex: ("* ]]
}

@test "browser: ?x=&y= zooms on a frame and changes the geometry" {
	x=$(frame_attr "$SVG" com/example/Service.handle x)
	y=$(frame_attr "$SVG" com/example/Service.handle y)
	w=$(frame_attr "$SVG" com/example/Service.handle width)
	[ "$w" != "1180.00" ]
	hx=$(frame_attr "$SVG" com/example/Service.hotMethod x)
	hw=$(frame_attr "$SVG" com/example/Service.hotMethod width)
	dump "?x=$x&y=$y"
	dom="$BATS_TEST_TMPDIR/dom.xml"
	# the zoomed frame fills the width, its children scale with it
	[ "$(frame_attr "$dom" com/example/Service.handle x)" = "10.00" ]
	[ "$(frame_attr "$dom" com/example/Service.handle width)" = "1180.00" ]
	want=$(awk -v x="$x" -v w="$w" -v hx="$hx" -v hw="$hw" \
		'BEGIN { k = 1180 / w; printf "%.2f %.2f", 10 + (hx - x) * k, hw * k }')
	got="$(frame_attr "$dom" com/example/Service.hotMethod x) $(frame_attr "$dom" com/example/Service.hotMethod width)"
	# within a pixel (the SVG stores coordinates to 0.01 px)
	awk -v a="$want" -v b="$got" 'BEGIN { split(a, p); split(b, q);
		exit !((p[1] - q[1])^2 < 1 && (p[2] - q[2])^2 < 1) }' || { echo "want $want got $got"; false; }
	# ancestors span the width, faded; unrelated frames are hidden
	[ "$(frame_attr "$dom" java/lang/Thread.run width)" = "1180.00" ]
	[[ "$(xp "$dom" "($FRAMES[starts-with(*[local-name()=\"title\"], \"java/lang/Thread.run (\")])[1]/@class")" == *parent* ]]
	[[ "$(xp "$dom" "($FRAMES[starts-with(*[local-name()=\"title\"], \"GC Thread#0 (\")])[1]/@style")" == *"display: none"* ]]
	[[ "$(xp "$dom" "($FRAMES[starts-with(*[local-name()=\"title\"], \"Interpreter (\")])[1]/@style")" == *"display: none"* ]]
	# Reset Zoom is offered
	[[ "$(xp "$dom" '//*[@id="unzoom"]/@class')" != *hide* ]]
	# search still counts against the whole profile while zoomed
	dump "?x=$x&y=$y&s=hotMethod"
	[ "$(xp "$BATS_TEST_TMPDIR/dom.xml" '//*[@id="matched"]')" = "Matched: 41.7%" ]
}

@test "browser: screenshot of a searched flame graph" {
	art="$FS_BUILD/test-artifacts"
	mkdir -p "$art"
	rm -f "$art/render-browser.png"
	cp "$SVG" "$art/render-browser.svg"
	"$CHROME" shot "$art/render-browser.png" 1200,260 "file://$art/render-browser.svg?s=hotMethod"
	[ -s "$art/render-browser.png" ]
	[ "$(head -c 8 "$art/render-browser.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]
}

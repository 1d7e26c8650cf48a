#!/bin/sh
# chromium.sh - run headless Chromium on one URL, as the browser tests need it.
#   chromium.sh dump URL            the DOM after load (scripts run) on stdout
#   chromium.sh shot PNG WxH URL    a screenshot of the page
# A throw-away profile, no network chatter, bounded by a timeout. Chromium
# exits by itself once the page has loaded, so there is nothing to poll.
# CHROMIUM_EXTRA_FLAGS adds flags (e.g. --virtual-time-budget=MS for pages
# that fetch their data after the load event).
set -eu
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || { echo "chromium.sh: chromium not found" >&2; exit 127; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
set -- "$@"
mode=$1; shift
flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
 --disable-background-networking --disable-component-update --disable-sync
 --user-data-dir=$profile ${CHROMIUM_EXTRA_FLAGS:-}"
case "$mode" in
dump)
	# shellcheck disable=SC2086
	timeout 90 "$CHROMIUM" $flags --dump-dom "$1" 2>/dev/null
	;;
shot)
	# shellcheck disable=SC2086
	timeout 90 "$CHROMIUM" $flags --hide-scrollbars --window-size="$2" --screenshot="$1" "$3" \
		>/dev/null 2>&1
	;;
*)
	echo "usage: chromium.sh dump URL | shot PNG WxH URL" >&2
	exit 2
	;;
esac

#!/bin/sh
# node-install.sh - put flamesidecar's host side on a Kubernetes node from
# the DaemonSet's init container (packaging/kubernetes/flamesidecar.yaml).
#
#   SRC    where the package is installed in this image (default /)
#   HOST   where the node's root is mounted (default /host)
#   HOOKS_DIR  the node's hooks.d directory for CRI-O (default
#          /etc/containers/oci/hooks.d; CRI-O reads its "hooks_dir" list)
#   CONFIG the config.json to install (default the ConfigMap at
#          /config/config.json, else the package's)
#   POSTSTOP  1: also install the optional poststop entry (entries removed
#          the moment a container stops, at one more hook process per stop;
#          by default the sidecar's verbs and `gc` remove stale entries)
#
# On the node everything lives in /usr/lib/flamesidecar (bin/, bundle/,
# and lib/ for a dynamically linked flamesidecar), the hooks.d files in
# HOOKS_DIR and the config in /etc/flamesidecar. The programs are static
# and run on the node as they are.
#
# `node-install.sh --uninstall` removes all of it again.
set -eu

SRC=${SRC:-/}
HOST=${HOST:-/host}
HOOKS_DIR=${HOOKS_DIR:-/etc/containers/oci/hooks.d}
CONFIG=${CONFIG:-/config/config.json}
NODE_DIR=/usr/lib/flamesidecar
DEST="$HOST$NODE_DIR"

say() { echo "node-install: $*"; }

# Copy to a temporary name, then rename: a hook being run meanwhile sees
# the old or the new file, never half of one.
put() { # MODE SRCFILE DESTFILE
	install -m "$1" "$2" "$3.new.$$"
	mv -f "$3.new.$$" "$3"
}

if [ "${1:-}" = --uninstall ]; then
	rm -f "$HOST$HOOKS_DIR"/flamesidecar*.json
	rm -rf "$DEST" "$HOST/etc/flamesidecar"
	say "removed $NODE_DIR, $HOOKS_DIR/flamesidecar*.json and /etc/flamesidecar"
	exit 0
fi

[ -d "$HOST" ] || { echo "node-install: $HOST is not a directory (mount the node's / there)" >&2; exit 1; }
install -d -m 0755 "$DEST/bin" "$DEST/bundle" "$HOST$HOOKS_DIR" "$HOST/etc/flamesidecar"

put 0755 "$SRC/usr/bin/flamehook" "$DEST/bin/flamehook"
put 0755 "$SRC/usr/bin/flamesidecar-runtime" "$DEST/bin/flamesidecar-runtime"
for so in "$SRC"/usr/lib/flamesidecar/bundle/*.so; do
	[ -f "$so" ] && put 0644 "$so" "$DEST/bundle/$(basename "$so")"
done

# flamesidecar: static in a normal build, installed as it is. A dynamic one
# (another build) gets the libraries it was linked with, and their loader,
# beside it behind a small launcher, so that the hook can start triggered
# profiles on a node that has none of those libraries.
rm -rf "$DEST/lib"
if ! objdump -p "$SRC/usr/bin/flamesidecar" 2>/dev/null | grep -q NEEDED &&
	! ldd "$SRC/usr/bin/flamesidecar" 2>/dev/null | grep -q '=>'; then
	put 0755 "$SRC/usr/bin/flamesidecar" "$DEST/bin/flamesidecar"
else
	install -d -m 0755 "$DEST/lib"
	put 0755 "$SRC/usr/bin/flamesidecar" "$DEST/lib/flamesidecar.bin"
	loader=
	for lib in $(ldd "$SRC/usr/bin/flamesidecar" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		put 0755 "$(readlink -f "$lib")" "$DEST/lib/$(basename "$lib")"
		case "$(basename "$lib")" in ld-linux*) loader=$(basename "$lib") ;; esac
	done
	[ -n "$loader" ] || { echo "node-install: no dynamic loader in ldd's output" >&2; exit 1; }
	cat >"$DEST/bin/flamesidecar.new.$$" <<SH
#!/bin/sh
# Installed by flamesidecar's node-install.sh: flamesidecar with its own libraries.
exec $NODE_DIR/lib/$loader --library-path $NODE_DIR/lib $NODE_DIR/lib/flamesidecar.bin "\$@"
SH
	chmod 0755 "$DEST/bin/flamesidecar.new.$$"
	mv -f "$DEST/bin/flamesidecar.new.$$" "$DEST/bin/flamesidecar"
fi

# hooks.d files (CRI-O), pointing at the node's copy of the hook.
POSTSTOP=${POSTSTOP:-0}
optional=
[ "$POSTSTOP" != 1 ] || optional="$SRC/usr/share/flamesidecar/hooks.d-optional/flamesidecar-poststop.json"
for h in "$SRC"/usr/share/containers/oci/hooks.d/flamesidecar*.json $optional; do
	sed "s|\"/usr/bin/flamehook\"|\"$NODE_DIR/bin/flamehook\"|" "$h" >"$HOST$HOOKS_DIR/.$(basename "$h").$$"
	chmod 0644 "$HOST$HOOKS_DIR/.$(basename "$h").$$"
	mv -f "$HOST$HOOKS_DIR/.$(basename "$h").$$" "$HOST$HOOKS_DIR/$(basename "$h")"
done

# The host configuration: the ConfigMap's, with the node's paths.
[ -f "$CONFIG" ] || CONFIG="$SRC/etc/flamesidecar/config.json"
sed -e "s|\"sidecar_path\" *: *\"[^\"]*\"|\"sidecar_path\": \"$NODE_DIR/bin/flamesidecar\"|" \
	-e "s|\"bundle_dir\" *: *\"[^\"]*\"|\"bundle_dir\": \"$NODE_DIR/bundle\"|" \
	"$CONFIG" >"$HOST/etc/flamesidecar/.config.json.$$"
grep -q '"sidecar_path"' "$HOST/etc/flamesidecar/.config.json.$$" ||
	sed -i "0,/{/s||{\"sidecar_path\": \"$NODE_DIR/bin/flamesidecar\",|" "$HOST/etc/flamesidecar/.config.json.$$"
chmod 0644 "$HOST/etc/flamesidecar/.config.json.$$"
mv -f "$HOST/etc/flamesidecar/.config.json.$$" "$HOST/etc/flamesidecar/config.json"

say "installed $NODE_DIR (hook, runtime wrapper, sidecar, agent bundle), $HOOKS_DIR and /etc/flamesidecar/config.json"

#!/bin/sh
# deb.sh - build flamesidecar_<version>_<arch>.deb with dpkg-deb, no
# debhelper. Called by `make deb` (packaging/packaging.mk) with BUILD,
# VERSION, DEB_REVISION and MAKE in the environment, after `make all`.
#
# The tree is what `make install DESTDIR=... PREFIX=/usr` installs, plus
# the runtime wrapper; binaries are stripped, man pages gzipped, Depends is
# computed from the dynamic objects (dpkg-shlibdeps when dpkg-dev is there).
set -eu

BUILD=${BUILD:-build}
VERSION=${VERSION:?}
DEB_REVISION=${DEB_REVISION:-1}
MAKE=${MAKE:-make}
TOP=$(pwd)
case "$BUILD" in /*) ;; *) BUILD="$TOP/$BUILD" ;; esac

ARCH=$(dpkg --print-architecture)
PKGVER="$VERSION-$DEB_REVISION"
WORK="$BUILD/deb"
ROOT="$WORK/debian/flamesidecar"
OUT="$BUILD/flamesidecar_${PKGVER}_$ARCH.deb"

umask 022
rm -rf "$WORK"
mkdir -p "$ROOT"

"$MAKE" --no-print-directory -C "$TOP" install BUILD="$BUILD" DESTDIR="$ROOT" PREFIX=/usr \
	SYSCONFDIR=/etc >/dev/null
# The top Makefile's install target may not know the wrapper yet.
[ -e "$ROOT/usr/bin/flamesidecar-runtime" ] ||
	install -m 0755 "$BUILD/flamesidecar-runtime" "$ROOT/usr/bin/flamesidecar-runtime"
[ -f "$ROOT/usr/lib/flamesidecar/bundle/libflameagent.so" ] ||
	echo "deb: warning: libflameagent.so was not built; the package has no agent (JDK headers missing?)" >&2

# Strip like dh_strip (debug info stays in the build tree).
for f in "$ROOT"/usr/bin/*; do
	strip --remove-section=.comment --remove-section=.note "$f"
done
find "$ROOT/usr/lib/flamesidecar" -name '*.so' -exec \
	strip --remove-section=.comment --remove-section=.note --strip-unneeded {} +

# Man pages gzipped (-n: no name or time stamp, reproducible).
find "$ROOT/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9n {} +

DOC="$ROOT/usr/share/doc/flamesidecar"
install -d "$DOC" "$ROOT/usr/share/lintian/overrides"
install -m 0644 packaging/debian/copyright "$DOC/copyright"
gzip -9nc packaging/debian/changelog >"$DOC/changelog.Debian.gz"
for d in README.md docs/engines.md docs/security.md docs/configuration.md; do
	[ -f "$d" ] && install -m 0644 "$d" "$DOC/"
done
install -m 0644 packaging/debian/lintian-overrides "$ROOT/usr/share/lintian/overrides/flamesidecar"

# Dependencies of the dynamic objects: the agent (libc only), and any
# program that is not static (all are in a normal build; a build with other
# LDFLAGS may differ). dpkg-shlibdeps gives versions; without it (no
# dpkg-dev) the owners of the NEEDED libraries are listed without versions.
set --
for f in "$ROOT"/usr/bin/* "$ROOT"/usr/lib/flamesidecar/bundle/*.so; do
	[ -f "$f" ] && objdump -p "$f" 2>/dev/null | grep -q NEEDED && set -- "$@" "$f"
done
DEPENDS=
if [ $# -gt 0 ] && command -v dpkg-shlibdeps >/dev/null 2>&1; then
	printf 'Source: flamesidecar\n\nPackage: flamesidecar\nArchitecture: any\n' >"$WORK/debian/control"
	DEPENDS=$(cd "$WORK" && dpkg-shlibdeps -O "$@" 2>/dev/null | sed -n 's/^shlibs:Depends=//p') || DEPENDS=
fi
if [ $# -gt 0 ] && [ -z "$DEPENDS" ]; then
	DEPENDS=$(for f in "$@"; do objdump -p "$f" | awk '/NEEDED/ {print $2}'; done | sort -u |
		while read -r lib; do
			path=$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')
			[ -n "$path" ] && dpkg -S "$path" "$(readlink -f "$path")" 2>/dev/null | head -n 1 | cut -d: -f1
		done | sort -u | paste -sd, - | sed 's/,/, /g')
fi

install -d "$ROOT/DEBIAN"
SIZE=$(du -k -s --apparent-size "$ROOT" | cut -f1)
sed -e "s|@VERSION@|$PKGVER|" -e "s|@ARCH@|$ARCH|" -e "s|@SIZE@|$SIZE|" -e "s|@DEPENDS@|$DEPENDS|" \
	packaging/debian/control.in | { [ -n "$DEPENDS" ] && cat || grep -v '^Depends: $'; } >"$ROOT/DEBIAN/control"
install -m 0644 packaging/debian/conffiles "$ROOT/DEBIAN/conffiles"
install -m 0755 packaging/debian/postrm "$ROOT/DEBIAN/postrm"
(cd "$ROOT" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
	xargs -0 md5sum) >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/md5sums"
find "$ROOT" -type d -exec chmod 0755 {} +

dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$OUT" >/dev/null
echo "deb: $OUT"

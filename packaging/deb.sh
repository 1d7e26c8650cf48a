#!/bin/sh
# deb.sh - build flamesidecar_<version>_<arch>.deb with dpkg-deb, no
# debhelper. Called by `make deb` (packaging/packaging.mk) with BUILD,
# VERSION, DEB_REVISION and MAKE in the environment, after `make all`.
#
# The tree is what `make install DESTDIR=... PREFIX=/usr` installs, plus
# the runtime wrapper; binaries are stripped, man pages gzipped, Depends is
# computed by dpkg-shlibdeps when it is installed (dpkg-dev).
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
# Used when dpkg-shlibdeps is not there: what the dynamic flamesidecar
# binary and the agent link against (objdump -p: NEEDED).
FALLBACK_DEPENDS="libc6 (>= 2.36), libcap2 (>= 1:2.26), libelf1 (>= 0.144), libseccomp2 (>= 1.0.1), libstdc++6 (>= 4.1.1), libyajl2 (>= 2.0.4)"

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

# Dependencies of the dynamic objects.
DEPENDS=$FALLBACK_DEPENDS
if command -v dpkg-shlibdeps >/dev/null 2>&1; then
	printf 'Source: flamesidecar\n\nPackage: flamesidecar\nArchitecture: any\n' >"$WORK/debian/control"
	set -- "$ROOT/usr/bin/flamesidecar"
	for so in "$ROOT"/usr/lib/flamesidecar/bundle/*.so; do [ -f "$so" ] && set -- "$@" "$so"; done
	deps=$(cd "$WORK" && dpkg-shlibdeps -O "$@" 2>/dev/null | sed -n 's/^shlibs:Depends=//p') || deps=
	[ -n "$deps" ] && DEPENDS=$deps
fi

install -d "$ROOT/DEBIAN"
SIZE=$(du -k -s --apparent-size "$ROOT" | cut -f1)
sed -e "s|@VERSION@|$PKGVER|" -e "s|@ARCH@|$ARCH|" -e "s|@SIZE@|$SIZE|" -e "s|@DEPENDS@|$DEPENDS|" \
	packaging/debian/control.in >"$ROOT/DEBIAN/control"
install -m 0644 packaging/debian/conffiles "$ROOT/DEBIAN/conffiles"
install -m 0755 packaging/debian/postrm "$ROOT/DEBIAN/postrm"
(cd "$ROOT" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
	xargs -0 md5sum) >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/md5sums"
find "$ROOT" -type d -exec chmod 0755 {} +

dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$OUT" >/dev/null
echo "deb: $OUT"

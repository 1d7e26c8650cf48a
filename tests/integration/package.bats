#!/usr/bin/env bats
# `make deb`: the package's contents and metadata, lintian (reported, not
# failed on warnings), then a real dpkg -i on this machine, the installed
# programs working together (wrapper + hook + agent bundle on a runc
# container), and dpkg -r / -P leaving nothing behind.
#
# Installing writes to /usr/bin, /usr/lib, /usr/share and /etc of this
# machine: the tests skip when a flamesidecar is already installed there
# (package or `make install`), and teardown purges what they installed.

load ../lib/containers

PKG=flamesidecar

setup_file() {
	# A package is never built from a sanitizer build (make deb refuses).
	[ -z "${FS_SANITIZE:-}" ] || return 0
	[ "$(id -u)" = 0 ] || return 0
	command -v dpkg-deb >/dev/null 2>&1 || return 0
	# Build once for every test of this file.
	rm -f "$FS_BUILD"/flamesidecar_*.deb
	make -C "$FS_TOP" BUILD="$(realpath --relative-to="$FS_TOP" "$FS_BUILD")" deb >"$BATS_FILE_TMPDIR/make-deb.log" 2>&1 ||
		{ cat "$BATS_FILE_TMPDIR/make-deb.log" >&3; return 1; }
}

setup() {
	[ -z "${FS_SANITIZE:-}" ] || skip "packages are built from the normal build, not the sanitizer one"
	fs_require_root
	fs_require_cmd dpkg-deb dpkg jq
	DEB=$(ls "$FS_BUILD"/flamesidecar_*.deb 2>/dev/null | head -n 1)
	[ -n "$DEB" ] || fail_build
	fs_setup
	NAME=fsp$$-$BATS_TEST_NUMBER
	X="$FS_TMP/x"
	dpkg-deb -x "$DEB" "$X"
}

fail_build() {
	echo "make deb did not produce a package" >&2
	return 1
}

teardown() {
	if [ "${INSTALLED:-0}" = 1 ]; then
		for c in $(runc list -q 2>/dev/null | grep "^fsp$$-" || true); do
			runc delete -f "$c" >/dev/null 2>&1 || true
		done
		dpkg -P "$PKG" >/dev/null 2>&1 || true
	fi
	fs_cleanup
}

# Refuse to touch a machine where flamesidecar is installed already.
require_clean_system() {
	if dpkg-query -W -f '${Status}' "$PKG" 2>/dev/null | grep -q "installed"; then
		skip "the $PKG package is already installed on this machine"
	fi
	for f in /usr/bin/flamehook /usr/bin/flamesidecar /usr/bin/flamesidecar-runtime \
		/usr/lib/flamesidecar /etc/flamesidecar /usr/share/containers/oci/hooks.d/flamesidecar.json; do
		[ ! -e "$f" ] || skip "$f exists (installed by hand?); not overwriting it"
	done
}

@test "deb: files, modes, hooks.d pointing at /usr/bin/flamehook, gzipped man pages, docs" {
	for f in usr/bin/flamehook usr/bin/flamesidecar usr/bin/flamesidecar-runtime; do
		[ "$(stat -c %a "$X/$f")" = 755 ]
	done
	[ -f "$X/usr/lib/flamesidecar/bundle/libflameagent.so" ] || skip "the agent was not built (no JDK headers)"
	[ "$(stat -c %a "$X/usr/lib/flamesidecar/bundle/libflameagent.so")" = 644 ]
	for h in "$X"/usr/share/containers/oci/hooks.d/*.json; do
		[ "$(jq -r .hook.path "$h")" = /usr/bin/flamehook ]
		[ "$(jq -r '.hook.env | join(" ")' "$h")" = "PATH=/usr/sbin:/usr/bin:/sbin:/bin" ]
	done
	[ -f "$X/usr/share/containers/oci/hooks.d/flamesidecar.json" ]
	# poststop is shipped but not active: one hook process per start.
	[ ! -e "$X/usr/share/containers/oci/hooks.d/flamesidecar-poststop.json" ]
	[ "$(jq -r .hook.path "$X/usr/share/flamesidecar/hooks.d-optional/flamesidecar-poststop.json")" = /usr/bin/flamehook ]
	jq -e .enable "$X/etc/flamesidecar/config.json" >/dev/null
	for m in man1/flamesidecar.1 man1/flamehook.1 man1/flamesidecar-runtime.1 man5/flamesidecar.json.5; do
		[ -f "$X/usr/share/man/$m.gz" ]
		gzip -t "$X/usr/share/man/$m.gz"
	done
	[ -f "$X/usr/share/doc/flamesidecar/copyright" ]
	gzip -t "$X/usr/share/doc/flamesidecar/changelog.Debian.gz"
	# Stripped, and the static ones static.
	run file "$X/usr/bin/flamehook" "$X/usr/bin/flamesidecar-runtime" "$X/usr/bin/flamesidecar"
	[[ "$output" != *"not stripped"* ]]
	[ "$(grep -c -e '/flamehook:.*static-pie' -e '/flamesidecar-runtime:.*static-pie' <<<"$output")" = 2 ]
	# Nothing in /run, /var or /usr/local.
	[ ! -e "$X/run" ] && [ ! -e "$X/var" ] && [ ! -e "$X/usr/local" ]
}

@test "deb: control fields, Depends covers every shared library of the dynamic binaries, conffile, md5sums" {
	[ "$(dpkg-deb -f "$DEB" Package)" = flamesidecar ]
	[ "$(dpkg-deb -f "$DEB" Architecture)" = "$(dpkg --print-architecture)" ]
	[[ "$(dpkg-deb -f "$DEB" Version)" == "$(sed -n 's/^VERSION := //p' "$FS_TOP/Makefile")-"* ]]
	deps=$(dpkg-deb -f "$DEB" Depends || true)
	# Every NEEDED library belongs to a package named in Depends.
	for obj in "$X/usr/bin/flamesidecar" "$X"/usr/lib/flamesidecar/bundle/*.so; do
		[ -f "$obj" ] || continue
		for lib in $(objdump -p "$obj" | awk '/NEEDED/ {print $2}'); do
			path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|64bit/ {print $NF; exit}')
			[ -n "$path" ] || path=$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')
			# dpkg knows a library by one of its names (/lib or /usr/lib).
			owner=$(dpkg -S "$path" "$(readlink -f "$path")" 2>/dev/null | head -n 1 | cut -d: -f1)
			echo "$lib -> $owner"
			[[ ", $deps" == *", $owner "* || ", $deps," == *", $owner,"* ]]
		done
	done
	dpkg-deb --ctrl-tarfile "$DEB" | tar -xO ./conffiles | grep -qx /etc/flamesidecar/config.json
	(cd "$X" && dpkg-deb --ctrl-tarfile "$DEB" | tar -xO ./md5sums | md5sum -c --quiet)
	size=$(dpkg-deb -f "$DEB" Installed-Size)
	[ "$size" -gt 100 ]
}

@test "deb: lintian (warnings are reported, errors fail)" {
	command -v lintian >/dev/null 2>&1 || skip "lintian is not installed (apt-get install lintian)"
	run lintian --pedantic --display-info "$DEB"
	while IFS= read -r line; do echo "# lintian: $line" >&3; done <<<"$output"
	! grep -q '^E: ' <<<"$output" || false
}

@test "dpkg -i: programs work, hooks.d points at the installed hook, the wrapper runs a profiled container" {
	require_clean_system
	fs_require_cmd runc
	INSTALLED=1
	run dpkg -i "$DEB"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(dpkg-query -W -f '${Status}' $PKG)" = "install ok installed" ]
	run /usr/bin/flamesidecar --version
	[ "$status" -eq 0 ]
	[[ "$output" == "flamesidecar "* ]]
	run /usr/bin/flamehook --version
	[[ "$output" == "flamehook "* ]]
	run /usr/bin/flamesidecar-runtime --help
	[[ "$output" == *"flamesidecar-runtime"*"Examples:"* ]]
	[ "$(jq -r .hook.path /usr/share/containers/oci/hooks.d/flamesidecar.json)" = /usr/bin/flamehook ]
	man -w flamesidecar-runtime | grep -q '^/usr/share/man/man1/flamesidecar-runtime.1.gz$'
	man -w 5 flamesidecar.json | grep -q '^/usr/share/man/man5/flamesidecar.json.5.gz$'

	# The installed wrapper finds the installed hook next to it and the
	# installed bundle gets mounted (private run dir, so the host registry
	# is not touched).
	fs_config_set '.bundle_dir = "/usr/lib/flamesidecar/bundle" | .sidecar_path = "/usr/bin/flamesidecar"'
	fs_make_bundle "$FS_TMP/b" --no-hooks --annotate flamesidecar.io/enable=true -- sleep 1000
	echo "runc $NAME" >>"$FS_TMP/containers"
	/usr/bin/flamesidecar-runtime run -d --bundle "$FS_TMP/b" "$NAME" >"$FS_TMP/b/out.log" 2>&1 </dev/null
	[ "$(jq -r '.hooks.createRuntime[0].path' "$FS_TMP/b/config.json")" = /usr/bin/flamehook ]
	[ "$(jq -r .id "$FS_RUN/containers/$NAME.json")" = "$NAME" ]
	if [ -f /usr/lib/flamesidecar/bundle/libflameagent.so ]; then
		runc exec --user 1000:1000 "$NAME" test -f /opt/flamesidecar/libflameagent.so
	fi
	run /usr/bin/flamesidecar list
	[[ "$output" == *"$NAME"*alive* ]]
}

@test "dpkg -r keeps the conffile; dpkg -P leaves no file of the package behind" {
	require_clean_system
	INSTALLED=1
	dpkg -i "$DEB" >/dev/null
	dpkg -L "$PKG" | while read -r f; do [ -f "$f" ] && echo "$f"; done >"$FS_TMP/files"
	[ "$(wc -l <"$FS_TMP/files")" -gt 10 ]
	# A local change to the conffile survives remove.
	echo '{"enable": "never"}' >/etc/flamesidecar/config.json
	dpkg -r "$PKG" >/dev/null
	[ "$(jq -r .enable /etc/flamesidecar/config.json)" = never ]
	[ ! -e /usr/bin/flamehook ] && [ ! -e /usr/bin/flamesidecar-runtime ]
	dpkg -P "$PKG" >/dev/null
	INSTALLED=0
	left=""
	while read -r f; do [ -e "$f" ] && left="$left $f"; done <"$FS_TMP/files"
	[ -z "$left" ] || { echo "left behind:$left"; false; }
	[ ! -e /etc/flamesidecar ]
	[ ! -e /usr/lib/flamesidecar ]
	[ ! -e /usr/share/doc/flamesidecar ]
	! dpkg-query -W "$PKG" >/dev/null 2>&1 || [ -z "$(dpkg-query -W -f '${Status}' "$PKG" | grep installed)" ] || false
}

@test "kubernetes: manifests parse; the DaemonSet is unprivileged, hostPID, no engine socket" {
	command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null ||
		skip "python3 with PyYAML is not installed (apt-get install python3-yaml)"
	run python3 - "$FS_TOP/packaging/kubernetes/flamesidecar.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = {d["kind"]: d for d in docs}
ds = kinds["DaemonSet"]["spec"]["template"]["spec"]
assert ds["hostPID"] is True
assert not ds.get("hostNetwork") and not ds.get("hostIPC")
for c in ds["initContainers"] + ds["containers"]:
    sc = c["securityContext"]
    assert sc["privileged"] is False, c["name"]
    assert sc["capabilities"]["drop"] == ["ALL"], c["name"]
paths = [v["hostPath"]["path"] for v in ds["volumes"] if "hostPath" in v]
assert not any("sock" in p for p in paths), paths
for p in ["/run/flamesidecar", "/var/lib/flamesidecar", "/usr/lib/flamesidecar"]:
    assert p in paths, p
sidecar = ds["containers"][0]["securityContext"]["capabilities"]["add"]
assert "SYS_ADMIN" in sidecar and "SYS_PTRACE" in sidecar and "NET_ADMIN" not in sidecar
print("ok", sorted(kinds))
PY
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "kubernetes: node-install.sh puts a working hook, wrapper and sidecar on a node root, and removes them" {
	fs_require_cmd ldd
	H="$FS_TMP/host"
	mkdir -p "$H"
	echo '{"enable": "always", "sidecar_path": "/usr/bin/flamesidecar"}' >"$FS_TMP/cm.json"
	run env SRC="$X" HOST="$H" CONFIG="$FS_TMP/cm.json" sh "$FS_TOP/packaging/kubernetes/node-install.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	L="$H/usr/lib/flamesidecar"
	"$L/bin/flamehook" --version
	[ -x "$L/bin/flamesidecar-runtime" ]
	for h in "$H"/etc/containers/oci/hooks.d/flamesidecar*.json; do
		[ "$(jq -r .hook.path "$h")" = /usr/lib/flamesidecar/bin/flamehook ]
	done
	[ "$(jq -r .enable "$H/etc/flamesidecar/config.json")" = always ]
	[ "$(jq -r .sidecar_path "$H/etc/flamesidecar/config.json")" = /usr/lib/flamesidecar/bin/flamesidecar ]
	if [ -d "$L/lib" ]; then
		# A dynamic sidecar: the launcher's command, with the node root
		# prefixed, and an empty environment.
		grep -q '^exec /usr/lib/flamesidecar/lib/ld-linux' "$L/bin/flamesidecar"
		loader=$(ls "$L"/lib/ld-linux*)
		run env -i "$loader" --library-path "$L/lib" "$L/lib/flamesidecar.bin" --version
	else
		run env -i "$L/bin/flamesidecar" --version
	fi
	[ "$status" -eq 0 ]
	[[ "$output" == "flamesidecar "* ]]
	run env SRC="$X" HOST="$H" sh "$FS_TOP/packaging/kubernetes/node-install.sh" --uninstall
	[ "$status" -eq 0 ]
	[ -z "$(find "$H" -type f)" ]
}

@test "rpm: the spec parses and rpmbuild builds a package with the same files" {
	command -v rpmbuild >/dev/null 2>&1 || skip "rpmbuild is not installed (apt-get install rpm)"
	git -C "$FS_TOP" rev-parse HEAD >/dev/null 2>&1 || skip "not a git checkout (make dist uses git archive)"
	run rpmspec -q --qf '%{name} %{version}\n' "$FS_TOP/packaging/rpm/flamesidecar.spec"
	[ "$status" -eq 0 ]
	[ "$output" = "flamesidecar $(sed -n 's/^VERSION := //p' "$FS_TOP/Makefile")" ]
	# The committed tree, built as a distribution would (without its
	# dependency database: this is Debian).
	git -C "$FS_TOP" archive --format=tar.gz --prefix=flamesidecar-0.1.0/ \
		-o "$FS_TMP/flamesidecar-0.1.0.tar.gz" HEAD
	run rpmbuild -bb --nodeps --define "_topdir $FS_TMP/rpm" --define "_sourcedir $FS_TMP" \
		--define "_jvmdir /usr/lib/jvm" "$FS_TOP/packaging/rpm/flamesidecar.spec"
	[ "$status" -eq 0 ] || { echo "$output" | tail -30; false; }
	rpm=$(ls "$FS_TMP"/rpm/RPMS/*/flamesidecar-0.1.0-*.rpm)
	run rpm -qlp "$rpm"
	for f in /usr/bin/flamehook /usr/bin/flamesidecar /usr/bin/flamesidecar-runtime \
		/etc/flamesidecar/config.json /usr/share/containers/oci/hooks.d/flamesidecar.json \
		/var/lib/flamesidecar/profiles /usr/share/man/man1/flamesidecar-runtime.1; do
		# Man pages are gzipped by the distribution's brp scripts (not Debian's rpm).
		grep -qxE "$f(\.gz)?" <<<"$output" || { echo "missing $f"; false; }
	done
	rpm -qp --configfiles "$rpm" | grep -qx /etc/flamesidecar/config.json
}

@test "man pages: groff -ww finds nothing to warn about; every verb of flamesidecar has a section" {
	fs_require_cmd groff
	for m in "$FS_TOP"/docs/man/*.[15]; do
		run groff -man -Tutf8 -ww -z "$m"
		[ "$status" -eq 0 ]
		[ -z "$output" ] || { echo "$m: $output"; false; }
	done
	for v in run top map list gc collapse render diff; do
		grep -q "^\.SS $v\$" "$FS_TOP/docs/man/flamesidecar.1" || { echo "no section for $v"; false; }
	done
	# And each verb's long options appear in the page.
	for v in run top map list gc collapse render diff; do
		# The option each line of the help's option list starts with.
		for o in $("$FS_BUILD/flamesidecar" "$v" --help |
			sed -nE 's/^ +(-[A-Za-z], )?(--[a-z][a-z-]+).*/\2/p' | sort -u); do
			[ "$o" = --help ] && continue
			grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$FS_TOP/docs/man/flamesidecar.1" ||
				{ echo "flamesidecar $v $o is not in flamesidecar.1"; false; }
		done
	done
}

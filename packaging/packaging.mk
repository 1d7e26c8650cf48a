# packaging/packaging.mk - included by the top Makefile.
#
#   make deb    a .deb built with dpkg-deb (no debhelper) from a
#               `make install DESTDIR=... PREFIX=/usr` tree: $(BUILD)/flamesidecar_*.deb
#   make rpm    binary RPMs with rpmbuild from packaging/rpm/flamesidecar.spec
#               and a `git archive` tarball (needs rpmbuild: apt-get install rpm)
#   make dist   that tarball only: $(BUILD)/flamesidecar-$(VERSION).tar.gz

DEB_REVISION ?= 1

deb: all
	@if [ "$(SANITIZE)" = 1 ]; then echo "deb: refusing to package a sanitizer build" >&2; exit 1; fi
	BUILD="$(BUILD)" VERSION="$(VERSION)" DEB_REVISION="$(DEB_REVISION)" MAKE="$(MAKE)" \
		packaging/deb.sh

dist:
	@mkdir -p $(BUILD)
	git archive --format=tar.gz --prefix=flamesidecar-$(VERSION)/ \
		-o $(BUILD)/flamesidecar-$(VERSION).tar.gz HEAD

rpm: dist
	@command -v rpmbuild >/dev/null || { echo "rpm: rpmbuild is not installed (apt-get install rpm, or dnf install rpm-build)" >&2; exit 1; }
	rpmbuild -bb --define "_topdir $(abspath $(BUILD))/rpm" \
		--define "_sourcedir $(abspath $(BUILD))" \
		--define "version_override $(VERSION)" packaging/rpm/flamesidecar.spec

.PHONY: deb dist rpm

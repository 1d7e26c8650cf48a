# flamesidecar - plain Makefile. See README.md for the targets.
#
#   make              build everything into $(BUILD)/
#   make check        install missing Debian packages, build, run every test
#   make check-unit   build and run the C unit tests only (no containers)
#   make check-asan   the same suite with AddressSanitizer + UBSan (build-asan/)
#   make fuzz         build the libFuzzer targets (clang) into build-fuzz/
#   make fuzz-smoke   build them and run each briefly (FUZZ_SECONDS, default 20)
#   make install      honours DESTDIR and PREFIX
#   make demo         profile the sample JVM in a real container -> demo.svg

VERSION := 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
BUNDLEDIR ?= $(LIBDIR)/flamesidecar/bundle
HOOKSDIR ?= $(PREFIX)/share/containers/oci/hooks.d
# The precreate entry (JAVA_TOOL_OPTIONS for Podman) has a directory of its
# own: CRI-O and buildah refuse a hooks directory holding a stage they do
# not know, so it must not go where they look (docs/engines.md).
PRECREATE_HOOKSDIR ?= $(PREFIX)/share/flamesidecar/hooks-precreate.d
# Hooks.d entries that are not installed active: the poststop entry
# (immediate unregistering, one more hook process per container stop; without
# it the sidecar's verbs remove stale entries themselves). Enable by copying
# or linking it into the engine's hooks.d directory (docs/engines.md).
OPTIONAL_HOOKSDIR ?= $(PREFIX)/share/flamesidecar/hooks.d-optional

BUILD ?= build
STRIP ?= strip
SANITIZE ?=
CC ?= cc
JAVA_HOME ?= $(shell dirname $$(dirname $$(readlink -f $$(command -v javac 2>/dev/null || echo /usr/lib/jvm/default-java/bin/javac))))

WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes -Wstrict-prototypes \
	-Wno-unused-parameter -Wno-format-truncation -Werror
# _FORTIFY_SOURCE=3 needs gcc >= 12 and glibc >= 2.34 (Debian 12 has both);
# -U first so a distribution default of 2 does not warn about a redefinition.
HARDEN := -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=3 -fstack-protector-strong \
	-fstack-clash-protection -fcf-protection -fPIE
HARDEN_LD := -Wl,-z,relro,-z,now -Wl,-z,noexecstack
USER_LDFLAGS := $(LDFLAGS)
override CFLAGS := -std=gnu11 -O2 -g $(CFLAGS)
override CFLAGS += $(WARN) -D_GNU_SOURCE -DFS_VERSION='"$(VERSION)"' -MMD -MP
# The user's LDFLAGS come first and reach every link, static ones included.
override LDFLAGS += $(HARDEN_LD)
ifeq ($(SANITIZE),1)
  override CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  override LDFLAGS += -fsanitize=address,undefined
else
  override CFLAGS += $(HARDEN)
endif

LIBS := -lyajl -lseccomp -lcap -ldw -lelf -lprotobuf-c -lz -llzma -lstdc++
# The hook is linked statically so that nothing from the environment
# (LD_PRELOAD, LD_LIBRARY_PATH from an image or a runtime) can run code in it.
# The sidecar too: it runs as root, and a static start costs 0.35 ms of CPU
# against 1.6 ms of dynamic relocation (measured: docs/performance.md).
# The hook needs yajl only (of lib/, only jail.c uses libseccomp and libcap,
# and the hook does not link it).
ifeq ($(SANITIZE),1)
  DYN_LDFLAGS := $(LDFLAGS) -pie
  HOOK_LDFLAGS := $(DYN_LDFLAGS)
  HOOK_LIBS := -lyajl
  SIDECAR_LDFLAGS := $(DYN_LDFLAGS)
  SIDECAR_LIBS := $(LIBS)
else
  DYN_LDFLAGS := $(LDFLAGS) -pie
  HOOK_LDFLAGS := $(LDFLAGS) -static-pie
  HOOK_LIBS := -l:libyajl_s.a
  SIDECAR_LDFLAGS := $(LDFLAGS) -static-pie
  SIDECAR_LIBS := -l:libyajl_s.a -l:libseccomp.a -l:libcap.a -l:libdw.a -l:libelf.a \
	-l:libprotobuf-c.a -l:libz.a -l:liblzma.a -l:libbz2.a \
	-static-libstdc++ -lstdc++
endif

# Folders and who may include whom. Each folder's objects are compiled with
# only the include paths of the folders it may use, so a stray dependency
# (an engine including a verb's header, the graph reaching into the
# sampler) is a compile error, not a review comment.
#   lib/                 shared by the hook, the wrapper and the sidecar
#   sidecar/jvm/         finding JVMs, attach, sandbox, perf maps and JIT logs
#   sidecar/symbolize/   addresses -> frame names (kernel, ELF, JIT maps)
#   sidecar/hotspot/     a HotSpot JVM read from the host through its VMStructs
#   sidecar/jitmap/      a JVM's JIT map from any source: the agent, jcmd, its VMStructs
#   sidecar/fold/        folded-stack tables, perf script collapse, hot frames
#   sidecar/graph/       frame tree, SVG, palettes
#   sidecar/unwind/      the HotSpot-aware unwinder (stack copies -> callchains)
#   sidecar/profile/     the sampler and the record -> symbolize -> fold loop
#   sidecar/offcpu/      off-CPU and wall-clock profiles (thread states from /proc)
#   sidecar/export/      pprof and speedscope writers (from folded stacks)
#   sidecar/debuginfo/   separate debug info for native names (symbolize's hook)
#   sidecar/             the CLI: main, one cmd_<verb>.c per verb
SIDECAR_DIRS := jvm symbolize hotspot jitmap fold graph unwind profile export debuginfo offcpu
INC_lib := -Ilib
INC_hook := -Ilib -Ihook
INC_wrapper := -Ilib -Iwrapper
# One way down: jitmap -> hotspot -> symbolize -> jvm -> lib (jitmap/map.c
# attaches to a JVM, jvm/, or reads its code cache from the host, hotspot/).
INC_sidecar_jvm := -Ilib -Isidecar/jvm
INC_sidecar_symbolize := $(INC_sidecar_jvm) -Isidecar/symbolize
INC_sidecar_hotspot := $(INC_sidecar_symbolize) -Isidecar/hotspot
INC_sidecar_jitmap := $(INC_sidecar_hotspot) -Isidecar/jitmap
INC_sidecar_fold := -Ilib -Isidecar/fold
INC_sidecar_graph := -Ilib -Isidecar/graph
INC_sidecar_unwind := -Ilib -Isidecar/hotspot -Isidecar/symbolize -Isidecar/unwind
INC_sidecar_profile := $(INC_sidecar_jitmap) -Isidecar/fold -Isidecar/unwind -Isidecar/profile \
	-Isidecar/debuginfo
INC_sidecar_debuginfo := $(INC_sidecar_symbolize) -Isidecar/debuginfo
INC_sidecar_offcpu := $(INC_sidecar_profile) -Isidecar/offcpu
INC_sidecar_export := -Ilib -Isidecar/fold -Isidecar/export -I$(BUILD)/gen
INC_sidecar := -Ilib $(addprefix -Isidecar/,$(SIDECAR_DIRS)) -Isidecar
INC_ALL := $(INC_sidecar) -I$(BUILD)/gen -Ihook -Iwrapper -Itests/lib
# The include paths of the folder an object's source is in (tests: all).
dirkey = $(subst /,_,$(patsubst %/,%,$(dir $(patsubst $(BUILD)/obj/%,%,$(1)))))
inc_for = $(or $(INC_$(call dirkey,$(1))),$(INC_ALL))

LIB_SRC := $(wildcard lib/*.c)
HOOK_SRC := $(filter-out hook/main.c,$(wildcard hook/*.c))
SIDECAR_SRC := $(filter-out sidecar/main.c,$(wildcard sidecar/*.c $(SIDECAR_DIRS:%=sidecar/%/*.c)))
UNIT_SRC := $(wildcard tests/unit/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
LIB_OBJ := $(call obj,$(LIB_SRC))
HOOK_OBJ := $(call obj,$(HOOK_SRC))
SIDECAR_OBJ := $(call obj,$(SIDECAR_SRC)) $(BUILD)/gen/profile.pb-c.o
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%.t,$(UNIT_SRC))
# Test drivers run by the integration tests (not TAP): tests/tools/*.c.
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BIN := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRC))

PROGRAMS := $(BUILD)/flamehook $(BUILD)/flamesidecar $(BUILD)/flamesidecar-debuginfod
all: $(PROGRAMS) $(BUILD)/test/flamesidecar $(UNIT_BIN) $(TOOL_BIN) agent wrapper

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(call inc_for,$@) -c -o $@ $<

# The pprof encoder: C generated by protoc-c (protobuf-c-compiler) from our
# profile.proto, compiled against libprotobuf-c; generated code gets the
# same flags but its own include path.
$(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h: sidecar/export/profile.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen --proto_path=sidecar/export $<
$(BUILD)/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h
	$(CC) $(CFLAGS) -I$(BUILD)/gen -c -o $@ $<
$(call obj,sidecar/export/pprof.c) $(UNIT_BIN:$(BUILD)/tests/%.t=$(BUILD)/obj/tests/unit/%.o): $(BUILD)/gen/profile.pb-c.h

$(BUILD)/libfs.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^
$(BUILD)/libhook.a: $(HOOK_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^
$(BUILD)/libsidecar.a: $(SIDECAR_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/flamehook: $(BUILD)/obj/hook/main.o $(BUILD)/libhook.a $(BUILD)/libfs.a
	$(CC) $(HOOK_LDFLAGS) -o $@ $^ $(HOOK_LIBS)

$(BUILD)/flamesidecar: $(BUILD)/obj/sidecar/main.o $(BUILD)/libsidecar.a $(BUILD)/libfs.a
	$(CC) $(SIDECAR_LDFLAGS) -o $@ $^ $(SIDECAR_LIBS)

# Test hooks (FS_TEST_* variables) are compiled only with -DFS_TEST_BUILD,
# into a test variant of the sidecar that the tests needing them run
# ($(BUILD)/test/flamesidecar, FS_TEST_SIDECAR in tests/lib/containers.bash):
# the installed binary reads no FS_TEST_* variable (lint.bats checks it).
# Only the sources holding a hook are compiled twice.
TESTHOOK_SRC := sidecar/cmd_run.c sidecar/jvm/sandbox.c sidecar/hotspot/hsmap.c lib/procmem.c
TESTHOOK_OBJ := $(patsubst %.c,$(BUILD)/test/obj/%.o,$(TESTHOOK_SRC))
$(BUILD)/test/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DFS_TEST_BUILD $(call inc_for,$(BUILD)/obj/$*.o) -c -o $@ $<
# The variant's objects come before the archive, whose members of the same
# names are then never pulled in.
$(BUILD)/test/flamesidecar: $(BUILD)/obj/sidecar/main.o $(TESTHOOK_OBJ) $(BUILD)/libsidecar.a $(BUILD)/libfs.a
	$(CC) $(SIDECAR_LDFLAGS) -o $@ $^ $(SIDECAR_LIBS)
$(BUILD)/tests/test_sandbox.t: $(BUILD)/obj/tests/unit/test_sandbox.o $(BUILD)/obj/tests/lib/tap.o \
		$(BUILD)/test/obj/sidecar/jvm/sandbox.o $(BUILD)/libsidecar.a $(BUILD)/libhook.a $(BUILD)/libfs.a
	@mkdir -p $(dir $@)
	$(CC) $(DYN_LDFLAGS) -o $@ $^ $(LIBS)
-include $(shell find $(BUILD)/test/obj -name '*.d' 2>/dev/null)

# The debuginfod client (sidecar/debuginfo/dbgfetch.h): linked dynamically,
# against libdebuginfod only (Debian ships no static libdebuginfod).
$(BUILD)/flamesidecar-debuginfod: sidecar/debuginfo/helper/flamesidecar-debuginfod.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DYN_LDFLAGS) -o $@ $< -ldebuginfod

$(BUILD)/tests/%.t: $(BUILD)/obj/tests/unit/%.o $(BUILD)/obj/tests/lib/tap.o $(BUILD)/libsidecar.a $(BUILD)/libhook.a $(BUILD)/libfs.a
	@mkdir -p $(dir $@)
	$(CC) $(DYN_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/tools/%: $(BUILD)/obj/tests/tools/%.o $(BUILD)/libsidecar.a $(BUILD)/libfs.a
	@mkdir -p $(dir $@)
	$(CC) $(DYN_LDFLAGS) -o $@ $^ $(LIBS)

# The FUSE server of the tests (tests/lib/fusetest.c), in what mounts one.
FUSETEST_USERS := $(addprefix $(BUILD)/tests/,test_jailreap.t test_localfs.t \
	test_procmemfuse.t tools/fusestall test_perfmap.t)
$(FUSETEST_USERS): $(BUILD)/obj/tests/lib/fusetest.o

# The JVMTI agent and anything else with its own rules.
-include agent/agent.mk
agent::
# The runtime wrapper and packaging have their own rule files.
-include wrapper/wrapper.mk
-include packaging/packaging.mk
wrapper::

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- tests -----------------------------------------------------------------
# install-deps.sh asks dpkg which packages are missing and calls apt-get only
# for those, so on a machine that has them `check` never touches the network.
deps:
	@tests/install-deps.sh

check: deps
	$(MAKE) all
	BUILD=$(BUILD) tests/run-tests.sh

# The C unit tests alone: no containers, no root, no package installation.
check-unit: $(UNIT_BIN) wrapper
	BUILD=$(BUILD) FS_ASAN_SCOPE=unit tests/run-tests.sh

# FS_ASAN_SCOPE=unit runs only the C unit tests (CI uses it after `check`).
check-asan: deps
	$(MAKE) BUILD=build-asan SANITIZE=1 all
	BUILD=build-asan FS_SANITIZE=1 FS_ASAN_SCOPE=$(FS_ASAN_SCOPE) tests/run-tests.sh

# libFuzzer targets: tests/fuzz/fuzz_*.c, each linked with the library code.
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(FUZZ_SRC))
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -std=gnu11 -g -O1 -D_GNU_SOURCE -DFS_VERSION='"$(VERSION)"' $(INC_ALL) \
	-fsanitize=fuzzer $(FUZZ_SAN)
# The project's sources are compiled once (instrumented, without libFuzzer's
# main) into build-fuzz/libfuzz.a; each target is its own file linked to it.
FUZZ_OBJ := $(patsubst %.c,build-fuzz/obj/%.o,$(LIB_SRC) $(HOOK_SRC) $(SIDECAR_SRC)) \
	build-fuzz/obj/gen/profile.pb-c.o
build-fuzz/obj/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -I$(BUILD)/gen -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c -o $@ $<
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang -std=gnu11 -g -O1 -D_GNU_SOURCE -DFS_VERSION='"$(VERSION)"' $(INC_ALL) \
		-fsanitize=fuzzer-no-link $(FUZZ_SAN) -MMD -MP -c -o $@ $<
$(FUZZ_OBJ): | $(BUILD)/gen/profile.pb-c.h
build-fuzz/libfuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^
fuzz: $(FUZZ_BIN)
build-fuzz/%: tests/fuzz/%.c build-fuzz/libfuzz.a
	clang $(FUZZ_CFLAGS) -o $@ $< build-fuzz/libfuzz.a $(LIBS)
-include $(shell find build-fuzz/obj -name '*.d' 2>/dev/null)

# Every fuzz target built and run for a short time, so none can rot: CI
# runs this. FUZZ_SECONDS per target (a crash or leak fails the target).
FUZZ_SECONDS ?= 20
fuzz-smoke: fuzz
	tests/fuzz/smoke.sh $(FUZZ_SECONDS) build-fuzz/fuzz_*

# ---- install ---------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(BUNDLEDIR) $(DESTDIR)$(HOOKSDIR) $(DESTDIR)$(PRECREATE_HOOKSDIR) \
		$(DESTDIR)$(OPTIONAL_HOOKSDIR) \
		$(DESTDIR)$(SYSCONFDIR)/flamesidecar $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 0755 $(BUILD)/flamehook $(BUILD)/flamesidecar $(DESTDIR)$(BINDIR)/
	install -m 0755 $(BUILD)/flamesidecar-debuginfod $(DESTDIR)$(BINDIR)/
	if [ -f $(BUILD)/flamesidecar-runtime ]; then install -m 0755 $(BUILD)/flamesidecar-runtime $(DESTDIR)$(BINDIR)/; fi
	# The agent without its debug sections (symbols kept, for profiles): the
	# hook copies the bundle into every opted-in container at each start
	# (about 40 KiB instead of 150).
	if [ -f $(BUILD)/libflameagent.so ]; then install -m 0644 $(BUILD)/libflameagent.so $(DESTDIR)$(BUNDLEDIR)/ && \
		$(STRIP) --strip-debug $(DESTDIR)$(BUNDLEDIR)/libflameagent.so; fi
	for h in config/hooks.d/*.json.in; do \
		sed 's|@BINDIR@|$(BINDIR)|g' "$$h" > $(DESTDIR)$(HOOKSDIR)/$$(basename "$$h" .in); \
		chmod 0644 $(DESTDIR)$(HOOKSDIR)/$$(basename "$$h" .in); done
	for h in config/hooks-precreate.d/*.json.in; do \
		sed 's|@BINDIR@|$(BINDIR)|g' "$$h" > $(DESTDIR)$(PRECREATE_HOOKSDIR)/$$(basename "$$h" .in); \
		chmod 0644 $(DESTDIR)$(PRECREATE_HOOKSDIR)/$$(basename "$$h" .in); done
	for h in config/hooks.d-optional/*.json.in; do \
		sed 's|@BINDIR@|$(BINDIR)|g' "$$h" > $(DESTDIR)$(OPTIONAL_HOOKSDIR)/$$(basename "$$h" .in); \
		chmod 0644 $(DESTDIR)$(OPTIONAL_HOOKSDIR)/$$(basename "$$h" .in); done
	[ -e $(DESTDIR)$(SYSCONFDIR)/flamesidecar/config.json ] || \
		install -m 0644 config/config.json $(DESTDIR)$(SYSCONFDIR)/flamesidecar/config.json
	for m in docs/man/*.1; do [ -f "$$m" ] && install -m 0644 "$$m" $(DESTDIR)$(MANDIR)/man1/; done; true
	for m in docs/man/*.5; do [ -f "$$m" ] && install -m 0644 "$$m" $(DESTDIR)$(MANDIR)/man5/; done; true

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/flamehook $(DESTDIR)$(BINDIR)/flamesidecar \
		$(DESTDIR)$(BINDIR)/flamesidecar-debuginfod \
		$(DESTDIR)$(BINDIR)/flamesidecar-runtime \
		$(DESTDIR)$(BUNDLEDIR)/libflameagent.so $(DESTDIR)$(HOOKSDIR)/flamesidecar*.json \
		$(DESTDIR)$(PRECREATE_HOOKSDIR)/flamesidecar*.json $(DESTDIR)$(OPTIONAL_HOOKSDIR)/flamesidecar*.json
	-rmdir $(DESTDIR)$(PRECREATE_HOOKSDIR) $(DESTDIR)$(OPTIONAL_HOOKSDIR) $(DESTDIR)$(PREFIX)/share/flamesidecar 2>/dev/null
	for m in docs/man/*.1; do rm -f $(DESTDIR)$(MANDIR)/man1/$$(basename "$$m"); done
	for m in docs/man/*.5; do rm -f $(DESTDIR)$(MANDIR)/man5/$$(basename "$$m"); done
	-rmdir $(DESTDIR)$(BUNDLEDIR) $(DESTDIR)$(LIBDIR)/flamesidecar 2>/dev/null
	@echo "kept $(DESTDIR)$(SYSCONFDIR)/flamesidecar/config.json (your configuration)"

demo: deps
	$(MAKE) all
	tests/demo.sh

FORMAT_SRC = $(wildcard lib/*.[ch] hook/*.[ch] sidecar/*.[ch] sidecar/*/*.[ch] wrapper/*.[ch] \
	agent/*.[ch] tests/*/*.[ch] bench/*.[ch] sidecar/debuginfo/helper/*.c)
format-check:
	clang-format --dry-run --Werror $(FORMAT_SRC)

clean:
	rm -rf build build-asan build-fuzz

.PHONY: all agent wrapper deps check check-unit check-asan fuzz fuzz-smoke install uninstall demo format-check clean
.SECONDARY:

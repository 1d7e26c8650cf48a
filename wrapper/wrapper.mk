# wrapper/wrapper.mk - included by the top Makefile.
#
# flamesidecar-runtime, the OCI runtime wrapper for engines without hooks.d
# (containerd, Docker). Linked statically like the hook, for the same
# reason: an engine's environment (LD_PRELOAD, LD_LIBRARY_PATH) must not be
# able to run code in a program that runs as root on every container start.
# It uses lib/ for JSON and the config only, so yajl is its one library.
# Its unit test (tests/unit/test_wrapper.c) and fuzz target
# (tests/fuzz/fuzz_wrapper.c) link the wrapper's objects, not the sidecar's,
# so they have their own rules here.

WRAPPER_SRC := $(filter-out wrapper/main.c,$(wildcard wrapper/*.c))
WRAPPER_OBJ := $(call obj,$(WRAPPER_SRC))

ifeq ($(SANITIZE),1)
  WRAPPER_LDFLAGS := $(DYN_LDFLAGS)
  WRAPPER_LIBS := -lyajl
else
  WRAPPER_LDFLAGS := $(LDFLAGS) -static-pie
  WRAPPER_LIBS := -l:libyajl_s.a
endif

$(BUILD)/flamesidecar-runtime: $(BUILD)/obj/wrapper/main.o $(WRAPPER_OBJ) $(BUILD)/libfs.a
	$(CC) $(WRAPPER_LDFLAGS) -o $@ $^ $(WRAPPER_LIBS)

$(BUILD)/tests/test_wrapper.t: $(BUILD)/obj/tests/unit/test_wrapper.o $(WRAPPER_OBJ) \
		$(BUILD)/obj/tests/lib/tap.o $(BUILD)/libfs.a
	@mkdir -p $(dir $@)
	$(CC) $(DYN_LDFLAGS) -o $@ $^ -lyajl

wrapper:: $(BUILD)/flamesidecar-runtime $(BUILD)/tests/test_wrapper.t

# libFuzzer target for patch_json (`make fuzz`, with the project's others).
WRAPPER_FUZZ_OBJ = $(patsubst %.c,build-fuzz/obj/%.o,$(WRAPPER_SRC))
build-fuzz/fuzz_wrapper: tests/fuzz/fuzz_wrapper.c $(WRAPPER_FUZZ_OBJ) build-fuzz/libfuzz.a
	clang $(FUZZ_CFLAGS) -o $@ $< $(WRAPPER_FUZZ_OBJ) build-fuzz/libfuzz.a $(LIBS)

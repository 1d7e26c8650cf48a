# agent/agent.mk - included by the top Makefile.
#
# libflameagent.so, the JVMTI perf-map agent, is loaded into JVMs of any
# libc (glibc or musl, any version), so it is built with its own flags:
# plain C, no _FORTIFY_SOURCE (musl has no __*_chk), hidden visibility with
# only Agent_OnLoad/OnAttach/OnUnload exported, and agent/agentcompat.h
# forced in to keep every glibc symbol at the oldest version. It ignores
# SANITIZE: a sanitizer runtime cannot be loaded into a JVM by dlopen.
#
# Also here: the Java test workloads (tests/java) -> $(BUILD)/java.

AGENT_SRC := agent/flameagent.c agent/agentmap.c agent/mhintrinsic.c agent/debuginfo.c \
	agent/vmflag.c agent/selfmem.c lib/error.c lib/log.c \
	lib/textsafe.c
AGENT_HDR := agent/agentmap.h agent/mhintrinsic.h agent/debuginfo.h agent/vmflag.h agent/selfmem.h \
	agent/agentcompat.h lib/error.h lib/log.h lib/textsafe.h
AGENT_JNI_INC := -isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux
AGENT_CFLAGS := -std=gnu11 -O2 -g $(WARN) -D_GNU_SOURCE -U_FORTIFY_SOURCE \
	-fPIC -fvisibility=hidden -fstack-protector-strong -fstack-clash-protection \
	-fcf-protection -fno-plt \
	-include agent/agentcompat.h -Ilib -Iagent $(AGENT_JNI_INC)
AGENT_LDFLAGS := $(USER_LDFLAGS) $(HARDEN_LD) -shared -Wl,--no-undefined \
	-Wl,--as-needed -Wl,-soname,libflameagent.so

$(BUILD)/libflameagent.so: $(AGENT_SRC) $(AGENT_HDR) agent/agent.mk
	@mkdir -p $(dir $@)
	$(CC) $(AGENT_CFLAGS) $(AGENT_LDFLAGS) -o $@ $(AGENT_SRC)

ifneq ($(wildcard $(JAVA_HOME)/include/jni.h),)
agent:: $(BUILD)/libflameagent.so
else
$(warning agent: no $(JAVA_HOME)/include/jni.h, libflameagent.so is not built (install openjdk-17-jdk-headless or set JAVA_HOME))
endif

# Link check against musl: the same sources must build and link there.
AGENT_MUSL_CC := $(shell command -v musl-gcc 2>/dev/null)
AGENT_JNI_H := $(wildcard $(JAVA_HOME)/include/jni.h)
ifneq ($(AGENT_MUSL_CC),)
ifneq ($(AGENT_JNI_H),)
$(BUILD)/musl/libflameagent.so: $(AGENT_SRC) $(AGENT_HDR) agent/agent.mk
	@mkdir -p $(dir $@)
	$(AGENT_MUSL_CC) $(filter-out -fno-plt,$(AGENT_CFLAGS)) $(AGENT_LDFLAGS) -o $@ $(AGENT_SRC)

agent:: $(BUILD)/musl/libflameagent.so
endif
endif

# ---- Java test workloads ----------------------------------------------------
JAVA_SRC := $(wildcard tests/java/flametest/*.java)
JAVAC ?= $(JAVA_HOME)/bin/javac

$(BUILD)/java/.stamp: $(JAVA_SRC) agent/agent.mk
	@mkdir -p $(BUILD)/java
	$(JAVAC) --release 11 -g -d $(BUILD)/java $(JAVA_SRC)
	@touch $@

ifneq ($(JAVA_SRC),)
ifneq ($(wildcard $(JAVAC)),)
agent:: $(BUILD)/java/.stamp
else
$(warning agent: no $(JAVAC), the Java test workloads are not built)
endif
endif

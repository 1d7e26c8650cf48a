/* jvmflags.h - whether a JVM keeps frame pointers, decided from the
 * options it was started with, read from /proc (environment and command line). */
#ifndef FS_JVMFLAGS_H
#define FS_JVMFLAGS_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* Does pid run a JVM without -XX:+PreserveFramePointer? 1 yes (off, or
 * nothing said: the JVM's default is off), 0 no (on), -errno when /proc
 * cannot be read. Looks at
 * JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, the command line (up to the main
 * class) and _JAVA_OPTIONS, in that order; the last setting wins. */
int jvmflags_fp_missing(pid_t pid, struct fs_error *err);

/* The same decision on given texts (exposed for tests): cmdline is
 * NUL-separated (cmdline_len bytes); the others are space-separated or NULL. */
int jvmflags_decide(const char *tool_opts, const char *jdk_opts, const char *cmdline,
		    size_t cmdline_len, const char *underscore_opts);

/* The same decision on /proc/<pid>/cmdline and environ as read (both
 * NUL-separated and NUL-terminated; env may be NULL). Fuzzed. */
int jvmflags_decide_blocks(const char *cmd, size_t clen, const char *env, size_t elen);

#endif

/* jvmopts.h - how a JVM reads its options, at the word level: the one place
 * that decides whether a set of options turns a boolean -XX flag
 * (-XX:+PreserveFramePointer, -XX:+DebugNonSafepoints, ...) on or off. Shared by the sidecar (a
 * running JVM, from /proc) and by the wrapper and the hook (a container about to start, from its
 * OCI config).
 *
 * Contract: pure functions on caller-owned text, no allocation, no I/O;
 * every scan is bounded by its input. A "state" is -1 (nothing said), 0
 * (off) or 1 (on); each option that says something overwrites it, so the
 * last one wins, as in the JVM. */
#ifndef FS_JVMOPTS_H
#define FS_JVMOPTS_H

#include <stdbool.h>
#include <stddef.h>

#define JVMOPTS_FP_ON  "-XX:+PreserveFramePointer"
#define JVMOPTS_FP_OFF "-XX:-PreserveFramePointer"
/* Debug info at every pc of compiled code, not only at safepoints: what a
 * sampling profiler needs to name the method a pc in an inlined loop is in.
 * A diagnostic flag: it must follow -XX:+UnlockDiagnosticVMOptions. */
#define JVMOPTS_DNS_ON	 "-XX:+DebugNonSafepoints"
#define JVMOPTS_DNS_OFF	 "-XX:-DebugNonSafepoints"
#define JVMOPTS_DIAG_ON	 "-XX:+UnlockDiagnosticVMOptions"
#define JVMOPTS_DIAG_OFF "-XX:-UnlockDiagnosticVMOptions"
#define JVMOPTS_DNS_ADD	 JVMOPTS_DIAG_ON " " JVMOPTS_DNS_ON
#define JVMOPTS_WORD_MAX 48 /* longer words are never one of the flags */

/* One boolean flag: its "on" and "off" words (each shorter than
 * JVMOPTS_WORD_MAX). */
struct jvmopts_flag {
	const char *on, *off;
};

extern const struct jvmopts_flag jvmopts_fp, jvmopts_dns, jvmopts_diag;

/* The environment variables a JVM takes options from, in the order they
 * apply: JAVA_TOOL_OPTIONS (the VM, first), JDK_JAVA_OPTIONS (the java
 * launcher, before its command line), _JAVA_OPTIONS (the VM, last). */
#define JVMOPTS_ENV_TOOL       "JAVA_TOOL_OPTIONS"
#define JVMOPTS_ENV_JDK	       "JDK_JAVA_OPTIONS"
#define JVMOPTS_ENV_UNDERSCORE "_JAVA_OPTIONS"

/* Apply one option word (already unquoted) of len bytes to *state. The
 * functions without a flag argument are about jvmopts_fp. */
void jvmopts_word(const char *w, size_t len, int *state);
void jvmopts_flag_word(const struct jvmopts_flag *f, const char *w, size_t len, int *state);

/* Apply an options variable's text (words separated by white space; ' and
 * " group a word's part that holds spaces, as HotSpot splits
 * JAVA_TOOL_OPTIONS) to *state. Returns false when a quote is not closed:
 * the JVM refuses such a value, and nothing should be appended to it. */
bool jvmopts_text(const char *s, int *state);
bool jvmopts_flag_text(const struct jvmopts_flag *f, const char *s, int *state);

/* A java launcher's argument vector, one argument at a time: options end at
 * the main class, -jar, -m/--module; the value of -cp and its kind is
 * skipped. Start with a zeroed struct; argument 0 is the launcher itself. */
struct jvmopts_args {
	size_t n;  /* arguments seen */
	bool skip; /* the next argument is an option's value */
	bool done; /* past the options */
};

/* Feed one argument; returns false once the options have ended (later
 * arguments belong to the program and are not looked at). */
bool jvmopts_arg(struct jvmopts_args *it, const char *a, size_t len, int *state);
bool jvmopts_flag_arg(const struct jvmopts_flag *f, struct jvmopts_args *it, const char *a,
		      size_t len, int *state);

/* Is path's last component "java" (the launcher)? */
bool jvmopts_is_launcher(const char *path);

#endif

/* agentmap.h - the JVM-independent half of the flameagent JVMTI agent:
 * option parsing, symbol naming, perf map line formatting and the safe
 * opening of /tmp/perf-<pid>.map. Nothing here includes jvmti.h, so the
 * unit test (tests/unit/test_agentmap.c) can build it without a JDK.
 *
 * The perf map format (tools/perf/Documentation/jit-interface.txt):
 *     START SIZE symbolname\n
 * START and SIZE are hexadecimal without a 0x prefix; the name is the rest
 * of the line and may contain spaces. */
#ifndef FS_AGENTMAP_H
#define FS_AGENTMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* Longest symbol name written; longer names are cut (at a frame boundary
 * for inlined chains, see agentmap_join_frames). */
#define AGENTMAP_NAME_MAX 4000
/* A buffer never grows past this; one compiled method cannot need it. */
#define AGENTMAP_BUF_MAX (64u << 20)
/* Joins inlined frames, outermost first. stackcollapse-perf.pl splits a
 * symbol on "->" into frames and marks the inner ones with _[i]. */
#define AGENTMAP_FRAME_SEP "->"

enum agentmap_mode {
	AGENTMAP_MODE_DEFAULT = 0, /* oneshot when attached, continuous at startup */
	AGENTMAP_MODE_ONESHOT,
	AGENTMAP_MODE_CONTINUOUS,
};

enum agentmap_unfold {
	AGENTMAP_UNFOLD_ALL = 0, /* default: "outer->inlined->inner" per range */
	AGENTMAP_UNFOLD_NONE,	 /* nounfold: one line per compiled method */
	AGENTMAP_UNFOLD_SIMPLE,	 /* unfoldsimple: innermost frame per range */
	AGENTMAP_UNFOLD_IN,	 /* unfold: "inner in root" per range */
};

struct agentmap_options {
	enum agentmap_mode mode;
	enum agentmap_unfold unfold;
	bool dotted;	     /* java.lang.String.hashCode, not Ljava/lang/String;::hashCode */
	bool msig;	     /* append the method signature */
	bool sourcepos;	     /* append (File.java:line) */
	bool stop;	     /* stop a continuous session */
	bool verbose;	     /* report lines, bytes and time on the JVM's stderr */
	bool timed;	     /* continuous: the timed log instead of the perf map */
	unsigned ttl_s;	     /* timed: end the session by itself after this (0: never) */
	bool safepointsonly; /* at attach: leave -XX:-DebugNonSafepoints alone */
};

/* Parse a comma separated option string (NULL or "" = defaults). Unknown
 * options and file= are refused. 0 or -EINVAL with err filled. */
int agentmap_parse_options(const char *s, struct agentmap_options *o, struct fs_error *err);

/* Class name from a JVM class signature ("Ljava/lang/String;", "[I"):
 * dotted -> "java.lang.String", otherwise the signature unchanged. Always
 * NUL-terminates out (outlen > 0). Returns the length written. */
size_t agentmap_class_name(const char *sig, bool dotted, char *out, size_t outlen);

/* Method signature from a descriptor ("(JLjava/lang/String;[I)V"): dotted
 * -> "(long, java.lang.String, int[])", otherwise the descriptor itself.
 * Returns the length written (out always NUL-terminated). */
size_t agentmap_method_sig(const char *desc, bool dotted, char *out, size_t outlen);

/* One frame's name: class + ("." if dotted else "::") + method
 * [+ signature] [+ "(File:line)" when file is not NULL; line < 0 omits it]. */
size_t agentmap_frame_name(const struct agentmap_options *o, const char *class_sig,
			   const char *method, const char *desc, const char *file, int line,
			   char *out, size_t outlen);

/* Join frames[0..n) (outermost first) with AGENTMAP_FRAME_SEP into out.
 * When they do not fit, the innermost frames that fit are kept behind a
 * leading "...->" so the hot (innermost) part stays visible. */
size_t agentmap_join_frames(const char *const *frames, size_t n, char *out, size_t outlen);

/* A growable output buffer of complete map lines. */
struct agentmap_buf {
	char *data;
	size_t len, cap;
};

void agentmap_buf_free(struct agentmap_buf *b);

/* Append "START SIZE name\n". Control characters in name become '?', an
 * empty name becomes "[unknown]"; size 0 appends nothing. 0 or -ENOMEM /
 * -E2BIG (buffer would pass AGENTMAP_BUF_MAX). */
int agentmap_append_line(struct agentmap_buf *b, uint64_t start, uint64_t size, const char *name);

/* The ranges of one compiled method with inlining information (pcs are
 * the JVMTI PCStackInfo pcs, i.e. HotSpot's PcDesc pcs, ascending).
 * HotSpot finds the scope of a pc the way nmethod::pc_desc_near does:
 * record i owns the addresses in (pcs[i-1], pcs[i]], so record i's line
 * is [pcs[i-1] + 1, pcs[i] + 1), the first record's starts at the code
 * start, and code after the last record is root_name. A return address R
 * is a record's pc: looked up at R - 1 (flamesidecar, pprof) or at R
 * (perf) it names its own call site; a leaf pc P names what JFR names
 * (pc_desc_near(P + 1)) when looked up at P + 1. Records outside the code
 * or not ascending are skipped; neighbouring ranges with equal names are
 * merged. */
int agentmap_append_ranges(struct agentmap_buf *b, uint64_t start, uint64_t size,
			   const uint64_t *pcs, const char *const *names, size_t n,
			   const char *root_name);

/* The timed log of a profiling window (option "timed", continuous mode):
 * /tmp/flamesidecar-<pid>.jit, removed by the agent on "stop". Lines:
 *     @T START SIZE MID\n   code loaded at T (the perf map lines of that
 *                           code follow: "START SIZE name\n")
 *     -T START MID\n        the code at START of method MID was unloaded
 *     !s\n                  (after an "@" line) that code's debug info is
 *                           safepoint-only: compiled before
 *                           -XX:+DebugNonSafepoints was on (debuginfo.h)
 *     !nonsafepoints TEXT\n (first line) the flag's state, debuginfo_status
 * T is CLOCK_MONOTONIC in decimal ns (0: it existed when the session
 * started), START, SIZE and MID (the jmethodID, 0 for stubs) hex. Each
 * event is one write(2); at most AGENTMAP_TIMED_MAX bytes are written. */
#define AGENTMAP_TIMED_NAME "flamesidecar-%d.jit"
#define AGENTMAP_TIMED_MAX  (64u << 20)

/* Append the "@" and "-" lines. 0 or -ENOMEM / -E2BIG. */
int agentmap_append_load(struct agentmap_buf *b, uint64_t t, uint64_t start, uint64_t size,
			 uint64_t mid);
int agentmap_append_unload(struct agentmap_buf *b, uint64_t t, uint64_t start, uint64_t mid);
/* Append the "!s" line, or the "!nonsafepoints" status line (control
 * characters in text become '?'). 0 or -ENOMEM / -E2BIG. */
int agentmap_append_safepoints_only(struct agentmap_buf *b);
int agentmap_append_status(struct agentmap_buf *b, const char *text);

/* Open dir/name (name from AGENTMAP_TIMED_NAME or the perf map's) with the
 * checks of agentmap_open. */
int agentmap_open_name(const char *dir, const char *name, bool truncate, struct fs_error *err);

/* Open the map of pid for appending: O_WRONLY|O_CREAT|O_APPEND|O_NOFOLLOW|
 * O_CLOEXEC, mode 0644. Refuses (-EPERM) anything but a regular file owned
 * by our euid with one link; truncates it when truncate is set. The dir
 * argument is "/tmp" in the agent (tests use their own). Returns the fd or
 * -errno with err filled. */
int agentmap_open(const char *dir, pid_t pid, bool truncate, struct fs_error *err);

/* write() all of buf to fd (retrying on EINTR and short writes). 0 or -errno. */
int agentmap_write_all(int fd, const char *buf, size_t len);

#endif

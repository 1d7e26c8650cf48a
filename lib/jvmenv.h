/* jvmenv.h - frame pointers for the JVM of a container that is about to be
 * created: from its OCI config (process.env, process.args) decide whether to
 * append -XX:+PreserveFramePointer to JAVA_TOOL_OPTIONS, and write the
 * "process" object with that done. Used by the runtime wrapper (config.json
 * in the bundle) and by the hook's precreate stage (the config Podman and
 * CRI-O pass on stdin).
 *
 * Contract: the config is container input. Anything odd in what we would
 * touch (an env entry that is not NAME=VALUE, a JVM options variable given
 * twice or larger than JVMENV_VALUE_MAX, an unclosed quote in
 * JAVA_TOOL_OPTIONS, a non-string where strings belong) is refused with a
 * reason and nothing is changed. The flag is never added twice and never
 * against the user's -XX:-PreserveFramePointer. Library code: never prints. */
#ifndef FS_JVMENV_H
#define FS_JVMENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <yajl/yajl_tree.h>

#include "error.h"
#include "cleanup.h"

/* A container annotated with this, value "false", keeps its environment
 * (e.g. a JVM older than 8u60, which refuses the unknown flag). */
#define JVMENV_ANNOTATION "flamesidecar.io/preserve-frame-pointer"
/* ... and with this one, value "false", gets no -XX:+DebugNonSafepoints. */
#define JVMENV_DNS_ANNOTATION "flamesidecar.io/debug-nonsafepoints"

#define JVMENV_VALUE_MAX   (64 * 1024) /* bytes of one JVM options variable */
#define JVMENV_ENTRIES_MAX 4096	       /* process.env entries */
#define JVMENV_NO_INDEX	   ((size_t)-1)

enum jvmenv_verdict {
	JVMENV_ADD = 0,	   /* append the flag: entry holds the new env entry */
	JVMENV_ALREADY_ON, /* the options already turn it on (source says where) */
	JVMENV_USER_OFF,   /* the user's options turn it off (source says where) */
	JVMENV_NO_PROCESS, /* the config has no "process": nothing to do */
	JVMENV_NOT_ASKED,  /* the caller did not want this flag */
};

/* The flags to add: -XX:+PreserveFramePointer, and -XX:+DebugNonSafepoints
 * (with -XX:+UnlockDiagnosticVMOptions before it). Each is decided on its
 * own, the same way: added when no option says anything about it; left
 * alone when one turns it on or off. DebugNonSafepoints is also left alone
 * when an option says -XX:-UnlockDiagnosticVMOptions. */
struct jvmenv_want {
	bool fp, dns;
};

struct jvmenv_plan {
	enum jvmenv_verdict verdict;
	const char *source; /* the setting that decided ALREADY_ON / USER_OFF */
	yajl_val process;   /* the root's "process" object */
	size_t tool_index;  /* JAVA_TOOL_OPTIONS's index in process.env, or JVMENV_NO_INDEX */
	char *entry;	    /* ADD: "JAVA_TOOL_OPTIONS=<old> -XX:+PreserveFramePointer" */
	/* DebugNonSafepoints, decided like verdict/source; entry then ends with
	 * JVMOPTS_DNS_ADD. entry is set when either verdict is JVMENV_ADD. */
	enum jvmenv_verdict dns_verdict;
	const char *dns_source;
};

/* Decide for the parsed config root. 0 with p filled, or -EINVAL/-E2BIG
 * (hostile input, reason in err) or -ENOMEM. Free with jvmenv_plan_free
 * in every case. */
int jvmenv_plan(yajl_val root, struct jvmenv_plan *p, struct fs_error *err);
/* The same for the flags in w (jvmenv_plan: frame pointers only). */
int jvmenv_plan_want(yajl_val root, const struct jvmenv_want *w, struct jvmenv_plan *p,
		     struct fs_error *err);
void jvmenv_plan_free(struct jvmenv_plan *p);
FS_DEFINE_CLEANUP_VALUE(struct jvmenv_plan, jvmenv_plan_free)
#define cleanup_jvmenv_plan __attribute__((cleanup(jvmenv_plan_free_cleanup)))

/* Write the new value of the root's "process" (p->entry set):
 * every member as it was, env with the entry replaced in place or appended
 * (an "env" member added at the end when there was none). */
void jvmenv_write_process(FILE *f, const struct jvmenv_plan *p);

/* The whole document root with "process" replaced as above. */
void jvmenv_write_config(FILE *f, yajl_val root, const struct jvmenv_plan *p);

/* A one-line description of the plan for a log ("added ...", "left alone:
 * ..."). */
void jvmenv_describe(const struct jvmenv_plan *p, char *buf, size_t len);

#endif

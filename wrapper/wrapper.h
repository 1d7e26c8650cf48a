/* wrapper.h - flamesidecar-runtime, an OCI runtime wrapper.
 *
 * Engines that have no hooks.d (containerd, Docker) call it in place of
 * runc. On `create` and `run` it adds flamehook to the bundle's config.json
 * when the container opted in, and -XX:+PreserveFramePointer to its
 * JAVA_TOOL_OPTIONS so that its JVM keeps frame pointers, then execs the
 * real runtime with the same arguments. On `delete <id>` it removes the
 * container's registry entry (delete.c), so no poststop hook process runs.
 * Every other verb is exec'd straight through. Whatever goes wrong while
 * patching is logged and the real runtime runs anyway.
 */
#ifndef FS_WRAPPER_H
#define FS_WRAPPER_H

#include <limits.h>
#include <stddef.h>

#include "config.h"
#include "error.h"
#include "log.h"

#define WRAPPER_BUNDLE_CONFIG_MAX (4 * 1024 * 1024) /* bytes of config.json we read */
#define WRAPPER_JSON_DEPTH	  64
#define WRAPPER_HOOK_TIMEOUT	  5 /* seconds, per hook entry */
#define WRAPPER_HOOK_ENV	  "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
#define WRAPPER_DEFAULT_PATH	  "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define WRAPPER_CONFIG_ENV	  "FLAMESIDECAR_CONFIG"
/* Our own first argument(s), taken out before the runtime runs: a runtime
 * registered with runtimeArgs ["--opt-in"] opts in every container started
 * with it (`docker run --runtime flamesidecar`), as GPU runtimes do. */
#define WRAPPER_OPT_IN "--opt-in"
/* In the container's process.env, opts that one container in. */
#define WRAPPER_ENABLE_ENV "FLAMESIDECAR_ENABLE"

enum wrapper_verb {
	WRAPPER_VERB_OTHER = 0, /* passed straight through */
	WRAPPER_VERB_CREATE,
	WRAPPER_VERB_RUN,
	WRAPPER_VERB_DELETE, /* unregisters, then (or around) the runtime: delete.c */
};

/* What the wrapper needs from a runtime command line. Pointers point into
 * argv. */
struct wrapper_args {
	enum wrapper_verb verb;
	int verb_index;	    /* argv index of the verb, 0 when none */
	const char *bundle; /* --bundle/-b value, NULL = the cwd */
	const char *id;	    /* container id, NULL when absent */
	const char *log;    /* global --log FILE, NULL when absent */
	int log_json;	    /* global --log-format json */
	int unknown_option; /* an option we could not classify was seen */
	int detach;	    /* run -d/--detach */
};

/* args.c: classify a runc/crun command line (argv[0] is the program).
 * Accepts -opt and --opt, "--opt value" and "--opt=value", as Go's flag
 * package does. Never fails: an unknown option sets unknown_option (the
 * bundle may then be wrong, so the caller does not patch). */
void args_parse(int argc, char **argv, struct wrapper_args *a);

/* What to add, and when. */
struct patch_opts {
	const char *hook_path;	 /* absolute path of flamehook */
	const char *config_path; /* passed as --config FILE; NULL = the hook's default */
	enum config_enable enable;
	int preserve_fp; /* add -XX:+PreserveFramePointer to JAVA_TOOL_OPTIONS */
	int dns;	 /* ... and -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints */
	/* Opt in without the annotation (the wrapper's --opt-in; patch_json
	 * also sets it for FLAMESIDECAR_ENABLE=1|true in process.env): the
	 * hook entries then carry --opt-in, which flamehook honours unless
	 * the configuration says "never". */
	int opt_in;
	/* Add a poststop entry too: a foreground `run`, whose container no
	 * later `delete` through this wrapper will remove from the registry.
	 * Otherwise delete.c does it, without a hook process. */
	int poststop;
};

enum patch_result {
	PATCH_NOT_OPTED_IN = 0, /* left alone */
	PATCH_ALREADY,		/* flamehook and the flag (or a reason not to) already there */
	PATCH_ADDED,		/* out holds the new document */
};

/* What an opted-in patch did, for the log. */
struct patch_report {
	int hooks_added; /* our hook entries were added */
	int fp_added;	 /* JAVA_TOOL_OPTIONS got -XX:+PreserveFramePointer */
	int dns_added;	 /* ... and -XX:+DebugNonSafepoints */
	int fp_refused;	 /* the env was hostile or odd: left alone, fp_note says why */
	char fp_note[320];
};

/* patch.c: given config.json text, decide, and when the container opted
 * in produce the document with our hooks added (createRuntime; poststart
 * only when the flamesidecar.io/profile annotation asks for a triggered
 * profile; poststop only with o->poststop; each appended after any
 * existing entry of its stage) and, with preserve_fp,
 * -XX:+PreserveFramePointer (with dns, -XX:+DebugNonSafepoints unlocked)
 * appended to process.env's JAVA_TOOL_OPTIONS
 * (lib/jvmenv.h: not twice, not against the user's -XX:-, not into an env
 * that looks hostile; rep says what and why). Everything else keeps its
 * value, key order, duplicates and number spelling. Returns a patch_result
 * >= 0 (out is malloc'd only for PATCH_ADDED) or -errno. */
int patch_json(const char *in, size_t len, const struct patch_opts *o, char **out, size_t *out_len,
	       struct patch_report *rep, struct fs_error *err);

/* Read <bundle>/config.json (bounded, a regular file, not a symlink), patch
 * it and replace it atomically (temporary file in the bundle, same mode and
 * owner, fsync, rename). Not opted in or already present: the file is not
 * touched. Returns a patch_result or -errno. */
int patch_bundle(const char *bundle, const struct patch_opts *o, struct patch_report *rep,
		 struct fs_error *err);

/* runtime.c */
struct wrapper_config {
	struct fs_config fs;
	char runtime_path[PATH_MAX]; /* "runtime_path" key; "" = search PATH for runc */
	char config_path[PATH_MAX];  /* absolute path of a non-default config, "" = default */
	int loaded;		     /* 1 when the config could be read */
};

/* Load the config named by $FLAMESIDECAR_CONFIG or the default file.
 * On error cfg holds the defaults (and runtime_path = "") and err says why. */
int runtime_config_load(struct wrapper_config *cfg, struct fs_error *err);

/* Resolve the real runtime to exec: cfg->runtime_path, else "runc" in
 * $PATH (or WRAPPER_DEFAULT_PATH). Never this wrapper itself. */
int runtime_find(const struct wrapper_config *cfg, char *out, size_t len, struct fs_error *err);

/* The flamehook next to this executable (/proc/self/exe's directory),
 * checked to be an executable regular file. */
int runtime_hook_path(char *out, size_t len, struct fs_error *err);

/* Log one line (lib/log.h, at the config's log_level) to the config's log
 * file, warnings and errors also to syslog and (when the runtime was given
 * --log) to the runtime's log in its format. Never to stderr:
 * on `create` that is the container's own stderr. */
void runtime_log(const struct wrapper_config *cfg, const struct wrapper_args *a,
		 enum fs_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* args.c: take leading WRAPPER_OPT_IN arguments out of argv (keeping the
 * NULL at the end); returns 1 when there was one. */
int wrapper_take_opt_in(int *argc, char **argv);

/* delete.c: on `delete <id>`, remove id's registry entry when its
 * process is dead (then returns -1: the caller execs the runtime as for
 * any verb), or else run the runtime as a child and remove the entry if it
 * exited 0 (returns the runtime's exit status). No entry, a bad id, an
 * unknown option or no usable config: -1 and nothing touched. */
int delete_unregister(const struct wrapper_config *cfg, int cfg_ok, const struct wrapper_args *a,
		      const char *rt, char **argv);

/* main.c */
int wrapper_main(int argc, char **argv);

#endif

/* main.c - flamesidecar-runtime: patch on create/run, then exec the real
 * runtime with the very same arguments (see wrapper.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wrapper.h"

#define WRAPPER_EXIT_NO_RUNTIME 127

static void wrapper_usage(FILE *out)
{
	fprintf(
	    out,
	    "flamesidecar-runtime %s - OCI runtime wrapper of flamesidecar\n\n"
	    "Usage: flamesidecar-runtime [RUNTIME OPTIONS] VERB [VERB OPTIONS] [ID]\n\n"
	    "Takes the place of runc for engines without hooks.d (containerd, Docker).\n"
	    "On `create` and `run`, when the bundle's config.json is annotated\n"
	    "flamesidecar.io/enable=true (or the config says \"enable\": \"always\"), adds\n"
	    "flamehook to its createRuntime hooks (poststart too when the\n"
	    "flamesidecar.io/profile annotation asks for a triggered profile; poststop\n"
	    "too for a foreground `run`) and\n"
	    "-XX:+PreserveFramePointer and -XX:+DebugNonSafepoints (unlocked) to its\n"
	    "JAVA_TOOL_OPTIONS (unless the config says \"preserve_frame_pointer\" or\n"
	    "\"debug_nonsafepoints\": false); so it does\n"
	    "for every container when the first argument is --opt-in (Docker's\n"
	    "runtimeArgs), and for containers with FLAMESIDECAR_ENABLE=1 in their\n"
	    "environment. On `delete ID` it removes ID's registry entry when the\n"
	    "container's process is gone (or, with --force, once the runtime deleted it).\n"
	    "Then, and for every other verb, execs the real runtime with the same\n"
	    "arguments. A problem while patching is logged and the runtime runs anyway.\n\n"
	    "flamehook is the one next to this program. The real runtime is the config's\n"
	    "\"runtime_path\", else runc from $PATH. The config is $%s, else\n"
	    "%s. Messages go to the config's \"log_file\", syslog, and the\n"
	    "runtime's --log file; never to stderr (the container's on create).\n\n"
	    "Examples:\n"
	    "  flamesidecar-runtime --root /run/fs create --bundle /b --pid-file /b/pid c1\n"
	    "  containerd: "
	    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
	    "              BinaryName = \"/usr/bin/flamesidecar-runtime\"\n"
	    "  docker:     dockerd --add-runtime flamesidecar=/usr/bin/flamesidecar-runtime\n"
	    "              docker run --runtime flamesidecar --annotation "
	    "flamesidecar.io/enable=true ...\n"
	    "  any docker: daemon.json \"runtimes\": {\"flamesidecar\": {\"path\": \"...\",\n"
	    "              \"runtimeArgs\": [\"--opt-in\"]}}; docker run --runtime flamesidecar\n\n"
	    "The real runtime's own help follows.\n\n",
	    FS_VERSION, WRAPPER_CONFIG_ENV, CONFIG_DEFAULT_PATH);
	fflush(out);
}

static void wrapper_patch(const struct wrapper_config *cfg, const struct wrapper_args *a,
			  int cfg_ok, const char *cfg_error, int opt_in)
{
	struct fs_error err;
	const char *bundle = a->bundle ? a->bundle : ".";
	if (!cfg_ok) {
		runtime_log(cfg, a, FS_LOG_WARN,
			    "configuration unusable, container not patched: %s", cfg_error);
		return;
	}
	if (cfg->fs.enable == CONFIG_ENABLE_NEVER)
		return;
	if (a->unknown_option) {
		runtime_log(cfg, a, FS_LOG_WARN,
			    "an option this wrapper does not know was given; bundle %s not patched",
			    bundle);
		return;
	}
	char hook[PATH_MAX];
	if (runtime_hook_path(hook, sizeof(hook), &err) < 0) {
		runtime_log(cfg, a, FS_LOG_WARN, "not patched: %s", err.msg);
		return;
	}
	struct patch_opts o = {
	    .hook_path = hook,
	    .config_path = cfg->config_path[0] ? cfg->config_path : NULL,
	    .enable = cfg->fs.enable,
	    .preserve_fp = cfg->fs.preserve_frame_pointer,
	    .dns = cfg->fs.debug_nonsafepoints,
	    .opt_in = opt_in,
	    /* A foreground `run` deletes its container itself when it ends:
	     * no `delete` through us will unregister it. */
	    .poststop = a->verb == WRAPPER_VERB_RUN && !a->detach,
	};
	struct patch_report rep;
	int r = patch_bundle(a->bundle, &o, &rep, &err);
	if (r < 0) {
		runtime_log(cfg, a, FS_LOG_WARN, "not patched: %s", err.msg);
		return;
	}
	if (r == PATCH_NOT_OPTED_IN)
		return;
	if (r == PATCH_ADDED && rep.hooks_added)
		runtime_log(cfg, a, FS_LOG_INFO, "added %s to %s/config.json", hook, bundle);
	else
		runtime_log(cfg, a, FS_LOG_INFO, "flamehook already in %s/config.json", bundle);
	runtime_log(cfg, a, rep.fp_refused ? FS_LOG_WARN : FS_LOG_INFO, "%s", rep.fp_note);
}

int wrapper_main(int argc, char **argv)
{
	struct wrapper_args a;
	struct wrapper_config cfg;
	struct fs_error err, cfg_err;
	int opt_in = wrapper_take_opt_in(&argc, argv);
	args_parse(argc, argv, &a);
	int cfg_ok = runtime_config_load(&cfg, &cfg_err) == 0;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		wrapper_usage(stdout);

	char rt[PATH_MAX];
	if (runtime_find(&cfg, rt, sizeof(rt), &err) < 0) {
		runtime_log(&cfg, &a, FS_LOG_ERROR, "cannot run the container runtime: %s",
			    err.msg);
		fprintf(stderr, "flamesidecar-runtime: cannot run the container runtime: %s\n",
			err.msg);
		return WRAPPER_EXIT_NO_RUNTIME;
	}
	if (a.verb == WRAPPER_VERB_CREATE || a.verb == WRAPPER_VERB_RUN)
		wrapper_patch(&cfg, &a, cfg_ok, cfg_err.msg, opt_in);

	argv[0] = rt;
	if (a.verb == WRAPPER_VERB_DELETE) {
		int status = delete_unregister(&cfg, cfg_ok, &a, rt, argv);
		if (status >= 0)
			return status;
	}
	execv(rt, argv);
	int e = errno;
	runtime_log(&cfg, &a, FS_LOG_ERROR, "executing %s: %s", rt, strerror(e));
	fprintf(stderr, "flamesidecar-runtime: executing %s: %s\n", rt, strerror(e));
	return WRAPPER_EXIT_NO_RUNTIME;
}

int main(int argc, char **argv)
{
	return wrapper_main(argc, argv);
}

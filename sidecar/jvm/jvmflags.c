/* jvmflags.c - does a JVM run with -XX:+PreserveFramePointer: see jvmflags.h */
#include "jvmflags.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "jvmopts.h"
#include "proc.h"

#define JVMFLAGS_ENV_MAX (1u << 20)

int jvmflags_decide(const char *tool_opts, const char *jdk_opts, const char *cmdline,
		    size_t cmdline_len, const char *underscore_opts)
{
	int state = -1;
	jvmopts_text(tool_opts, &state);
	jvmopts_text(jdk_opts, &state);
	struct jvmopts_args it = {0};
	for (size_t i = 0; i < cmdline_len;) {
		const char *a = cmdline + i;
		size_t len = strnlen(a, cmdline_len - i);
		i += len + 1;
		if (!jvmopts_arg(&it, a, len, &state))
			break;
	}
	jvmopts_text(underscore_opts, &state);
	return state == 0 || state == -1 ? 1 : 0;
}

/* The value of NAME= in a NUL-separated environment block, or NULL. */
static const char *jvmflags_env_get(const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < len;) {
		const char *v = env + i;
		size_t l = strnlen(v, len - i);
		if (l > nl && !memcmp(v, name, nl) && v[nl] == '=')
			return v + nl + 1;
		i += l + 1;
	}
	return NULL;
}

int jvmflags_fp_missing(pid_t pid, struct fs_error *err)
{
	char path[64];
	cleanup_free char *cmd = NULL, *env = NULL;
	size_t clen = 0, elen = 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	int r = proc_read_file(path, JVMFLAGS_ENV_MAX, &cmd, &clen, err);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if (proc_read_file(path, JVMFLAGS_ENV_MAX, &env, &elen, NULL) < 0)
		elen = 0; /* unreadable or huge: decide on the command line alone */
	return jvmflags_decide_blocks(cmd, clen, env, elen);
}

int jvmflags_decide_blocks(const char *cmd, size_t clen, const char *env, size_t elen)
{
	return jvmflags_decide(env ? jvmflags_env_get(env, elen, JVMOPTS_ENV_TOOL) : NULL,
			       env ? jvmflags_env_get(env, elen, JVMOPTS_ENV_JDK) : NULL, cmd, clen,
			       env ? jvmflags_env_get(env, elen, JVMOPTS_ENV_UNDERSCORE) : NULL);
}

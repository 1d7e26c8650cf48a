/* jvmflags.c - does a JVM run with -XX:+PreserveFramePointer: see jvmflags.h */
#include "jvmflags.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "proc.h"

#define JVMFLAGS_ENV_MAX (1u << 20)

/* Apply one option word to *state (1 on, 0 off, -1 unknown). */
static void jvmflags_word(const char *w, size_t len, int *state)
{
	static const char on[] = "-XX:+PreserveFramePointer", off[] = "-XX:-PreserveFramePointer";
	if (len == sizeof(on) - 1 && !memcmp(w, on, len))
		*state = 1;
	else if (len == sizeof(off) - 1 && !memcmp(w, off, len))
		*state = 0;
}

static void jvmflags_words(const char *s, int *state)
{
	while (s && *s) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		const char *w = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '\n')
			s++;
		if (s > w)
			jvmflags_word(w, (size_t)(s - w), state);
	}
}

/* Launcher options whose value is the next argument. */
static int jvmflags_takes_value(const char *a)
{
	static const char *const opts[] = {
	    "-cp",
	    "-classpath",
	    "--class-path",
	    "--module-path",
	    "-p",
	    "--upgrade-module-path",
	    "--add-modules",
	    "--limit-modules",
	    "--add-exports",
	    "--add-opens",
	    "--add-reads",
	    "--patch-module",
	    "--enable-native-access",
	};
	for (size_t i = 0; i < FS_ARRAY_SIZE(opts); i++)
		if (!strcmp(a, opts[i]))
			return 1;
	return 0;
}

int jvmflags_decide(const char *tool_opts, const char *jdk_opts, const char *cmdline,
		    size_t cmdline_len, const char *underscore_opts)
{
	int state = -1;
	jvmflags_words(tool_opts, &state);
	jvmflags_words(jdk_opts, &state);
	/* argv[0] is the launcher; options end at the main class or -jar FILE */
	int skip = 1; /* argv[0], or the value of the previous option */
	for (size_t i = 0; i < cmdline_len;) {
		const char *a = cmdline + i;
		size_t len = strnlen(a, cmdline_len - i);
		i += len + 1;
		if (skip) {
			skip = 0;
			continue;
		}
		if (a[0] != '-' || !strcmp(a, "-jar") || !strcmp(a, "-m") || !strcmp(a, "--module"))
			break;
		if (jvmflags_takes_value(a))
			skip = 1;
		else
			jvmflags_word(a, len, &state);
	}
	jvmflags_words(underscore_opts, &state);
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
	return jvmflags_decide(env ? jvmflags_env_get(env, elen, "JAVA_TOOL_OPTIONS") : NULL,
			       env ? jvmflags_env_get(env, elen, "JDK_JAVA_OPTIONS") : NULL, cmd,
			       clen, env ? jvmflags_env_get(env, elen, "_JAVA_OPTIONS") : NULL);
}

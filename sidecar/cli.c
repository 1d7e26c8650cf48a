/* cli.c - see cli.h: the one errno -> exit code mapping and the one way a
 * verb reports a failure. */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "textsafe.h"

const char *cli_config_path;

int cli_exit_code(int code)
{
	switch (code < 0 ? -code : code) {
	case 0: return FS_EXIT_OK;
	case EPERM:
	case EACCES: return FS_EXIT_PERM;
	case ENOENT: /* not registered */
	case EEXIST: /* an id prefix that matches more than one container */
	case ESRCH:  /* the process is gone */
	case ENOEXEC: /* the process is not a JVM */ return FS_EXIT_NOTFOUND;
	default: return FS_EXIT_FAIL;
	}
}

/* Every message may hold text from a container (a comm, a path, a frame
 * name): formatted, then escaped (textsafe), then printed. */
static void cli_vprint(const char *verb, const char *what, const char *fmt, va_list ap)
{
	char msg[4096], safe[4 * sizeof(msg)];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "flamesidecar %s: %s%s\n", verb, what,
		textsafe(msg, safe, sizeof(safe), 0));
}

int cli_parse(const struct opt_verb *v, int argc, char **argv, void *args, int *first)
{
	struct fs_error err = {0};
	int r = opt_parse(v, argc, argv, args, first, &err);
	if (r == 1) {
		opt_help(v, stdout);
		return FS_EXIT_OK;
	}
	if (r < 0)
		return cli_usage_error(v->name, "%s", err.msg);
	return CLI_GO_ON;
}

int cli_fail(const char *verb, const struct fs_error *err)
{
	return cli_failf(verb, cli_exit_code(err->code), "%s", err->msg);
}

int cli_fail_file(const char *verb, const struct fs_error *err)
{
	return cli_failf(verb, FS_EXIT_FAIL, "%s", err->msg);
}

int cli_failf(const char *verb, int exit_code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_vprint(verb, "", fmt, ap);
	va_end(ap);
	return exit_code;
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		cli_vprint(verb, "", fmt, ap);
		va_end(ap);
	}
	fprintf(stderr, "Try 'flamesidecar %s --help'.\n", verb);
	return FS_EXIT_USAGE;
}

void cli_warn(const char *verb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cli_vprint(verb, "warning: ", fmt, ap);
	va_end(ap);
}

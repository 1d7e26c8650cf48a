/* test_cli.c - the one errno -> exit code mapping and the failure printers
 * every verb uses (sidecar/cli.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "error.h"
#include "tap.h"

/* Run fn with stderr sent to a file; return what it printed in buf. */
static int capture(char *buf, size_t len, int (*fn)(void))
{
	FILE *tmp = tmpfile();
	if (!tmp)
		return -1;
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	int rc = fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	size_t n = fread(buf, 1, len - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return rc;
}

static int fail_perm(void)
{
	struct fs_error err;
	fs_error_set(&err, EACCES, "opening %s", "/run/x");
	return cli_fail("run", &err);
}

static int fail_file(void)
{
	struct fs_error err;
	fs_error_set(&err, ENOENT, "cannot open '%s'", "in.folded");
	return cli_fail_file("render", &err);
}

static int usage_plain(void)
{
	return cli_usage_error("top", NULL);
}

static int usage_msg(void)
{
	return cli_usage_error("map", "--pid '%s' is not a pid", "x");
}

int main(void)
{
	tap_plan(17);
	is_int(cli_exit_code(0), FS_EXIT_OK, "0 is success");
	is_int(cli_exit_code(-EPERM), FS_EXIT_PERM, "EPERM: not permitted");
	is_int(cli_exit_code(EACCES), FS_EXIT_PERM, "EACCES (either sign): not permitted");
	is_int(cli_exit_code(-ENOENT), FS_EXIT_NOTFOUND, "ENOENT: not registered");
	is_int(cli_exit_code(-EEXIST), FS_EXIT_NOTFOUND, "EEXIST: ambiguous prefix, not found");
	is_int(cli_exit_code(-ESRCH), FS_EXIT_NOTFOUND, "ESRCH: process gone");
	is_int(cli_exit_code(-ENOEXEC), FS_EXIT_NOTFOUND, "ENOEXEC: not a JVM");
	is_int(cli_exit_code(-EIO), FS_EXIT_FAIL, "anything else: failed");
	is_int(cli_exit_code(-ENOMEM), FS_EXIT_FAIL, "ENOMEM: failed");

	char out[1024];
	is_int(capture(out, sizeof(out), fail_perm), FS_EXIT_PERM, "cli_fail maps err->code");
	ok(!strncmp(out, "flamesidecar run: opening /run/x: ", 34) && strchr(out, '\n'),
	   "cli_fail prints 'flamesidecar VERB: message'");
	is_int(capture(out, sizeof(out), fail_file), FS_EXIT_FAIL,
	       "a local file that is missing is a failure, not 'not found'");
	ok(strstr(out, "flamesidecar render: cannot open 'in.folded'") == out, "file message");
	is_int(capture(out, sizeof(out), usage_plain), FS_EXIT_USAGE, "usage error exits 2");
	is_str(out, "Try 'flamesidecar top --help'.\n", "usage error without a message");
	is_int(capture(out, sizeof(out), usage_msg), FS_EXIT_USAGE, "usage error with a message");
	is_str(out, "flamesidecar map: --pid 'x' is not a pid\nTry 'flamesidecar map --help'.\n",
	       "usage error message then the hint");
	return tap_done();
}

/* cli.h - the flamesidecar verbs. Each verb lives in its own file
 * (sidecar/cmd_<verb>.c) and defines
 *     extern const struct opt_verb cmd_<verb>_opts;   its option table (opt.h)
 *     int cmd_<verb>(int argc, char **argv);
 * where argv[0] is the verb name; it parses its options with cli_parse
 * (which handles --help: usage with an EXAMPLES block, exit 0) and returns
 * one of the exit codes below. Only the verb layer prints: the cmd_*.c
 * files and the helpers they share (common.c, cli.c), and a failure one
 * way: through cli_fail* / cli_usage_error below, which write
 * "flamesidecar VERB: what failed" on stderr and return the exit code.
 * Errors about the container or its processes go through cli_exit_code
 * (cli_fail), so that, for example, a process gone mid-window exits 3.
 */
#ifndef FS_CLI_H
#define FS_CLI_H

#include "error.h"
#include "opt.h"

enum fs_exit {
	FS_EXIT_OK = 0,
	FS_EXIT_FAIL = 1,     /* the work failed (message on stderr) */
	FS_EXIT_USAGE = 2,    /* bad command line */
	FS_EXIT_NOTFOUND = 3, /* container or process not found / not registered */
	FS_EXIT_PERM = 4,     /* not permitted (need root / capability) */
	FS_EXIT_INTERRUPTED = 130,
};

int cmd_list(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_map(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_convert(int argc, char **argv);

extern const struct opt_verb cmd_run_opts, cmd_top_opts, cmd_map_opts, cmd_list_opts, cmd_gc_opts,
    cmd_collapse_opts, cmd_render_opts, cmd_diff_opts, cmd_convert_opts;

/* Parse a verb's command line by its table into args (opt_parse). Returns
 * CLI_GO_ON with *first the index of its first operand; else the exit
 * code, after printing: FS_EXIT_OK for --help (the usage on stdout),
 * FS_EXIT_USAGE for a bad command line (the line naming the option). */
#define CLI_GO_ON (-1)
int cli_parse(const struct opt_verb *v, int argc, char **argv, void *args, int *first);

/* The one errno -> exit code mapping (sign ignored), for errors about the
 * container or its processes: EPERM/EACCES -> FS_EXIT_PERM; ENOENT (not
 * registered), EEXIST (ambiguous id prefix), ESRCH (process gone), ENOEXEC
 * (not a JVM) -> FS_EXIT_NOTFOUND; 0 -> FS_EXIT_OK; else FS_EXIT_FAIL. */
int cli_exit_code(int code);

/* Print "flamesidecar VERB: <err->msg>" on stderr and return
 * cli_exit_code(err->code). */
int cli_fail(const char *verb, const struct fs_error *err);
/* The same for a local file the user named (input, -o): always
 * FS_EXIT_FAIL, since exit codes 3 and 4 are about the container. */
int cli_fail_file(const char *verb, const struct fs_error *err);
/* Print "flamesidecar VERB: <formatted>" and return exit_code. */
int cli_failf(const char *verb, int exit_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Print "flamesidecar VERB: <formatted>" (unless fmt is NULL) and
 * "Try 'flamesidecar VERB --help'."; return FS_EXIT_USAGE. */
int cli_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "flamesidecar VERB: warning: <formatted>" (the work goes on). */
void cli_warn(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Global options parsed by main() before the verb. */
extern const char *cli_config_path; /* --config FILE, or NULL for the default */

#endif

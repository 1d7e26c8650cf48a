/* cli.h - the flamesidecar verbs. Each verb lives in its own file
 * (sidecar/<verb>.c) and defines
 *     int cmd_<verb>(int argc, char **argv);
 * where argv[0] is the verb name; it parses its own options with
 * getopt_long, handles --help (usage with an EXAMPLES block, exit 0) and
 * returns one of the exit codes below. Only verbs print and exit. */
#ifndef FS_CLI_H
#define FS_CLI_H

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

/* Global options parsed by main() before the verb. */
extern const char *cli_config_path; /* --config FILE, or NULL for the default */

#endif

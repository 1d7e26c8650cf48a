/* cmd_collapse.c - `flamesidecar collapse`: perf script text -> folded
 * stacks (collapse.h does the work). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "collapse.h"
#include "common.h"

struct collapse_cli {
	bool quiet;
	unsigned table_mib;
	const char *output;
};

struct collapse_args {
	struct collapse_opts opts;
	struct collapse_cli cli;
};

#define CA(field) offsetof(struct collapse_args, field)
/* the default in --max-stack-table's help */
_Static_assert(BUDGET_STACK_TABLE_MIB_DEFAULT == 256, "say the new default in the help");

/* -a, --all */
static int collapse_set_all(void *args, const char *arg, struct fs_error *err)
{
	struct collapse_args *a = args;
	a->opts.annotate_kernel = a->opts.annotate_jit = true;
	return 0;
}

/* --inline, --context: stackcollapse-perf.pl's, not ours */
static int collapse_set_inline(void *args, const char *arg, struct fs_error *err)
{
	return fs_error_set(err, 0,
			    "--inline/--context (addr2line on every frame) are not supported; "
			    "record with `perf script --inline` instead, its inlined frames are "
			    "collapsed as usual");
}

static const struct opt collapse_opts_table[] = {
    {.name = "pid",
     .key = 'p',
     .help = "append the PID to the process name (\"java-4242\")",
     .kind = OPT_BOOL,
     .off = CA(opts.include_pid)},
    {.name = "tid",
     .key = 't',
     .help = "append PID and TID (\"java-4242/4250\")",
     .kind = OPT_BOOL,
     .off = CA(opts.include_tid)},
    {.name = "kernel",
     .key = 'k',
     .help = "annotate kernel frames with _[k]",
     .kind = OPT_BOOL,
     .off = CA(opts.annotate_kernel)},
    {.name = "jit",
     .key = 'j',
     .help = "annotate JIT frames (/tmp/perf-PID.map) with _[j]",
     .kind = OPT_BOOL,
     .off = CA(opts.annotate_jit)},
    {.name = "all",
     .key = 'a',
     .help = "both annotations (--kernel --jit)",
     .kind = OPT_CALL,
     .set = collapse_set_all},
    {.name = "addrs",
     .help = "show raw addresses for unknown symbols: [lib.so <7f12ab>]",
     .kind = OPT_BOOL,
     .off = CA(opts.include_addrs)},
    {.name = "event-filter",
     .key = 'e',
     .arg = "EVENT",
     .help = "keep samples of EVENT only (default: the first event type in the input, e.g. "
	     "cpu-clock)",
     .kind = OPT_STRING,
     .off = CA(opts.event_filter)},
    {.name = "max-stack-table",
     .arg = "MIB",
     .more = "Past it, the samples of new stacks are counted in one line per process name, "
	     "with a warning.",
     .help = "memory for distinct stacks (default 256, {lo} to {hi}); past it new stacks "
	     "count as \"comm;" BUDGET_DROPPED_FRAME "\"",
     .kind = OPT_UINT,
     .off = CA(cli.table_mib),
     .lo = BUDGET_STACK_TABLE_MIB_MIN,
     .hi = BUDGET_STACK_TABLE_MIB_MAX},
    {.name = "output",
     .key = 'o',
     .arg = "FILE",
     .help = "write to FILE instead of stdout",
     .kind = OPT_STRING,
     .off = CA(cli.output)},
    {.name = "quiet",
     .key = 'q',
     .help = "no warnings on stderr",
     .kind = OPT_BOOL,
     .off = CA(cli.quiet)},
    {.name = "inline",
     .help = "",
     .kind = OPT_CALL,
     .set = collapse_set_inline,
     .flags = OPT_HIDDEN},
    {.name = "context",
     .help = "",
     .kind = OPT_CALL,
     .set = collapse_set_inline,
     .flags = OPT_HIDDEN},
};
static const struct opt_group collapse_group = OPT_GROUP(NULL, collapse_opts_table);
static const struct opt_use collapse_uses[] = {{&collapse_group, 0}};

const struct opt_verb cmd_collapse_opts = {
    .name = "collapse",
    .summary = "perf script text -> folded stacks (stackcollapse-perf.pl)",
    .synopsis = "[OPTIONS] [FILE...]",
    .intro = "Read `perf script` text (FILEs, or stdin when none or '-') and print folded\n"
	     "stacks, one \"frame;frame;frame count\" line per distinct stack, sorted; the\n"
	     "same lines FlameGraph's stackcollapse-perf.pl prints for the same options.\n",
    .outro = "Long options also work with one dash (-pid, -all), as with the perl script.\n"
	     "Samples are weighted by their period when perf script prints one.\n"
	     "stackcollapse-perf.pl's --inline/--context (addr2line) are not supported:\n"
	     "use `perf script --inline`, whose inlined frames are collapsed as usual.\n"
	     "\n"
	     "EXAMPLES\n"
	     "  perf record -F 99 -a -g -- sleep 30\n"
	     "  perf script | flamesidecar collapse > out.folded\n"
	     "  flamesidecar collapse --pid --all perf.txt | flamesidecar render > out.svg\n"
	     "  flamesidecar collapse --event-filter=cycles -o cycles.folded a.txt b.txt\n"
	     "\n"
	     "Exit status: 0 ok, 1 an input could not be read or the output written,\n"
	     "2 bad command line.\n",
    .uses = OPT_USES(collapse_uses),
    .long_only = 1,
};

static int collapse_open_input(const char *path, const char **name)
{
	if (!strcmp(path, "-")) {
		*name = "stdin";
		return dup(STDIN_FILENO);
	}
	*name = path;
	return open(path, O_RDONLY | O_CLOEXEC);
}

static void collapse_warn(const struct collapse *c, const struct collapse_cli *cli,
			  const char *unrec_file, uint64_t unrec_line)
{
	struct collapse_stats st;
	collapse_get_stats(c, &st);
	if (cli->quiet)
		return;
	if (st.first_filtered)
		fprintf(
		    stderr,
		    "flamesidecar collapse: kept only '%s' events (the first type in the input); "
		    "skipped %llu samples of other types such as '%s' (choose with "
		    "--event-filter)\n",
		    st.event, (unsigned long long)st.filtered, st.first_filtered);
	if (st.unrecognized)
		cli_warn("collapse",
			 "ignored %llu unrecognized lines (the first is line %llu of %s); is this "
			 "`perf script` output?",
			 (unsigned long long)st.unrecognized, (unsigned long long)unrec_line,
			 unrec_file);
	if (st.dropped)
		cli_warn("collapse",
			 "the stack table is full (--max-stack-table %u MiB): %llu samples of new "
			 "stacks are counted as \"" BUDGET_DROPPED_FRAME "\" under their process",
			 cli->table_mib, (unsigned long long)st.dropped);
	if (st.oversized)
		cli_warn("collapse",
			 "cut %llu stacks longer than %u bytes at the root end (the frame "
			 "\"" BUDGET_TRUNCATED_FRAME "\" stands for what was cut)",
			 (unsigned long long)st.oversized, FOLD_STACK_MAX);
	if (!st.samples && st.lines && !st.filtered)
		cli_warn("collapse",
			 "no samples found in %llu lines; record with `perf record -g` and pass "
			 "the output of `perf script`",
			 (unsigned long long)st.lines);
}

/* Collapse each file in turn. The exit code. */
static int collapse_read(struct collapse *c, char **files, int nfiles, const char **unrec_file,
			 uint64_t *unrec_line)
{
	struct fs_error err = {0};
	for (int i = 0; i < nfiles; i++) {
		const char *name;
		struct collapse_stats before, after;
		collapse_get_stats(c, &before);
		cleanup_close int fd = collapse_open_input(files[i], &name);
		if (fd < 0)
			return cli_failf("collapse", FS_EXIT_FAIL,
					 "cannot open %s: %s; check the path", name,
					 strerror(errno));
		if (collapse_fd(c, fd, name, &err) < 0)
			return cli_fail_file("collapse", &err);
		collapse_get_stats(c, &after);
		if (!*unrec_file && after.unrecognized) {
			*unrec_file = name;
			*unrec_line = after.first_unrecognized - before.lines;
		}
	}
	return FS_EXIT_OK;
}

/* The folded stacks to -o or stdout. The exit code. */
static int collapse_write(struct fold *fold, const char *output)
{
	FILE *out = stdout;
	if (output && !(out = fopen(output, "we")))
		return cli_failf("collapse", FS_EXIT_FAIL, "cannot create %s: %s", output,
				 strerror(errno));
	int r = fold_write(fold, out);
	if (out != stdout && fclose(out) == EOF && r == 0)
		r = errno ? -errno : -EIO;
	if (r < 0)
		return cli_failf("collapse", FS_EXIT_FAIL, "writing %s: %s",
				 output ? output : "stdout", strerror(-r));
	return FS_EXIT_OK;
}

int cmd_collapse(int argc, char **argv)
{
	struct collapse_args a = {.cli = {.table_mib = BUDGET_STACK_TABLE_MIB_DEFAULT}};
	int first;
	int rc = cli_parse(&cmd_collapse_opts, argc, argv, &a, &first);
	if (rc != CLI_GO_ON)
		return rc;
	struct fold *fold = fold_new();
	if (fold)
		fold_set_budget(fold, (size_t)a.cli.table_mib << 20);
	struct collapse *c = fold ? collapse_new(&a.opts, fold) : NULL;
	if (!c) {
		fold_free(fold);
		return cli_failf("collapse", FS_EXIT_FAIL, "out of memory");
	}
	static char stdin_arg[] = "-";
	char *stdin_only[] = {stdin_arg};
	const char *unrec_file = NULL;
	uint64_t unrec_line = 0;
	if (first < argc)
		rc = collapse_read(c, argv + first, argc - first, &unrec_file, &unrec_line);
	else
		rc = collapse_read(c, stdin_only, 1, &unrec_file, &unrec_line);
	if (rc == FS_EXIT_OK) {
		rc = collapse_write(fold, a.cli.output);
		collapse_warn(c, &a.cli, unrec_file ? unrec_file : "the input", unrec_line);
	}
	collapse_free(c);
	fold_free(fold);
	return rc;
}

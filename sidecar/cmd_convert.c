/* cmd_convert.c - `flamesidecar convert`: a folded profile (ours, or
 * stackcollapse-perf.pl's) -> pprof and/or speedscope (export/). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "common.h"
#include "export_cli.h"
#include "export.h"

struct convert_args {
	const char *pprof, *speedscope, *title, *input;
	unsigned frequency;
	int process_root;
};

#define CVA(field) offsetof(struct convert_args, field)

static const struct opt convert_opts_table[] = {
    {.name = "pprof",
     .arg = "FILE",
     .help = "write a gzip-compressed pprof profile (- for stdout)",
     .kind = OPT_STRING,
     .off = CVA(pprof)},
    {.name = "speedscope",
     .arg = "FILE",
     .help = "write a speedscope JSON file (- for stdout)",
     .kind = OPT_STRING,
     .off = CVA(speedscope)},
    {.name = "frequency",
     .key = 'F',
     .arg = "HZ",
     .help = "the sampling frequency the counts were taken at, for pprof's cpu time per "
	     "sample (default 99, {lo} to {hi})",
     .kind = OPT_UINT,
     .off = CVA(frequency),
     .lo = 1,
     .hi = 1000000000},
    {.name = "title",
     .arg = "TEXT",
     .help = "the profile's name (speedscope)",
     .kind = OPT_STRING,
     .off = CVA(title)},
    {.name = "process-root",
     .help = "the first frame of each stack is the process name (stackcollapse-perf.pl's "
	     "default output and ours): a \"process\" label, one speedscope profile each",
     .kind = OPT_FLAG,
     .off = CVA(process_root)},
};
static const struct opt_group convert_group = OPT_GROUP(NULL, convert_opts_table);
static const struct opt_use convert_uses[] = {{&convert_group, 0}};

static int convert_check(void *args, struct fs_error *err)
{
	const struct convert_args *a = args;
	if (!a->pprof && !a->speedscope)
		return fs_error_set(err, 0,
				    "nothing to write: give --pprof FILE and/or --speedscope FILE");
	if (a->pprof && a->speedscope && !strcmp(a->pprof, "-") && !strcmp(a->speedscope, "-"))
		return fs_error_set(
		    err, 0, "only one output can be standard output (--pprof, --speedscope)");
	return 0;
}

const struct opt_verb cmd_convert_opts = {
    .name = "convert",
    .summary = "folded stacks -> pprof and speedscope profiles",
    .synopsis = "[OPTIONS] [FILE]",
    .intro = "Turn folded stacks (\"frame;frame;frame count\" lines, as written by\n"
	     "`flamesidecar run`, `flamesidecar collapse` or stackcollapse-perf.pl) into a\n"
	     "pprof profile (go tool pprof, Pyroscope, Parca) and/or a speedscope file.\n"
	     "FILE defaults to standard input. Frame kinds marked in the names (_[k]\n"
	     "kernel, _[j] JIT, _[1] C1, _[0] interpreted, _[i] inlined, [lib.so]) are\n"
	     "kept the way each format can (see docs/export.md).\n",
    .outro = "Examples:\n"
	     "  flamesidecar convert --pprof cpu.pb.gz cpu.folded && go tool pprof -top cpu.pb.gz\n"
	     "  perf script | stackcollapse-perf.pl | flamesidecar convert --process-root \\\n"
	     "      --speedscope cpu.speedscope.json\n"
	     "  flamesidecar convert -F 499 --pprof old.pb.gz --speedscope old.json old.folded\n\n"
	     "Exit codes: 0 ok, 1 failed (unreadable input, no stacks), 2 usage.\n",
    .uses = OPT_USES(convert_uses),
    .check = convert_check,
};

/* Open the input (a file, or stdin unless it is a terminal). Prints what
 * failed and returns an exit code, or 0. */
static int convert_open(const char *input, FILE **in)
{
	*in = stdin;
	if (strcmp(input, "-")) {
		if (!(*in = fopen(input, "re")))
			return cli_failf("convert", FS_EXIT_FAIL, "cannot open '%s': %s", input,
					 strerror(errno));
	} else if (isatty(STDIN_FILENO)) {
		return cli_usage_error("convert",
				       "no input: give a folded file or pipe folded stacks in");
	}
	return 0;
}

int cmd_convert(int argc, char **argv)
{
	struct convert_args a = {0};
	int first;
	int rc = cli_parse(&cmd_convert_opts, argc, argv, &a, &first);
	if (rc != CLI_GO_ON)
		return rc;
	if (argc - first > 1)
		return cli_usage_error("convert", "expected at most one input file");
	a.input = first < argc ? argv[first] : "-";
	FILE *in = NULL;
	if ((rc = convert_open(a.input, &in)))
		return rc;
	struct fs_error err = {0};
	struct export *x = export_new();
	int r = x ? 0 : fs_error_set(&err, ENOMEM, "converting");
	if (r == 0 && (r = export_read_folded(x, in, &err)) < 0)
		fs_error_wrap(&err, "%s", a.input);
	else if (r == 0 && !x->total) {
		fs_error_set(&err, 0,
			     "%s: no stacks with samples found; is this folded output "
			     "(\"frame;frame count\")?",
			     a.input);
		r = -EINVAL;
	}
	if (in != stdin)
		fclose(in);
	if (r == 0) {
		x->period_ns = 1000000000ull / (a.frequency ? a.frequency : 99);
		x->root_is_process = a.process_root;
		if (a.title && export_set_name(x, a.title) < 0)
			r = fs_error_set(&err, ENOMEM, "converting");
	}
	if (r == 0 && a.pprof)
		r = export_cli_write_pprof(x, a.pprof, &err);
	if (r == 0 && a.speedscope)
		r = export_cli_write_speedscope(x, a.speedscope, &err);
	export_free(x);
	return r < 0 ? cli_fail_file("convert", &err) : FS_EXIT_OK;
}

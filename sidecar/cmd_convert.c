/* cmd_convert.c - `flamesidecar convert`: a folded profile (ours, or
 * stackcollapse-perf.pl's) -> pprof and/or speedscope (export/). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "common.h"
#include "export_cli.h"
#include "export.h"

static void convert_usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: flamesidecar convert [OPTIONS] [FILE]\n\n"
	    "Turn folded stacks (\"frame;frame;frame count\" lines, as written by\n"
	    "`flamesidecar run`, `flamesidecar collapse` or stackcollapse-perf.pl) into a\n"
	    "pprof profile (go tool pprof, Pyroscope, Parca) and/or a speedscope file.\n"
	    "FILE defaults to standard input. Frame kinds marked in the names (_[k]\n"
	    "kernel, _[j] JIT, _[1] C1, _[0] interpreted, _[i] inlined, [lib.so]) are\n"
	    "kept the way each format can (see docs/export.md).\n\n"
	    "Options:\n"
	    "      --pprof FILE        write a gzip-compressed pprof profile (- for stdout)\n"
	    "      --speedscope FILE   write a speedscope JSON file (- for stdout)\n"
	    "  -F, --frequency HZ      the sampling frequency the counts were taken at,\n"
	    "                          for pprof's cpu time per sample (default 99)\n"
	    "      --title TEXT        the profile's name (speedscope)\n"
	    "      --process-root      the first frame of each stack is the process name\n"
	    "                          (stackcollapse-perf.pl's default output and ours):\n"
	    "                          a \"process\" label, one speedscope profile each\n"
	    "  -h, --help              this text\n\n"
	    "Examples:\n"
	    "  flamesidecar convert --pprof cpu.pb.gz cpu.folded && go tool pprof -top cpu.pb.gz\n"
	    "  perf script | stackcollapse-perf.pl | flamesidecar convert --process-root \\\n"
	    "      --speedscope cpu.speedscope.json\n"
	    "  flamesidecar convert -F 499 --pprof old.pb.gz --speedscope old.json old.folded\n\n"
	    "Exit codes: 0 ok, 1 failed (unreadable input, no stacks), 2 usage.\n");
}

enum {
	CONVERT_OPT_PPROF = 0x300,
	CONVERT_OPT_SPEEDSCOPE,
	CONVERT_OPT_TITLE,
	CONVERT_OPT_PROCESS_ROOT,
};

struct convert_args {
	const char *pprof, *speedscope, *title, *input;
	unsigned frequency;
	int process_root;
	int help; /* --help: print the usage, nothing else */
};

static int convert_parse(int argc, char **argv, struct convert_args *a)
{
	static const struct option longopts[] = {
	    {"pprof", required_argument, NULL, CONVERT_OPT_PPROF},
	    {"speedscope", required_argument, NULL, CONVERT_OPT_SPEEDSCOPE},
	    {"frequency", required_argument, NULL, 'F'},
	    {"title", required_argument, NULL, CONVERT_OPT_TITLE},
	    {"process-root", no_argument, NULL, CONVERT_OPT_PROCESS_ROOT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "F:h", longopts, NULL)) != -1) {
		switch (c) {
		case CONVERT_OPT_PPROF: a->pprof = optarg; break;
		case CONVERT_OPT_SPEEDSCOPE: a->speedscope = optarg; break;
		case CONVERT_OPT_TITLE: a->title = optarg; break;
		case CONVERT_OPT_PROCESS_ROOT: a->process_root = 1; break;
		case 'F':
			if (common_parse_uint("convert", "--frequency", optarg, 1, 1000000000,
					      &a->frequency) < 0)
				return FS_EXIT_USAGE;
			break;
		case 'h': a->help = 1; return 0;
		default: return cli_usage_error("convert", NULL);
		}
	}
	if (argc - optind > 1)
		return cli_usage_error("convert", "expected at most one input file");
	if (!a->pprof && !a->speedscope)
		return cli_usage_error(
		    "convert", "nothing to write: give --pprof FILE and/or --speedscope FILE");
	if (a->pprof && a->speedscope && !strcmp(a->pprof, "-") && !strcmp(a->speedscope, "-"))
		return cli_usage_error("convert", "only one output can be standard output");
	a->input = optind < argc ? argv[optind] : "-";
	return 0;
}

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
	int rc = convert_parse(argc, argv, &a);
	if (rc)
		return rc;
	if (a.help) {
		convert_usage(stdout);
		return FS_EXIT_OK;
	}
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

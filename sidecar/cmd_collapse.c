/* cmd_collapse.c - `flamesidecar collapse`: perf script text -> folded
 * stacks (collapse.h does the work). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "collapse.h"
#include "common.h"

static void collapse_usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: flamesidecar collapse [OPTIONS] [FILE...]\n"
	    "\n"
	    "Read `perf script` text (FILEs, or stdin when none or '-') and print folded\n"
	    "stacks, one \"frame;frame;frame count\" line per distinct stack, sorted; the\n"
	    "same lines FlameGraph's stackcollapse-perf.pl prints for the same options.\n"
	    "\n"
	    "Options:\n"
	    "  -p, --pid               append the PID to the process name (\"java-4242\")\n"
	    "  -t, --tid               append PID and TID (\"java-4242/4250\")\n"
	    "  -k, --kernel            annotate kernel frames with _[k]\n"
	    "  -j, --jit               annotate JIT frames (/tmp/perf-PID.map) with _[j]\n"
	    "  -a, --all               both annotations (--kernel --jit)\n"
	    "      --addrs             show raw addresses for unknown symbols: [lib.so <7f12ab>]\n"
	    "  -e, --event-filter=EVENT  keep samples of EVENT only (default: the first\n"
	    "                          event type in the input, e.g. cpu-clock)\n"
	    "      --max-stack-table=MIB  memory for distinct stacks (default %u); past it\n"
	    "                          new stacks count as \"comm;" BUDGET_DROPPED_FRAME "\"\n"
	    "  -o, --output=FILE       write to FILE instead of stdout\n"
	    "  -q, --quiet             no warnings on stderr\n"
	    "  -h, --help              this text\n"
	    "\n"
	    "Long options also work with one dash (-pid, -all), as with the perl script.\n"
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
	    BUDGET_STACK_TABLE_MIB_DEFAULT);
}

struct collapse_cli {
	bool quiet;
	unsigned table_mib;
	const char *output;
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

int cmd_collapse(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"pid", no_argument, NULL, 'p'},
	    {"tid", no_argument, NULL, 't'},
	    {"kernel", no_argument, NULL, 'k'},
	    {"jit", no_argument, NULL, 'j'},
	    {"all", no_argument, NULL, 'a'},
	    {"addrs", no_argument, NULL, 'A'},
	    {"event-filter", required_argument, NULL, 'e'},
	    {"output", required_argument, NULL, 'o'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"inline", no_argument, NULL, 'I'},
	    {"context", no_argument, NULL, 'I'},
	    {"max-stack-table", required_argument, NULL, 'M'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct collapse_opts opts = {0};
	struct collapse_cli cli = {.table_mib = BUDGET_STACK_TABLE_MIB_DEFAULT};
	int ch;

	optind = 1;
	while ((ch = getopt_long_only(argc, argv, "ptkjae:o:qh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p': opts.include_pid = true; break;
		case 't': opts.include_tid = true; break;
		case 'k': opts.annotate_kernel = true; break;
		case 'j': opts.annotate_jit = true; break;
		case 'a': opts.annotate_kernel = opts.annotate_jit = true; break;
		case 'A': opts.include_addrs = true; break;
		case 'e': opts.event_filter = optarg; break;
		case 'o': cli.output = optarg; break;
		case 'q': cli.quiet = true; break;
		case 'M':
			if (common_parse_uint("collapse", "--max-stack-table", optarg,
					      BUDGET_STACK_TABLE_MIB_MIN,
					      BUDGET_STACK_TABLE_MIB_MAX, &cli.table_mib) < 0)
				return FS_EXIT_USAGE;
			break;
		case 'I':
			return cli_usage_error(
			    "collapse",
			    "--inline/--context (addr2line on every frame) are not "
			    "supported; record with `perf script --inline` instead, its "
			    "inlined frames are collapsed as usual");
		case 'h': collapse_usage(stdout); return FS_EXIT_OK;
		default: return cli_usage_error("collapse", NULL);
		}
	}

	struct fold *fold = fold_new();
	if (fold)
		fold_set_budget(fold, (size_t)cli.table_mib << 20);
	struct collapse *c = fold ? collapse_new(&opts, fold) : NULL;
	if (!c) {
		fold_free(fold);
		return cli_failf("collapse", FS_EXIT_FAIL, "out of memory");
	}

	static char stdin_arg[] = "-";
	char *stdin_only[] = {stdin_arg};
	char **files = optind < argc ? argv + optind : stdin_only;
	int nfiles = optind < argc ? argc - optind : 1;
	const char *unrec_file = NULL;
	uint64_t unrec_line = 0;
	int rc = FS_EXIT_OK;
	struct fs_error err = {0};

	for (int i = 0; i < nfiles && rc == FS_EXIT_OK; i++) {
		const char *name;
		struct collapse_stats before, after;
		collapse_get_stats(c, &before);
		cleanup_close int fd = collapse_open_input(files[i], &name);
		if (fd < 0) {
			rc = cli_failf("collapse", FS_EXIT_FAIL,
				       "cannot open %s: %s; check the path", name, strerror(errno));
			break;
		}
		if (collapse_fd(c, fd, name, &err) < 0) {
			rc = cli_fail_file("collapse", &err);
			break;
		}
		collapse_get_stats(c, &after);
		if (!unrec_file && after.unrecognized) {
			unrec_file = name;
			unrec_line = after.first_unrecognized - before.lines;
		}
	}

	if (rc == FS_EXIT_OK) {
		FILE *out = stdout;
		if (cli.output && !(out = fopen(cli.output, "we"))) {
			rc = cli_failf("collapse", FS_EXIT_FAIL, "cannot create %s: %s", cli.output,
				       strerror(errno));
		} else {
			int r = fold_write(fold, out);
			if (out != stdout && fclose(out) == EOF && r == 0)
				r = errno ? -errno : -EIO;
			if (r < 0)
				rc = cli_failf("collapse", FS_EXIT_FAIL, "writing %s: %s",
					       cli.output ? cli.output : "stdout", strerror(-r));
		}
		collapse_warn(c, &cli, unrec_file ? unrec_file : "the input", unrec_line);
	}
	collapse_free(c);
	fold_free(fold);
	return rc;
}

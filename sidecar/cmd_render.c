/* cmd_render.c - `flamesidecar render`: folded stacks -> SVG. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "flame.h"
#include "outfile.h"
#include "render.h"
#include "render_cli.h"

struct render_args {
	struct render_opts o;
	const char *output;
};

static const struct opt render_opts_table[] = {
    {.name = "output",
     .key = 'o',
     .arg = "FILE",
     .help = "write the SVG to FILE (default: standard output)",
     .kind = OPT_STRING,
     .off = offsetof(struct render_args, output)},
    {.name = "negate",
     .help = "differential input: widths from the first count (A)",
     .kind = OPT_BOOL,
     .off = offsetof(struct render_args, o.negate)},
};
static const struct opt_group render_group = OPT_GROUP(NULL, render_opts_table);
static const struct opt_use render_uses[] = {
    {&render_group, 0},
    {&render_cli_group, offsetof(struct render_args, o)},
};

const struct opt_verb cmd_render_opts = {
    .name = "render",
    .summary = "folded stacks -> interactive SVG flame graph",
    .synopsis = "[OPTIONS] [FILE]",
    .intro = "Draw folded stacks (\"frame;frame;frame count\" lines, as written by\n"
	     "`flamesidecar collapse` or stackcollapse-*.pl) as an interactive SVG flame\n"
	     "graph. FILE defaults to standard input. Lines with two counts (\"stack A B\",\n"
	     "difffolded.pl output) give a differential graph.\n",
    .outro =
	"In the SVG: click a frame to zoom, \"Reset Zoom\" to go back, Ctrl-F or\n"
	"\"Search\" for a regular expression; open it with ?s=REGEX to search on load\n"
	"or ?x=X&y=Y to zoom on the frame at that point.\n\n"
	"Examples:\n"
	"  perf script | flamesidecar collapse | flamesidecar render > cpu.svg\n"
	"  flamesidecar render --title 'checkout service' --colors java -o cpu.svg cpu.folded\n"
	"  flamesidecar render --reverse --hash --minwidth 0.5% cpu.folded > callers.svg\n"
	"  flamesidecar render --inverted --colors mem alloc.folded > icicle.svg\n\n"
	"Exit codes: 0 ok, 1 failed (unreadable input, no stacks), 2 usage.\n",
    .uses = OPT_USES(render_uses),
};

/* Draw tree to output. The exit code. */
static int render_write(struct flame *tree, const char *input, const char *output,
			const struct render_opts *o)
{
	struct fs_error err = {0};
	const struct flame_stats *st = flame_stats(tree);
	if (st->malformed)
		cli_warn("render",
			 "%s: skipped %llu of %llu lines that are not \"frame;frame count\"", input,
			 (unsigned long long)st->malformed, (unsigned long long)st->lines);
	if (st->truncated)
		cli_warn("render", "%s: %llu stacks deeper than %d frames were cut", input,
			 (unsigned long long)st->truncated, FLAME_DEPTH_MAX);
	bool empty =
	    flame_node_total(tree, FLAME_ROOT) == 0 && flame_node_total_a(tree, FLAME_ROOT) == 0;
	struct outfile d;
	if (outfile_open(&d, output, &err) < 0)
		return cli_fail_file("render", &err);
	int r = render_svg(tree, d.f, o, &err);
	if (outfile_finish(&d, r, &err) < 0)
		return cli_fail_file("render", &err);
	if (empty)
		return cli_failf(
		    "render", FS_EXIT_FAIL,
		    "%s: no stacks with samples found; the SVG says so. Is this folded "
		    "output (\"frame;frame count\")?",
		    input);
	return FS_EXIT_OK;
}

int cmd_render(int argc, char **argv)
{
	struct render_args a = {0};
	struct fs_error err = {0};
	int first = 0;
	render_opts_init(&a.o);
	int rc = cli_parse(&cmd_render_opts, argc, argv, &a, &first);
	if (rc != CLI_GO_ON)
		return rc;
	if (argc - first > 1)
		return cli_usage_error("render", "expected at most one input file, got %d",
				       argc - first);
	const char *input = first < argc ? argv[first] : "-";
	cleanup_fclose FILE *in = NULL;
	if (strcmp(input, "-")) {
		in = fopen(input, "re");
		if (!in)
			return cli_failf("render", FS_EXIT_FAIL, "cannot open '%s': %s", input,
					 strerror(errno));
	} else if (isatty(STDIN_FILENO)) {
		return cli_usage_error("render",
				       "no input: give a folded file or pipe folded stacks in");
	}
	struct flame *tree = flame_new();
	if (!tree)
		return cli_failf("render", FS_EXIT_FAIL, "out of memory");
	if (flame_parse_folded(tree, in ? in : stdin, &err) < 0) {
		flame_free(tree);
		return cli_failf("render", FS_EXIT_FAIL, "%s: %s", input, err.msg);
	}
	rc = render_write(tree, input, a.output, &a.o);
	flame_free(tree);
	return rc;
}

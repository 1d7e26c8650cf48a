/* cmd_render.c - `flamesidecar render`: folded stacks -> SVG. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "flame.h"
#include "outfile.h"
#include "render.h"
#include "render_cli.h"

static void render_usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: flamesidecar render [OPTIONS] [FILE]\n\n"
	    "Draw folded stacks (\"frame;frame;frame count\" lines, as written by\n"
	    "`flamesidecar collapse` or stackcollapse-*.pl) as an interactive SVG flame\n"
	    "graph. FILE defaults to standard input. Lines with two counts (\"stack A B\",\n"
	    "difffolded.pl output) give a differential graph.\n\n"
	    "Options:\n"
	    "  -o, --output FILE  write the SVG to FILE (default: standard output)\n"
	    "%s"
	    "  --negate           differential input: widths from the first count (A)\n"
	    "  -h, --help         this text\n\n"
	    "In the SVG: click a frame to zoom, \"Reset Zoom\" to go back, Ctrl-F or\n"
	    "\"Search\" for a regular expression; open it with ?s=REGEX to search on load\n"
	    "or ?x=X&y=Y to zoom on the frame at that point.\n\n"
	    "Examples:\n"
	    "  perf script | flamesidecar collapse | flamesidecar render > cpu.svg\n"
	    "  flamesidecar render --title 'checkout service' --colors java -o cpu.svg cpu.folded\n"
	    "  flamesidecar render --reverse --hash --minwidth 0.5%% cpu.folded > callers.svg\n"
	    "  flamesidecar render --inverted --colors mem alloc.folded > icicle.svg\n\n"
	    "Exit codes: 0 ok, 1 failed (unreadable input, no stacks), 2 usage.\n",
	    render_opts_help);
}

int cmd_render(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"negate", no_argument, NULL, 'N'},
	    {"help", no_argument, NULL, 'h'},
	    RENDER_LONG_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	struct render_opts o;
	struct fs_error err = {0};
	const char *output = NULL;
	int opt, r;
	render_opts_init(&o);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': output = optarg; break;
		case 'N': o.negate = true; break;
		case 'h': render_usage(stdout); return FS_EXIT_OK;
		default:
			r = render_opts_option(&o, opt, optarg, &err);
			if (r > 0)
				break;
			return cli_usage_error("render", r < 0 ? "%s" : NULL, err.msg);
		}
	}
	if (argc - optind > 1)
		return cli_usage_error("render", "expected at most one input file, got %d",
				       argc - optind);
	const char *input = optind < argc ? argv[optind] : "-";
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
	if (outfile_open(&d, output, &err) < 0) {
		flame_free(tree);
		return cli_fail_file("render", &err);
	}
	r = render_svg(tree, d.f, &o, &err);
	flame_free(tree);
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

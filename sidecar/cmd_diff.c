/* diff.c - `flamesidecar diff A.folded B.folded`: a differential flame
 * graph with difffolded.pl + flamegraph.pl semantics. Widths come from B
 * (the "after" profile); a frame is red where its own (self) count grew
 * from A to B and blue where it shrank, more saturated the larger the
 * change. Stacks only in A have no width in B and so are not drawn. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "flame.h"
#include "outfile.h"
#include "render.h"
#include "render_cli.h"

static void diff_usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: flamesidecar diff [OPTIONS] A.folded B.folded\n\n"
	    "Compare two folded profiles (before A, after B) in a differential flame\n"
	    "graph: widths from B, red where a function's own samples grew from A to B,\n"
	    "blue where they shrank, white-grey where unchanged; the stronger the colour\n"
	    "the larger the change. Tooltips give the change in percent of all samples.\n\n"
	    "Options:\n"
	    "  -o, --output FILE  write to FILE (default: standard output)\n"
	    "  -n, --normalize    scale A's counts so its total equals B's (compare\n"
	    "                     profiles of different length or sample rate)\n"
	    "  --negate           draw widths from A instead (what went away); red still\n"
	    "                     means more in B (= difffolded.pl B A | flamegraph.pl --negate)\n"
	    "  --folded           print \"stack countA countB\" lines instead of an SVG\n"
	    "                     (difffolded.pl output; A normalised with -n)\n"
	    "%s"
	    "  -h, --help         this text\n\n"
	    "Examples:\n"
	    "  flamesidecar diff before.folded after.folded > diff.svg\n"
	    "  flamesidecar diff -n --title 'v2 vs v1' v1.folded v2.folded -o diff.svg\n"
	    "  flamesidecar diff --negate before.folded after.folded > gone.svg\n"
	    "  flamesidecar diff --folded a.folded b.folded | flamesidecar render > diff.svg\n\n"
	    "Exit codes: 0 ok, 1 failed (unreadable input, no stacks), 2 usage.\n",
	    render_opts_help);
}

/* Read one profile into tree; *bad and *lines get its malformed and
 * total line counts. */
static int diff_load(struct flame *tree, const char *path, enum flame_column col, uint64_t *bad,
		     uint64_t *lines, struct fs_error *err)
{
	cleanup_fclose FILE *in = strcmp(path, "-") ? fopen(path, "re") : NULL;
	if (strcmp(path, "-") && !in)
		return fs_error_set(err, errno, "cannot open '%s'", path);
	const struct flame_stats *st = flame_stats(tree);
	uint64_t bad0 = st->malformed, lines0 = st->lines;
	int r = flame_parse_folded_as(tree, in ? in : stdin, col, err);
	if (r < 0)
		return fs_error_wrap(err, "%s", path);
	*bad = st->malformed - bad0;
	*lines = st->lines - lines0;
	return 0;
}

struct diff_folded {
	FILE *out;
	double scale_a;
};

static int diff_print_stack(void *ctx, const char *stack, size_t len, uint64_t a, uint64_t b)
{
	struct diff_folded *d = ctx;
	if (!len)
		return 0;
	double sa = (double)a * d->scale_a + 0.5;
	unsigned long long ua = sa >= 18446744073709551615.0 ? ULLONG_MAX : (unsigned long long)sa;
	fwrite(stack, 1, len, d->out);
	fprintf(d->out, " %llu %llu\n", ua, (unsigned long long)b);
	return ferror(d->out) ? -EIO : 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"normalize", no_argument, NULL, 'n'},
	    {"normalise", no_argument, NULL, 'n'},
	    {"negate", no_argument, NULL, 'N'},
	    {"folded", no_argument, NULL, 'F'},
	    {"help", no_argument, NULL, 'h'},
	    RENDER_LONG_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	struct render_opts o;
	struct fs_error err = {0};
	const char *output = NULL;
	bool normalize = false, folded = false;
	int opt, r;
	render_opts_init(&o);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:nh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': output = optarg; break;
		case 'n': normalize = true; break;
		case 'N': o.negate = true; break;
		case 'F': folded = true; break;
		case 'h': diff_usage(stdout); return FS_EXIT_OK;
		default:
			r = render_opts_option(&o, opt, optarg, &err);
			if (r > 0)
				break;
			return cli_usage_error("diff", r < 0 ? "%s" : NULL, err.msg);
		}
	}
	if (argc - optind != 2)
		return cli_usage_error(
		    "diff", "expected two folded files (before and after), got %d", argc - optind);
	const char *path_a = argv[optind], *path_b = argv[optind + 1];
	if (!strcmp(path_a, "-") && !strcmp(path_b, "-"))
		return cli_usage_error("diff", "only one of A and B can be standard input ('-')");

	struct flame *tree = flame_new();
	if (!tree)
		return cli_failf("diff", FS_EXIT_FAIL, "out of memory");
	/* Load A first: its single-count lines feed column A, and the tree is
	 * differential from then on, so B's lines feed column B. */
	uint64_t bad[2], lines[2];
	if (flame_add2(tree, "", 0, 0, 0) < 0 ||
	    diff_load(tree, path_a, FLAME_COLUMN_A, &bad[0], &lines[0], &err) < 0 ||
	    diff_load(tree, path_b, FLAME_COLUMN_B, &bad[1], &lines[1], &err) < 0) {
		flame_free(tree);
		return cli_fail_file("diff", &err);
	}
	for (int i = 0; i < 2; i++)
		if (bad[i])
			cli_warn(
			    "diff",
			    "%s: skipped %llu of %llu lines that are not \"frame;frame count\"",
			    i ? path_b : path_a, (unsigned long long)bad[i],
			    (unsigned long long)lines[i]);
	uint64_t total_a = flame_node_total_a(tree, FLAME_ROOT);
	uint64_t total_b = flame_node_total(tree, FLAME_ROOT);
	if (normalize && total_a && total_b)
		o.scale_a = (double)total_b / (double)total_a;

	struct outfile d;
	if (outfile_open(&d, output, &err) < 0) {
		flame_free(tree);
		return cli_fail_file("diff", &err);
	}
	if (folded) {
		struct diff_folded df = {.out = d.f, .scale_a = o.scale_a > 0 ? o.scale_a : 1.0};
		r = flame_foreach_stack(tree, diff_print_stack, &df);
		if (r < 0)
			fs_error_set(&err, -r, "writing folded output");
	} else {
		r = render_svg(tree, d.f, &o, &err);
	}
	flame_free(tree);
	if (outfile_finish(&d, r, &err) < 0)
		return cli_fail_file("diff", &err);
	if ((o.negate ? total_a : total_b) == 0)
		return cli_failf("diff", FS_EXIT_FAIL,
				 "%s has no samples, so nothing has width; are these folded files "
				 "(\"frame;frame count\")?",
				 o.negate ? path_a : path_b);
	return FS_EXIT_OK;
}

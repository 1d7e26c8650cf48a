/* diff.c - `flamesidecar diff A.folded B.folded`: a differential flame
 * graph with difffolded.pl + flamegraph.pl semantics. Widths come from B
 * (the "after" profile); a frame is red where its own (self) count grew
 * from A to B and blue where it shrank, more saturated the larger the
 * change. Stacks only in A have no width in B and so are not drawn. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
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

struct diff_args {
	struct render_opts o;
	const char *output;
	int normalize, folded;
};

#define DA(field) offsetof(struct diff_args, field)

static const struct opt diff_opts_table[] = {
    {.name = "output",
     .key = 'o',
     .arg = "FILE",
     .help = "write to FILE (default: standard output)",
     .kind = OPT_STRING,
     .off = DA(output)},
    {.name = "normalize",
     .key = 'n',
     .help = "scale A's counts so its total equals B's (compare profiles of different length "
	     "or sample rate)",
     .kind = OPT_FLAG,
     .off = DA(normalize)},
    {.name = "normalise", .help = "", .kind = OPT_FLAG, .off = DA(normalize), .flags = OPT_HIDDEN},
    {.name = "negate",
     .help = "draw widths from A instead (what went away); red still means more in B (= "
	     "difffolded.pl B A | flamegraph.pl --negate)",
     .kind = OPT_BOOL,
     .off = DA(o.negate)},
    {.name = "folded",
     .help = "print \"stack countA countB\" lines instead of an SVG (difffolded.pl output; A "
	     "normalised with -n)",
     .kind = OPT_FLAG,
     .off = DA(folded)},
};
static const struct opt_group diff_group = OPT_GROUP(NULL, diff_opts_table);
static const struct opt_use diff_uses[] = {{&diff_group, 0}, {&render_cli_group, DA(o)}};

const struct opt_verb cmd_diff_opts = {
    .name = "diff",
    .summary = "two folded profiles -> differential flame graph",
    .synopsis = "[OPTIONS] A.folded B.folded",
    .intro = "Compare two folded profiles (before A, after B) in a differential flame\n"
	     "graph: widths from B, red where a function's own samples grew from A to B,\n"
	     "blue where they shrank, white-grey where unchanged; the stronger the colour\n"
	     "the larger the change. Tooltips give the change in percent of all samples.\n",
    .outro = "Examples:\n"
	     "  flamesidecar diff before.folded after.folded > diff.svg\n"
	     "  flamesidecar diff -n --title 'v2 vs v1' v1.folded v2.folded -o diff.svg\n"
	     "  flamesidecar diff --negate before.folded after.folded > gone.svg\n"
	     "  flamesidecar diff --folded a.folded b.folded | flamesidecar render > diff.svg\n\n"
	     "Exit codes: 0 ok, 1 failed (unreadable input, no stacks), 2 usage.\n",
    .uses = OPT_USES(diff_uses),
};

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

/* Load A, then B, into a new differential tree. An exit code. */
static int diff_load_both(const char *path_a, const char *path_b, struct flame **out)
{
	struct fs_error err = {0};
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
	*out = tree;
	return FS_EXIT_OK;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a = {0};
	struct fs_error err = {0};
	int first, r;
	render_opts_init(&a.o);
	int rc = cli_parse(&cmd_diff_opts, argc, argv, &a, &first);
	if (rc != CLI_GO_ON)
		return rc;
	if (argc - first != 2)
		return cli_usage_error(
		    "diff", "expected two folded files (before and after), got %d", argc - first);
	const char *path_a = argv[first], *path_b = argv[first + 1];
	if (!strcmp(path_a, "-") && !strcmp(path_b, "-"))
		return cli_usage_error("diff", "only one of A and B can be standard input ('-')");
	struct flame *tree = NULL;
	if ((rc = diff_load_both(path_a, path_b, &tree)))
		return rc;
	struct render_opts o = a.o;
	const char *output = a.output;
	bool normalize = a.normalize, folded = a.folded;
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

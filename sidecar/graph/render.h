/* render.h - a frame tree (flame.h) as a self-contained, interactive SVG
 * flame graph: click to zoom, search with a regular expression (Ctrl-F),
 * tooltips, and URL parameters (?s=REGEX, ?x=X&y=Y) that do the same on load.
 *
 * Usage:
 *	struct render_opts o;
 *	render_opts_init(&o);
 *	o.title = "my service";
 *	if (render_svg(tree, out, &o, &err) < 0) ...
 */
#ifndef FS_RENDER_H
#define FS_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "flame.h"
#include "palette.h"

struct render_opts {
	const char *title;	/* NULL: "Flame Graph" (or "Icicle Graph", "Differential ...") */
	const char *subtitle;	/* NULL: none */
	unsigned width;		/* image width in px: 1200 */
	unsigned frame_height;	/* px per frame: 16 */
	unsigned font_size;	/* px: 12 */
	double min_width;	/* frames narrower than this many px are elided: 0.1 */
	double min_width_pct;	/* if > 0, min_width is this % of the graph width instead */
	bool reverse;		/* reverse every stack (leaf at the bottom) and merge */
	bool inverted;		/* icicle graph: root at the top */
	bool hash;		/* colour by name hash (same name, same colour) */
	enum palette palette;	/* PALETTE_JAVA */
	const char *count_name; /* "samples" */
	const char *name_type;	/* "Function:" */
	/* differential trees only */
	bool negate;	/* widths from A instead of B; red still means "more in B" */
	double scale_a; /* multiply A's counts by this (diff -n); 0 means 1 */
};

void render_opts_init(struct render_opts *o);

/* Write the SVG for f. A tree without samples gives a small SVG that says
 * so. 0 or -errno (write error, out of memory). */
int render_svg(const struct flame *f, FILE *out, const struct render_opts *o, struct fs_error *err);

/* Write len bytes of s as XML text (safe in elements and in quoted
 * attributes): markup characters escaped, control characters, invalid
 * UTF-8 and U+FFFE/U+FFFF replaced by U+FFFD. When s has more than
 * max_chars characters, writes max_chars - 2 of them and ".." (nothing if
 * max_chars < 3). Returns the number of characters written. */
size_t render_escape(FILE *out, const char *s, size_t len, size_t max_chars);

/* Number of characters (code points, invalid bytes counting one each). */
size_t render_text_chars(const char *s, size_t len);

/* printf("%.<decimals>f", v) (decimals 0-2) into buf (RENDER_FIXED_MAX
 * bytes), the same bytes, mostly without printf: integer arithmetic, and
 * printf itself where that could round otherwise (near ties, negative,
 * huge). Its length. */
#define RENDER_FIXED_MAX 352 /* "%.2f" of DBL_MAX and a NUL */
size_t render_fmt_fixed(char *buf, double v, unsigned decimals);

#endif

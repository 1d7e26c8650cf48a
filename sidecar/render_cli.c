/* render_cli.c - the command-line options shared by `render`, `diff` and
 * `run` for the look of the SVG: see render_cli.h */
#include "render_cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/* --minwidth PX|N% */
static int render_cli_minwidth(void *group, const char *arg, struct fs_error *err)
{
	struct render_opts *o = group;
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	bool pct = *end == '%';
	if (errno || end == arg || (pct ? end[1] != '\0' : *end != '\0') || !(v >= 0) ||
	    v > (pct ? 100 : 1e6))
		return fs_error_set(
		    err, 0, "--minwidth takes pixels (0.1) or a percentage (0.5%%), not '%s'", arg);
	o->min_width = pct ? 0 : v;
	o->min_width_pct = pct ? v : 0;
	return 0;
}

/* --colors NAME */
static int render_cli_colors(void *group, const char *arg, struct fs_error *err)
{
	struct render_opts *o = group;
	if (palette_from_name(arg, &o->palette) < 0)
		return fs_error_set(err, 0, "--colors '%s': unknown palette; use one of: %s", arg,
				    palette_list());
	return 0;
}

#define RO(field) offsetof(struct render_opts, field)

static const struct opt render_cli_opts[] = {
    {.name = "title",
     .arg = "TEXT",
     .help = "title (default \"Flame Graph\")",
     .kind = OPT_STRING,
     .off = RO(title)},
    {.name = "subtitle",
     .arg = "TEXT",
     .help = "second line under the title",
     .kind = OPT_STRING,
     .off = RO(subtitle)},
    {.name = "width",
     .arg = "PX",
     .help = "image width (default 1200, {lo} to {hi})",
     .kind = OPT_UINT,
     .off = RO(width),
     .lo = 100,
     .hi = 1000000},
    {.name = "height",
     .arg = "PX",
     .help = "frame height (default 16, {lo} to {hi})",
     .kind = OPT_UINT,
     .off = RO(frame_height),
     .lo = 2,
     .hi = 1000},
    {.name = "fontsize",
     .arg = "PX",
     .help = "font size (default 12, {lo} to {hi})",
     .kind = OPT_UINT,
     .off = RO(font_size),
     .lo = 1,
     .hi = 500},
    {.name = "minwidth",
     .arg = "PX|N%",
     .help = "elide frames narrower than this (default 0.1 px)",
     .kind = OPT_CALL,
     .set = render_cli_minwidth},
    {.name = "reverse",
     .help = "reverse every stack (leaf first) and merge",
     .kind = OPT_BOOL,
     .off = RO(reverse)},
    {.name = "inverted",
     .help = "icicle graph: root at the top, growing down",
     .kind = OPT_BOOL,
     .off = RO(inverted)},
    {.name = "colors",
     .arg = "NAME",
     .help = "palette: java (default), hot, mem, io, js, perl, wakeup, chain, red, green, "
	     "blue, aqua, yellow, purple, orange",
     .kind = OPT_CALL,
     .set = render_cli_colors},
    {.name = "colours",
     .arg = "NAME",
     .help = "--colors",
     .kind = OPT_CALL,
     .set = render_cli_colors,
     .flags = OPT_HIDDEN},
    {.name = "hash",
     .help = "colour by function name hash (stable across graphs)",
     .kind = OPT_BOOL,
     .off = RO(hash)},
    {.name = "countname",
     .arg = "WORD",
     .help = "count unit in tooltips (default \"samples\")",
     .kind = OPT_STRING,
     .off = RO(count_name)},
    {.name = "nametype",
     .arg = "TEXT",
     .help = "prefix of the hovered frame line (default \"Function:\")",
     .kind = OPT_STRING,
     .off = RO(name_type)},
};
const struct opt_group render_cli_group = OPT_GROUP("Drawing options", render_cli_opts);

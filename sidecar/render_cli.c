/* render_cli.c - the command-line options shared by `render`, `diff` and
 * `run` for the look of the SVG: see render_cli.h */
#include "render_cli.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

const char render_opts_help[] =
    "  --title TEXT       title (default \"Flame Graph\")\n"
    "  --subtitle TEXT    second line under the title\n"
    "  --width PX         image width (default 1200)\n"
    "  --height PX        frame height (default 16)\n"
    "  --fontsize PX      font size (default 12)\n"
    "  --minwidth PX|N%   elide frames narrower than this (default 0.1 px)\n"
    "  --reverse          reverse every stack (leaf first) and merge\n"
    "  --inverted         icicle graph: root at the top, growing down\n"
    "  --colors NAME      palette: java (default), hot, mem, io, js, perl, wakeup,\n"
    "                     chain, red, green, blue, aqua, yellow, purple, orange\n"
    "  --hash             colour by function name hash (stable across graphs)\n"
    "  --countname WORD   count unit in tooltips (default \"samples\")\n"
    "  --nametype TEXT    prefix of the hovered frame line (default \"Function:\")\n";

static int render_parse_uint(const char *arg, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < lo || v > hi)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

int render_opts_option(struct render_opts *o, int opt, const char *arg, struct fs_error *err)
{
	char *end;
	switch (opt) {
	case RENDER_OPT_TITLE: o->title = arg; return 1;
	case RENDER_OPT_SUBTITLE: o->subtitle = arg; return 1;
	case RENDER_OPT_WIDTH:
		if (render_parse_uint(arg, 100, 1000000, &o->width) < 0) {
			fs_error_set(err, 0, "--width '%s': expected pixels from 100 to 1000000",
				     arg);
			return -EINVAL;
		}
		return 1;
	case RENDER_OPT_HEIGHT:
		if (render_parse_uint(arg, 2, 1000, &o->frame_height) < 0) {
			fs_error_set(err, 0,
				     "--height '%s': expected a frame height from 2 to 1000 px",
				     arg);
			return -EINVAL;
		}
		return 1;
	case RENDER_OPT_FONTSIZE:
		if (render_parse_uint(arg, 1, 500, &o->font_size) < 0) {
			fs_error_set(err, 0, "--fontsize '%s': expected 1 to 500 px", arg);
			return -EINVAL;
		}
		return 1;
	case RENDER_OPT_MINWIDTH: {
		errno = 0;
		double v = strtod(arg, &end);
		bool pct = *end == '%';
		if (errno || end == arg || (pct ? end[1] != '\0' : *end != '\0') || !(v >= 0) ||
		    v > (pct ? 100 : 1e6)) {
			fs_error_set(
			    err, 0,
			    "--minwidth '%s': expected pixels (0.1) or a percentage (0.5%%)", arg);
			return -EINVAL;
		}
		o->min_width = pct ? 0 : v;
		o->min_width_pct = pct ? v : 0;
		return 1;
	}
	case RENDER_OPT_REVERSE: o->reverse = true; return 1;
	case RENDER_OPT_INVERTED: o->inverted = true; return 1;
	case RENDER_OPT_COLORS:
		if (palette_from_name(arg, &o->palette) < 0) {
			fs_error_set(err, 0, "--colors '%s': unknown palette; use one of: %s", arg,
				     palette_list());
			return -EINVAL;
		}
		return 1;
	case RENDER_OPT_HASH: o->hash = true; return 1;
	case RENDER_OPT_COUNTNAME: o->count_name = arg; return 1;
	case RENDER_OPT_NAMETYPE: o->name_type = arg; return 1;
	default: return 0;
	}
}

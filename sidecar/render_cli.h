/* render_cli.h - getopt_long options for the look of a flame graph,
 * shared by the verbs that write SVGs. */
#ifndef FS_RENDER_CLI_H
#define FS_RENDER_CLI_H

#include <getopt.h>

#include "error.h"
#include "render.h"

enum {
	RENDER_OPT_TITLE = 0x100,
	RENDER_OPT_SUBTITLE,
	RENDER_OPT_WIDTH,
	RENDER_OPT_HEIGHT,
	RENDER_OPT_FONTSIZE,
	RENDER_OPT_MINWIDTH,
	RENDER_OPT_REVERSE,
	RENDER_OPT_INVERTED,
	RENDER_OPT_COLORS,
	RENDER_OPT_HASH,
	RENDER_OPT_COUNTNAME,
	RENDER_OPT_NAMETYPE,
};

#define RENDER_LONG_OPTIONS                                                                        \
	{"title", required_argument, NULL, RENDER_OPT_TITLE},                                      \
	    {"subtitle", required_argument, NULL, RENDER_OPT_SUBTITLE},                            \
	    {"width", required_argument, NULL, RENDER_OPT_WIDTH},                                  \
	    {"height", required_argument, NULL, RENDER_OPT_HEIGHT},                                \
	    {"fontsize", required_argument, NULL, RENDER_OPT_FONTSIZE},                            \
	    {"minwidth", required_argument, NULL, RENDER_OPT_MINWIDTH},                            \
	    {"reverse", no_argument, NULL, RENDER_OPT_REVERSE},                                    \
	    {"inverted", no_argument, NULL, RENDER_OPT_INVERTED},                                  \
	    {"colors", required_argument, NULL, RENDER_OPT_COLORS},                                \
	    {"colours", required_argument, NULL, RENDER_OPT_COLORS},                               \
	    {"hash", no_argument, NULL, RENDER_OPT_HASH},                                          \
	    {"countname", required_argument, NULL, RENDER_OPT_COUNTNAME},                          \
	{                                                                                          \
		"nametype", required_argument, NULL, RENDER_OPT_NAMETYPE                           \
	}

/* Apply one getopt_long result. 1 if it was a render option, 0 if not,
 * -EINVAL with a message for a bad value. */
int render_opts_option(struct render_opts *o, int opt, const char *arg, struct fs_error *err);

/* The help lines for RENDER_LONG_OPTIONS. */
extern const char render_opts_help[];

#endif

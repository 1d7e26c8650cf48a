/* render_cli.h - the options for the look of a flame graph, shared by the
 * verbs that write SVGs (render, diff, run): an option group (opt.h) over
 * a struct render_opts. */
#ifndef FS_RENDER_CLI_H
#define FS_RENDER_CLI_H

#include "opt.h"
#include "render.h"

/* --title, --subtitle, --width, --height, --fontsize, --minwidth,
 * --reverse, --inverted, --colors, --hash, --countname, --nametype. */
extern const struct opt_group render_cli_group;

#endif

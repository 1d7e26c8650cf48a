/* speedscope.h - an export (export.h) as a speedscope JSON file
 * (https://www.speedscope.app/file-format-schema.json), the format
 * speedscope opens directly.
 *
 *   shared.frames  one per distinct folded frame: "name" without the kind
 *                  suffix, "file" export_frame_file ("[kernel.kallsyms]",
 *                  "libc.so.6", "[jit]", "[c1]", "[interpreted]",
 *                  "[inlined]"); no file for plain frames
 *   profiles       "sampled", one per process (pid when known, else the
 *                  root frame when it is the process, else one for all),
 *                  the largest first; stacks root first, "weights" the
 *                  sample counts, unit "none"
 * Strings are valid UTF-8 (export.h) and escaped for JSON. */
#ifndef FS_SPEEDSCOPE_H
#define FS_SPEEDSCOPE_H

#include <stdio.h>

#include "error.h"
#include "export.h"

/* Write x to out. 0 or -errno (-ENOMEM, or the stream's error). */
int speedscope_write(const struct export *x, FILE *out, struct fs_error *err);

#endif

/* outfile.h - where a verb writes its result. */
#ifndef FS_OUTFILE_H
#define FS_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"

/* An output that is stdout (path NULL or "-") or a file written to a
 * temporary name beside it and renamed into place on commit, so a failed
 * run never leaves half an SVG behind. */
struct outfile {
	FILE *f;
	char *tmp;
	const char *path;
};

int outfile_open(struct outfile *d, const char *path, struct fs_error *err);
/* Flush and, if commit, rename into place; else remove. 0 or -errno. */
int outfile_close(struct outfile *d, bool commit, struct fs_error *err);
/* After writing with result r: keep the file when r == 0, discard it
 * otherwise. Returns r when it failed (err already says why), else the
 * result of closing. */
int outfile_finish(struct outfile *d, int r, struct fs_error *err);

#endif

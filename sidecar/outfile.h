/* outfile.h - where a verb writes its result. */
#ifndef FS_OUTFILE_H
#define FS_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "fileio.h"

/* An output that is stdout (path NULL or "-") or a file replaced
 * atomically (lib/fileio.h: a temporary file beside it, renamed into place
 * on commit, removed otherwise), so a failed run never leaves half an SVG
 * behind. The file gets 0666 less the umask, like a shell redirection. */
struct outfile {
	FILE *f;
	const char *path;
	int dir_fd; /* -1 for stdout */
	struct fileio_atomic a;
	char dir[4096], base[256];
};

int outfile_open(struct outfile *d, const char *path, struct fs_error *err);
/* Flush and, if commit, rename into place; else remove. 0 or -errno. */
int outfile_close(struct outfile *d, bool commit, struct fs_error *err);
/* After writing with result r: keep the file when r == 0, discard it
 * otherwise. Returns r when it failed (err already says why), else the
 * result of closing. */
int outfile_finish(struct outfile *d, int r, struct fs_error *err);

#endif

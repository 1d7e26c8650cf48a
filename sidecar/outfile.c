/* outfile.c - stdout or a file replaced atomically: see outfile.h */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_open(struct outfile *d, const char *path, struct fs_error *err)
{
	*d = (struct outfile){.f = stdout};
	if (!path || !strcmp(path, "-"))
		return 0;
	d->path = path;
	if (asprintf(&d->tmp, "%s.tmp.XXXXXX", path) < 0) {
		d->tmp = NULL;
		return fs_error_set(err, ENOMEM, "opening output '%s'", path);
	}
	int fd = mkostemp(d->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(d->tmp);
		d->tmp = NULL;
		return fs_error_set(
		    err, e, "creating a temporary file beside '%s' (is the directory writable?)",
		    path);
	}
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0) {
		/* keep 0600 */
	}
	d->f = fdopen(fd, "w");
	if (!d->f) {
		int e = errno;
		close(fd);
		unlink(d->tmp);
		free(d->tmp);
		d->tmp = NULL;
		return fs_error_set(err, e, "opening output '%s'", path);
	}
	return 0;
}

int outfile_close(struct outfile *d, bool commit, struct fs_error *err)
{
	int r = 0;
	if (!d->tmp) {
		if (fflush(stdout) != 0)
			r = fs_error_set(err, errno, "writing to standard output");
		return r;
	}
	if (fclose(d->f) != 0 && commit)
		r = fs_error_set(err, errno, "writing '%s'", d->tmp);
	d->f = NULL;
	if (commit && r == 0 && rename(d->tmp, d->path) < 0)
		r = fs_error_set(err, errno, "renaming '%s' to '%s'", d->tmp, d->path);
	if (!commit || r < 0)
		unlink(d->tmp);
	free(d->tmp);
	d->tmp = NULL;
	return r;
}

int outfile_finish(struct outfile *d, int r, struct fs_error *err)
{
	if (r < 0) {
		outfile_close(d, false, NULL);
		return r;
	}
	return outfile_close(d, true, err);
}

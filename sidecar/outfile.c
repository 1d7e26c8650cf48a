/* outfile.c - stdout or a file replaced atomically: see outfile.h */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_open(struct outfile *d, const char *path, struct fs_error *err)
{
	memset(d, 0, sizeof(*d));
	d->f = stdout;
	d->dir_fd = -1;
	if (!path || !strcmp(path, "-"))
		return 0;
	d->path = path;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) : 1;
	if (!*base || strlen(base) >= sizeof(d->base) || dlen >= sizeof(d->dir))
		return fs_error_set(err, EINVAL, "output '%s' is not a file name that fits", path);
	snprintf(d->base, sizeof(d->base), "%s", base);
	if (!slash)
		snprintf(d->dir, sizeof(d->dir), ".");
	else if (slash == path)
		snprintf(d->dir, sizeof(d->dir), "/");
	else
		snprintf(d->dir, sizeof(d->dir), "%.*s", (int)dlen, path);
	d->dir_fd = open(d->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->dir_fd < 0)
		return fs_error_set(err, errno, "opening the directory of output '%s'", path);
	mode_t mask = umask(0);
	umask(mask);
	int fd = fileio_atomic_open(&d->a, d->dir_fd, d->dir, d->base, 0666 & ~mask, err);
	if (fd < 0) {
		close(d->dir_fd);
		d->dir_fd = -1;
		return fs_error_wrap(err, "output '%s' (is the directory writable?)", path);
	}
	d->a.output = 1; /* all of a killed run's outputs go (lib/tmpreg.h) */
	d->f = fdopen(fd, "w");
	if (!d->f) {
		int e = errno;
		close(fd);
		fileio_atomic_abort(&d->a);
		close(d->dir_fd);
		d->dir_fd = -1;
		return fs_error_set(err, e, "opening output '%s'", path);
	}
	return 0;
}

int outfile_close(struct outfile *d, bool commit, struct fs_error *err)
{
	int r = 0;
	if (d->dir_fd < 0) {
		if (fflush(stdout) != 0)
			r = fs_error_set(err, errno, "writing to standard output");
		return r;
	}
	if (commit && (fflush(d->f) != 0 || ferror(d->f)))
		r = fs_error_set(err, errno ? errno : EIO, "writing '%s'", d->path);
	if (commit && r == 0)
		r = fileio_atomic_commit(&d->a, fileno(d->f), err);
	else
		fileio_atomic_abort(&d->a);
	if (fclose(d->f) != 0 && commit && r == 0)
		r = fs_error_set(err, errno, "writing '%s'", d->path);
	d->f = NULL;
	close(d->dir_fd);
	d->dir_fd = -1;
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

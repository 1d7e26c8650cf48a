/* fileio.c - see fileio.h */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "rootfs.h"
#include "tmpreg.h"

int fileio_read_fd_flags(int fd, size_t max, unsigned flags, char **out, size_t *len,
			 struct fs_error *err)
{
	int cut = (flags & FILEIO_READ_CUT) != 0;
	/* refusing: one byte more than max tells that there is more */
	size_t limit = cut ? max : max + 1;
	size_t cap = limit < 4096 ? limit : 4096, n = 0;
	cleanup_free char *buf = malloc(cap + 1);
	if (!buf)
		return fs_error_set(err, ENOMEM, "reading input");
	for (;;) {
		if (n == cap) {
			if (cap >= limit) {
				if (cut)
					break;
				return fs_error_set(err, E2BIG, "input larger than %zu bytes", max);
			}
			size_t ncap = cap * 2 > limit ? limit : cap * 2;
			char *nb = realloc(buf, ncap + 1);
			if (!nb)
				return fs_error_set(err, ENOMEM, "reading input");
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return fs_error_set(err, errno, "reading input");
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	*out = steal_pointer(&buf);
	return 0;
}

int fileio_read_fd(int fd, size_t max, char **out, size_t *len, struct fs_error *err)
{
	return fileio_read_fd_flags(fd, max, 0, out, len, err);
}

int fileio_mkdir_p(const char *path, mode_t parent_mode, mode_t mode)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, parent_mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return -errno;
	struct stat sb;
	if (lstat(p, &sb) < 0)
		return -errno;
	return S_ISDIR(sb.st_mode) ? 0 : -ENOTDIR;
}

int fileio_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int fileio_atomic_open(struct fileio_atomic *a, int dir_fd, const char *dir_name, const char *name,
		       mode_t mode, struct fs_error *err)
{
	uint64_t rnd;
	*a = (struct fileio_atomic){
	    .dir_fd = dir_fd, .dir_name = dir_name, .name = name, .mode = mode, .reg = -1};
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		return fs_error_set(err, errno ? errno : EIO, "getrandom");
	/* Unpredictable, so nobody can plant it first in a shared directory. */
	if (snprintf(a->tmp, sizeof(a->tmp), ".%.200s.%016" PRIx64 ".tmp", name, rnd) >=
	    (int)sizeof(a->tmp))
		return fs_error_set(err, ENAMETOOLONG, "%s/%s", dir_name, name);
	int fd = openat(dir_fd, a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		int e = errno;
		a->tmp[0] = '\0';
		return fs_error_set(err, e, "creating %s/%s", dir_name, name);
	}
	a->reg = tmpreg_add(dir_fd, a->tmp, fd);
	return fd;
}

int fileio_atomic_commit(struct fileio_atomic *a, int fd, struct fs_error *err)
{
	int r = 0;
	if (fchmod(fd, a->mode) < 0) /* the umask does not decide */
		r = fs_error_set(err, errno, "chmod %s/%s", a->dir_name, a->tmp);
	else if (renameat(a->dir_fd, a->tmp, a->dir_fd, a->name) < 0)
		r = fs_error_set(err, errno, "renaming %s/%s to %s", a->dir_name, a->tmp, a->name);
	if (r < 0)
		fileio_atomic_abort(a);
	else
		tmpreg_commit(a->reg, a->name, a->output);
	a->reg = -1;
	a->tmp[0] = '\0';
	return r;
}

void fileio_atomic_abort(struct fileio_atomic *a)
{
	if (a->tmp[0] && unlinkat(a->dir_fd, a->tmp, 0) == 0)
		tmpreg_drop(a->reg);
	a->reg = -1;
	a->tmp[0] = '\0';
}

int fileio_replace(int dir_fd, const char *dir_name, const char *name, mode_t mode,
		   int (*fill)(int fd, void *arg, struct fs_error *err), void *arg,
		   struct fs_error *err)
{
	struct fileio_atomic a;
	cleanup_close int fd = fileio_atomic_open(&a, dir_fd, dir_name, name, mode, err);
	if (fd < 0)
		return fd;
	int r = fill(fd, arg, err);
	if (r == 0)
		r = fileio_atomic_commit(&a, fd, err);
	else
		fileio_atomic_abort(&a);
	if (r < 0)
		return fs_error_wrap(err, "writing %s/%s", dir_name, name);
	return 0;
}

struct fileio_buf {
	const void *buf;
	size_t len;
};

static int fileio_fill_buf(int fd, void *arg, struct fs_error *err)
{
	const struct fileio_buf *b = arg;
	int r = fileio_write_all(fd, b->buf, b->len);
	return r < 0 ? fs_error_set(err, r, "write") : 0;
}

int fileio_replace_buf(int dir_fd, const char *dir_name, const char *name, mode_t mode,
		       const void *buf, size_t len, struct fs_error *err)
{
	struct fileio_buf b = {buf, len};
	return fileio_replace(dir_fd, dir_name, name, mode, fileio_fill_buf, &b, err);
}

int fileio_reopen(int path_fd, int fd_dir, struct fs_error *err)
{
	char name[16];
	struct stat want, got;
	if (fstat(path_fd, &want) < 0)
		return fs_error_set(err, errno, "stat of fd %d", path_fd);
	if (!S_ISREG(want.st_mode))
		return fs_error_set(err, EPERM, "refusing to open a file that is not regular");
	snprintf(name, sizeof(name), "%d", path_fd);
	int fd = openat(fd_dir, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fs_error_set(err, errno, "reopening fd %d", path_fd);
	if (fstat(fd, &got) < 0 || !S_ISREG(got.st_mode) || got.st_dev != want.st_dev ||
	    got.st_ino != want.st_ino) {
		close(fd);
		return fs_error_set(err, ESTALE, "reopening fd %d gave another file", path_fd);
	}
	return fd;
}

int fileio_reopen_beneath(int path_fd, int root_fd, const char *path, struct fs_error *err)
{
	struct stat want, got;
	if (fstat(path_fd, &want) < 0)
		return fs_error_set(err, errno, "stat of fd %d", path_fd);
	if (!S_ISREG(want.st_mode))
		return fs_error_set(err, EPERM, "refusing to open a file that is not regular");
	int fd = rootfs_open(root_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0)
		return fs_error_set(err, -fd, "reopening /%s", path);
	if (fstat(fd, &got) < 0 || !S_ISREG(got.st_mode) || got.st_dev != want.st_dev ||
	    got.st_ino != want.st_ino) {
		close(fd);
		return fs_error_set(err, ESTALE, "reopening /%s gave another file", path);
	}
	return fd;
}

int fileio_check_private_dir(int fd, const char *path, struct fs_error *err)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return fs_error_set(err, errno, "stat %s", path);
	if (!S_ISDIR(sb.st_mode))
		return fs_error_set(err, ENOTDIR, "%s is not a directory", path);
	if (sb.st_uid != geteuid())
		return fs_error_set(
		    err, EPERM, "refusing %s: owned by uid %u, not %u (chown %u %s, or remove it)",
		    path, (unsigned)sb.st_uid, (unsigned)geteuid(), (unsigned)geteuid(), path);
	if (sb.st_mode & 022)
		return fs_error_set(err, EPERM,
				    "refusing %s: mode %04o lets others write it (chmod go-w %s)",
				    path, (unsigned)(sb.st_mode & 07777), path);
	return 0;
}

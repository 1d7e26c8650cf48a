/* fileio.h - whole-file reads with a cap, complete writes, and files
 * replaced atomically (temporary file + rename). */
#ifndef FS_FILEIO_H
#define FS_FILEIO_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* Read all of fd into a malloc'd, NUL-terminated buffer of at most max
 * bytes (*len excludes the NUL). -E2BIG if there is more. */
int fileio_read_fd(int fd, size_t max, char **out, size_t *len, struct fs_error *err);

/* The same, and with FILEIO_READ_CUT more than max is not an error: the
 * first max bytes are kept (for text whose cut the caller handles, like a
 * maps file judged on its whole lines). */
#define FILEIO_READ_CUT 1u
int fileio_read_fd_flags(int fd, size_t max, unsigned flags, char **out, size_t *len,
			 struct fs_error *err);

/* mkdir -p: create path and any missing parent (parents with parent_mode,
 * path itself with mode; existing ones are left as they are). The last
 * component must end up a directory, not a symlink to one. 0 or -errno
 * (-ENOTDIR, -ENAMETOOLONG). */
int fileio_mkdir_p(const char *path, mode_t parent_mode, mode_t mode);

/* write() until done (EINTR retried). 0 or -errno. */
int fileio_write_all(int fd, const void *buf, size_t len);

/* The steps of an atomic replace, for writers that stream (a FILE * on
 * the fd): fileio_atomic_open creates the temporary file (O_EXCL,
 * O_NOFOLLOW, an unpredictable name in dir_fd) and returns its fd;
 * fileio_atomic_commit sets mode (the umask does not decide) and renames it
 * over name; fileio_atomic_abort removes it. Commit or abort exactly once;
 * the fd stays the caller's to close. The temporary file is listed in the
 * watchdog's table while it exists (lib/tmpreg.h); an output of a run sets
 * output after the open, and then stays listed under its name once
 * committed (removed should the run be killed before its end). */
struct fileio_atomic {
	int dir_fd;
	const char *dir_name, *name;
	mode_t mode;
	int reg;    /* its tmpreg slot, or -1 */
	int output; /* the caller's: keep it listed once committed */
	char tmp[NAME_MAX + 1];
};
int fileio_atomic_open(struct fileio_atomic *a, int dir_fd, const char *dir_name, const char *name,
		       mode_t mode, struct fs_error *err);
int fileio_atomic_commit(struct fileio_atomic *a, int fd, struct fs_error *err);
void fileio_atomic_abort(struct fileio_atomic *a);

/* Replace dir/name atomically: fill() writes the content into a new file
 * created O_EXCL|O_NOFOLLOW with mode under an unpredictable temporary name
 * in the same directory, which is renamed over name once fill returns 0 and
 * removed otherwise. dir_fd is the directory; dir_name is only for messages. */
int fileio_replace(int dir_fd, const char *dir_name, const char *name, mode_t mode,
		   int (*fill)(int fd, void *arg, struct fs_error *err), void *arg,
		   struct fs_error *err);

/* Open for reading what the O_PATH fd path_fd refers to, through the magic
 * link N in fd_dir (a directory fd of the caller's own /proc/self/fd, opened
 * from a procfs the caller trusts), O_RDONLY|O_NONBLOCK|O_NOCTTY. Check path_fd with fstat first:
 * this only reopens, and refuses (-ESTALE) when what it opened is not a regular file with path_fd's
 * device and inode. The way to read a container's file: O_PATH (opens nothing), fstat, then this.
 */
int fileio_reopen(int path_fd, int fd_dir, struct fs_error *err);

/* fileio_reopen's contract without a /proc: path (beneath root_fd, as
 * rootfs_open) is opened again for reading (O_NONBLOCK, O_NOCTTY) and
 * must be the regular file path_fd is, else -ESTALE. Only where a device
 * node swapped in opens nothing: mounts that are nodev (a jail, jail.h). */
int fileio_reopen_beneath(int path_fd, int root_fd, const char *path, struct fs_error *err);

/* 0 when fd is a directory owned by our euid that nobody else may write
 * (no group or other write bit); else -EPERM (-ENOTDIR) with a message
 * naming path and what is wrong and how to fix it. */
int fileio_check_private_dir(int fd, const char *path, struct fs_error *err);

/* fileio_replace with a buffer as the content. */
int fileio_replace_buf(int dir_fd, const char *dir_name, const char *name, mode_t mode,
		       const void *buf, size_t len, struct fs_error *err);

#endif

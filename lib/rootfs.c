/* rootfs.c - see rootfs.h */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(ROOTFS_RESOLVE_STRICT ==
		   (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS),
	       "ROOTFS_RESOLVE_STRICT");

int rootfs_openat2(int dirfd, const char *path, uint64_t flags, mode_t mode, uint64_t resolve)
{
	struct open_how how = {.flags = flags, .resolve = resolve};
	/* The kernel refuses a mode without O_CREAT or O_TMPFILE. */
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		how.mode = mode;
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

int rootfs_open(int root_fd, const char *path, uint64_t flags, mode_t mode)
{
	return rootfs_openat2(root_fd, path, flags | O_NOFOLLOW | O_CLOEXEC, mode,
			      ROOTFS_RESOLVE_STRICT);
}

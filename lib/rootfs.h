/* rootfs.h - open a path beneath a container's root, never outside it.
 *
 * A container's files are its to plant: a symlink in its rootfs may point
 * at "/etc/shadow", meaning the host's when resolved from the host. Every
 * open of a path inside a rootfs goes through here: openat2 from a root
 * directory fd, with the kernel clamping ".." and absolute links to that
 * root and refusing /proc magic links.
 *
 *   cleanup_close int fd = rootfs_open(root_fd, "tmp/perf-1.map", O_PATH, 0);
 *   if (fd == -ELOOP) ... a symlink on the way: refused
 */
#ifndef FS_ROOTFS_H
#define FS_ROOTFS_H

#include <stdint.h>
#include <sys/types.h>

/* The resolve flags of rootfs_open: ".." and absolute paths stay beneath
 * the root, no magic link, no symlink at all (a symlink anywhere on the
 * path fails with ELOOP). */
#define ROOTFS_RESOLVE_STRICT 0x16u /* RESOLVE_IN_ROOT|NO_MAGICLINKS|NO_SYMLINKS */

/* openat2(dirfd, path, {flags, mode, resolve}). dirfd may be AT_FDCWD (the
 * caller's working directory is then the root). The fd, or -errno:
 * -ELOOP a symlink (or magic link) on the way, -EXDEV an escape refused,
 * -ENOSYS a kernel without openat2 (before 5.6). */
int rootfs_openat2(int dirfd, const char *path, uint64_t flags, mode_t mode, uint64_t resolve);

/* The strict open: rootfs_openat2 with ROOTFS_RESOLVE_STRICT, and
 * O_NOFOLLOW | O_CLOEXEC added to flags. The fd or -errno as above. */
int rootfs_open(int root_fd, const char *path, uint64_t flags, mode_t mode);

#endif

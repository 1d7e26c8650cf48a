/* localfs.h - whether the file behind an fd is read by the kernel alone.
 *
 * A file on FUSE (fuse, fuse.*, fuseblk) or on a network file system (nfs,
 * cifs, 9p, ceph, ...) is answered by a daemon: a container with /dev/fuse
 * (or its own NFS server) can hold any lookup, stat, open or read of it for
 * as long as it likes, and a task that waits on a held FUSE request cannot
 * even be killed. The root process must not touch such a file: before it
 * opens a file a container maps (/proc/<pid>/map_files/...) or looks up a
 * path in a container's directory, it checks the O_PATH fd here.
 *
 * The check itself touches nothing the daemon answers: statx with
 * AT_STATX_DONT_SYNC (cached attributes, no GETATTR) for the mount id and
 * device, then the kernel's own mount table (/proc/<pid>/mountinfo, then
 * ours; at most LOCALFS_MOUNTINFO_MAX bytes each, read again only when it
 * changed: lib/mntcache.h) for the file system type.
 * A type not in the local list, or a mount found in neither table on an
 * anonymous device, is refused. */
#ifndef FS_LOCALFS_H
#define FS_LOCALFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

#define LOCALFS_MOUNTINFO_MAX (4u << 20)

/* 0 when fd (any fd, O_PATH is enough) is on a local file system;
 * -EXDEV (err says why, naming it what) when its reads could be held by a
 * daemon or the type is unknown; -errno when statx fails. pid: whose mount
 * table to look in first (the container's; 0: only ours). Every refusal is
 * counted in localfs_refused(). */
int localfs_check_fd(int fd, pid_t pid, const char *what, struct fs_error *err);

/* localfs_check_fd for an fd whose mount is in no table we can read (a
 * jail's private copy of a container's mounts, gone with the jail): the
 * type of its file system by its device number (statx, cached), looked up
 * in pid's mount table, then ours. The fd pins its superblock, so the
 * number cannot be reused meanwhile, and every mount of one superblock
 * has the same type. Not found, or not local: -EXDEV (counted). */
int localfs_check_fd_sb(int fd, pid_t pid, const char *what, struct fs_error *err);

/* The type of a file system by device (mountinfo's third field,
 * "major:minor") in mountinfo text buf (len bytes, any bytes): 1 with type
 * copied as localfs_mountinfo_type does, 0 when not there. Linear in len. */
int localfs_mountinfo_type_dev(const char *buf, size_t len, unsigned major, unsigned minor,
			       char *type, size_t typelen);

/* 0 when no mount of pid's mount table that is not local (FUSE, network,
 * unknown) lies on path rel (relative to pid's root, as "usr/lib/x"): a
 * lookup of it beneath pid's root then asks no daemon. -EXDEV (counted)
 * when one does, or -errno when the table cannot be read. */
int localfs_path_ok(pid_t pid, const char *rel, const char *what, struct fs_error *err);

/* The same on a mount table text (tests, fuzzing): 1 when rel crosses a
 * mount that is not local (its type copied to type), 0 when not. */
int localfs_mountinfo_crosses(const char *buf, size_t len, const char *rel, char *type,
			      size_t typelen);

/* Refusals so far in this process. */
unsigned localfs_refused(void);

/* The type of mount mnt_id in mountinfo text buf (len bytes, any bytes):
 * 1 with type copied (cut to typelen - 1, never empty), 0 when not there
 * or typelen < 2. Linear in len (tests/fuzz/fuzz_mountinfo.c). */
int localfs_mountinfo_type(const char *buf, size_t len, uint64_t mnt_id, char *type,
			   size_t typelen);

/* 1 if a file system of this type (mountinfo's name) is read by the kernel
 * alone: block device and memory file systems, overlay. */
int localfs_type_local(const char *type);

/* The file system type of one mountinfo line, from any point before its
 * " - " separator (from) to the line's end: the word after the separator
 * copied into type (NUL-terminated, cut to typelen - 1; typelen >= 2).
 * 1 when found, 0 when the line has no separator or an empty type. */
int localfs_line_fstype(const char *from, const char *end, char *type, size_t typelen);

#endif

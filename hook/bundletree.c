/* bundletree.c - the detached mount the hook attaches in a container: a
 * fresh tmpfs holding a copy of the agent bundle, read-only, nosuid,
 * nodev, private.
 *
 * Why a copy and not a bind (open_tree clone) of the host's bundle_dir: a
 * privileged container (CAP_SYS_ADMIN in the host's user namespace) can
 * `mount -o remount,rw` any mount in its namespace, and a bind mount shares
 * the host directory's inodes, so it could then rewrite the library every
 * other JVM on the host loads. A tmpfs of its own shares nothing with the
 * host: what a container does to its copy stays in its copy. A clone of a
 * shared host mount would also join the host mount's peer group, so mounts
 * made inside it would propagate back to the host; a new superblock's
 * mount is in no peer group.
 *
 * Only the bundle's top-level regular files are copied (the bundle is flat:
 * libflameagent.so and small files), at most HOOK_TREE_FILES_MAX of them
 * and HOOK_TREE_BYTES_MAX bytes in all; anything else is skipped. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "hook.h"

#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC		 0x00000001
#define FSMOUNT_CLOEXEC		 0x00000001
#define FSCONFIG_SET_FLAG	 0
#define FSCONFIG_SET_STRING	 1
#define FSCONFIG_CMD_CREATE	 6
#define FSCONFIG_CMD_RECONFIGURE 7
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV  0x00000004
#endif
#ifndef MS_PRIVATE
#define MS_PRIVATE (1 << 18)
#endif

#define HOOK_TREE_FILES_MAX 64
#define HOOK_TREE_BYTES_MAX (64LL * 1024 * 1024)

struct hook_tree_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static int tree_fsconfig(int fd, unsigned cmd, const char *key, const char *value)
{
	return (int)syscall(SYS_fsconfig, fd, cmd, key, value, 0);
}

/* Copy one regular file of the bundle (at most *budget bytes) into dst. */
static int tree_copy_file(int src_dir, const char *name, int dst_dir, long long *budget,
			  struct fs_error *err)
{
	cleanup_close int in =
	    openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return fs_error_set(err, errno, "opening bundle file %s", name);
	struct stat sb;
	if (fstat(in, &sb) < 0)
		return fs_error_set(err, errno, "bundle file %s", name);
	if (!S_ISREG(sb.st_mode))
		return 0;
	if (sb.st_size > *budget)
		return fs_error_set(err, EFBIG, "the bundle is over %lld bytes",
				    HOOK_TREE_BYTES_MAX);
	*budget -= sb.st_size;
	cleanup_close int out =
	    openat(dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, sb.st_mode & 0755);
	if (out < 0)
		return fs_error_set(err, errno, "creating %s in the bundle copy", name);
	off_t left = sb.st_size;
	while (left > 0) {
		ssize_t n = sendfile(out, in, NULL, (size_t)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fs_error_set(err, n < 0 ? errno : EIO, "copying bundle file %s",
					    name);
		left -= n;
	}
	return 0;
}

static int tree_copy(const char *bundle_dir, int dst_dir, struct fs_error *err)
{
	int src = open(bundle_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (src < 0)
		return fs_error_set(err, errno, "opening %s", bundle_dir);
	DIR *d = fdopendir(src);
	if (!d) {
		close(src);
		return fs_error_set(err, errno, "reading %s", bundle_dir);
	}
	long long budget = HOOK_TREE_BYTES_MAX;
	int files = 0, r = 0;
	struct dirent *de;
	while (r == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_REG)
			continue;
		if (++files > HOOK_TREE_FILES_MAX) {
			r = fs_error_set(err, EFBIG, "the bundle has over %d files",
					 HOOK_TREE_FILES_MAX);
			break;
		}
		r = tree_copy_file(src, de->d_name, dst_dir, &budget, err);
	}
	closedir(d);
	return r;
}

int hook_bundle_tree(const char *bundle_dir, struct fs_error *err)
{
	cleanup_close int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return fs_error_set(err, errno, "fsopen(tmpfs)");
	char size[32];
	snprintf(size, sizeof(size), "%lld", HOOK_TREE_BYTES_MAX);
	if (tree_fsconfig(fs, FSCONFIG_SET_STRING, "size", size) < 0 ||
	    tree_fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", "128") < 0 ||
	    tree_fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755") < 0 ||
	    tree_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL) < 0)
		return fs_error_set(err, errno, "creating the bundle tmpfs");
	cleanup_close int mnt =
	    (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		return fs_error_set(err, errno, "fsmount of the bundle tmpfs");
	int r = tree_copy(bundle_dir, mnt, err);
	if (r < 0)
		return r;
	/* Read-only at both levels: the superblock, and the mount. */
	if (tree_fsconfig(fs, FSCONFIG_SET_FLAG, "ro", NULL) < 0 ||
	    tree_fsconfig(fs, FSCONFIG_CMD_RECONFIGURE, NULL, NULL) < 0)
		return fs_error_set(err, errno, "making the bundle tmpfs read-only");
	struct hook_tree_attr attr = {
	    .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
	    .propagation = MS_PRIVATE,
	};
	if (syscall(SYS_mount_setattr, mnt, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return fs_error_set(err, errno, "making the bundle mount read-only");
	return steal_fd(&mnt);
}

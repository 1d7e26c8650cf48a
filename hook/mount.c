/* mount.c - put the agent bundle into a container, read-only.
 *
 * The tree is a private tmpfs holding a copy of the bundle (bundletree.c),
 * made in the hook's (host) mount namespace and made read-only, nosuid,
 * nodev before it is attached anywhere, so it is never visible writable. The
 * hook then joins the container's mount namespace itself (setns on the
 * container's pidfd; no fork, see hook_mount_bundle), opens the mount
 * point under the rootfs component by
 * component without following any symlink (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), creating missing directories only on the rootfs's
 * own mount (never in a volume bound from the host), and attaches the
 * tree with move_mount onto that verified fd, unless that fd is on a shared
 * mount: a mount made there would propagate to every peer of that mount,
 * which can be a host directory (a volume bound with rshared). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "hook.h"
#include "rootfs.h"
#include "timeutil.h"

#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
static int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to,
			  unsigned flags)
{
	return (int)syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

static const char *mount_kind(int dfd, const char *name)
{
	struct stat sb;
	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return "unreadable";
	switch (sb.st_mode & S_IFMT) {
	case S_IFLNK: return "a symlink";
	case S_IFIFO: return "a FIFO";
	case S_IFREG: return "a regular file";
	case S_IFSOCK: return "a socket";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	default: return "not a directory";
	}
}

static int mount_shared_statmount(int fd);

/* The id of the mount fd is on, or 0 when unknown. */
static uint64_t mount_id(int fd)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
		return 0;
	return stx.stx_mnt_id;
}

/* Creating comp in dir cur is allowed only on the rootfs's own mount
 * (root_mnt): anywhere else it can be a host directory bound into the
 * container (a volume at /opt), where a root-owned directory must never
 * appear, whether the bundle is then mounted or refused. 0 or -EXDEV. */
static int mount_may_create(int cur, uint64_t root_mnt, const char *comp, const char *path,
			    struct fs_error *err)
{
	uint64_t id = mount_id(cur);
	if (id && root_mnt && id == root_mnt)
		return 0;
	if (mount_shared_statmount(cur) == 1)
		return fs_error_set(err, EXDEV,
				    "refusing: '%s' of mount point %s would be created on a shared "
				    "mount (a host volume); nothing was created",
				    comp, path);
	return fs_error_set(err, EXDEV,
			    "refusing: '%s' of mount point %s would be created on another mount "
			    "than the rootfs (a volume bound from the host?); nothing was created",
			    comp, path);
}

int hook_open_mount_point(int root_fd, const char *path, struct fs_error *err)
{
	const uint64_t resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	const uint64_t flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	char comp[NAME_MAX + 1];
	cleanup_close int cur = dup(root_fd);
	if (cur < 0)
		return fs_error_set(err, errno, "dup");
	uint64_t root_mnt = mount_id(root_fd);
	const char *s = path;
	while (*s) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		const char *e = strchrnul(s, '/');
		size_t n = (size_t)(e - s);
		if (n > NAME_MAX)
			return fs_error_set(err, ENAMETOOLONG, "mount point %s", path);
		memcpy(comp, s, n);
		comp[n] = '\0';
		if (!strcmp(comp, ".") || !strcmp(comp, ".."))
			return fs_error_set(err, EINVAL, "mount point %s has . or ..", path);
		int fd = rootfs_openat2(cur, comp, flags, 0, resolve);
		if (fd == -ENOENT) {
			struct stat sb;
			if (fstatat(cur, comp, &sb, AT_SYMLINK_NOFOLLOW) == 0)
				return fs_error_set(err, ELOOP,
						    "mount point %s: '%s' is %s in the rootfs",
						    path, comp, mount_kind(cur, comp));
			int r = mount_may_create(cur, root_mnt, comp, path, err);
			if (r < 0)
				return r;
			if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
				return fs_error_set(err, errno, "creating '%s' of mount point %s",
						    comp, path);
			fd = rootfs_openat2(cur, comp, flags, 0, resolve);
		}
		if (fd < 0) {
			int saved = -fd;
			if (saved == ELOOP || saved == ENOTDIR || saved == EXDEV)
				return fs_error_set(
				    err, saved,
				    "mount point %s: '%s' is %s in the rootfs; refusing", path,
				    comp, mount_kind(cur, comp));
			return fs_error_set(err, saved, "opening '%s' of mount point %s", comp,
					    path);
		}
		close(cur);
		cur = fd;
		s = e;
	}
	return steal_fd(&cur);
}

int hook_mountinfo_shared(FILE *f, uint64_t mnt_id, struct fs_error *err)
{
	cleanup_free char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long id;
		if (sscanf(line, "%llu ", &id) != 1 || id != mnt_id)
			continue;
		/* Optional fields run from field 7 up to the " - " separator. */
		char *sep = strstr(line, " - ");
		if (sep)
			*sep = '\0';
		if (strstr(line, " shared:"))
			return fs_error_set(err, EPERM,
					    "refusing: the mount point is on a shared mount, the "
					    "bundle would propagate to its peers (the host's)"),
			       1;
		return 0;
	}
	return fs_error_set(err, ENOENT, "the mount point's mount is not in mountinfo"), 1;
}

/* statmount(2) (Linux 6.8+): one mount's facts by its unique id, from the
 * caller's mount namespace, without generating the whole mountinfo text
 * (which costs per mount in the namespace, hundreds on a Kubernetes node).
 * The ABI structs, as far as this file reads them (checked on 6.18). */
#ifndef SYS_statmount
#define SYS_statmount 457
#endif
#define MOUNT_STATX_MNT_ID_UNIQUE 0x00004000U
#define MOUNT_STATMOUNT_MNT_BASIC 0x00000002U
#ifndef MS_SHARED
#define MS_SHARED (1 << 20)
#endif
struct mount_id_req {
	uint32_t size, spare;
	uint64_t mnt_id, param;
};
struct mount_statmount {
	uint32_t size, mnt_opts;
	uint64_t mask;
	uint32_t sb_dev_major, sb_dev_minor;
	uint64_t sb_magic;
	uint32_t sb_flags, fs_type;
	uint64_t mnt_id, mnt_parent_id;
	uint32_t mnt_id_old, mnt_parent_id_old;
	uint64_t mnt_attr, mnt_propagation, mnt_peer_group, mnt_master, propagate_from;
	uint32_t mnt_root, mnt_point;
	uint64_t spare2[50];
};

/* 1 shared, 0 not, -1 when statmount cannot tell (older kernel, a mount
 * not in this namespace): the caller falls back to mountinfo. */
static int mount_shared_statmount(int fd)
{
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH, MOUNT_STATX_MNT_ID_UNIQUE, &stx) < 0 ||
	    !(stx.stx_mask & MOUNT_STATX_MNT_ID_UNIQUE))
		return -1;
	struct mount_id_req req = {
	    .size = 24, .mnt_id = stx.stx_mnt_id, .param = MOUNT_STATMOUNT_MNT_BASIC};
	struct mount_statmount sm;
	memset(&sm, 0, sizeof(sm));
	if (syscall(SYS_statmount, &req, &sm, sizeof(sm), 0) < 0 ||
	    !(sm.mask & MOUNT_STATMOUNT_MNT_BASIC) || sm.mnt_id != stx.stx_mnt_id)
		return -1;
	return (sm.mnt_propagation & MS_SHARED) || sm.mnt_peer_group ? 1 : 0;
}

/* Whether the mount fd is on is shared (in a peer group): from
 * statmount(2) in the container's namespace (the hook has joined it; a
 * syscall the container cannot fake) where the kernel has it, else from the
 * container's mountinfo (minfo_fd: the host's /proc/<pid>/mountinfo, opened
 * before joining the namespace, whose /proc may be the container's to
 * fake); also 1 when that cannot be told (fail closed: the container then
 * starts without the bundle). */
static int mount_is_shared(int fd, int minfo_fd, struct fs_error *err)
{
	int sh = mount_shared_statmount(fd);
	if (sh == 1)
		return fs_error_set(err, EPERM,
				    "refusing: the mount point is on a shared mount, the "
				    "bundle would propagate to its peers (the host's)"),
		       1;
	if (sh == 0)
		return 0;
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
		return fs_error_set(err, EPERM, "the mount point's mount id is unknown"), 1;
	int dfd = dup(minfo_fd);
	if (dfd < 0)
		return fs_error_set(err, errno, "reading mountinfo"), 1;
	cleanup_fclose FILE *f = fdopen(dfd, "re");
	if (!f) {
		close(dfd);
		return fs_error_set(err, errno, "reading mountinfo"), 1;
	}
	return hook_mountinfo_shared(f, stx.stx_mnt_id, err);
}

/* In the container's mount namespace: open the mount point under the
 * rootfs without following symlinks, attach the tree there, and check what
 * is now on top of it. */
static int mount_attach(const struct fs_config *cfg, int tree_fd, int minfo_fd, int fd_dir,
			const char *rootfs, struct fs_error *err)
{
	/* The rootfs path is the runtime's (host) path; before pivot_root it
	 * names the container's root in its own mount namespace. */
	cleanup_close int root_fd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return fs_error_set(err, errno,
				    "opening rootfs %s in the container's mount namespace", rootfs);
	cleanup_close int target = hook_open_mount_point(root_fd, cfg->mount_point, err);
	if (target < 0)
		return target;
	if (mount_is_shared(target, minfo_fd, err))
		return -EPERM;
	/* The flags are checked on the tree itself, before and after it is
	 * attached: never by path again, the container can swap what a path
	 * names at any moment (a rename-exchange race). */
	struct statvfs sv;
	const unsigned long want = ST_RDONLY | ST_NOSUID | ST_NODEV;
	if (fstatvfs(tree_fd, &sv) < 0 || (sv.f_flag & want) != want)
		return fs_error_set(err, EPERM, "the bundle mount is not read-only; not attached");
	if (sys_move_mount(tree_fd, "", target, "",
			   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return fs_error_set(err, errno, "move_mount onto %s", cfg->mount_point);
	if (fstatvfs(tree_fd, &sv) == 0 && (sv.f_flag & want) == want)
		return 0;
	/* Not read-only: take it away again, through the host's /proc/self/fd
	 * opened before setns (this namespace's /proc may be the container's). */
	char name[32];
	snprintf(name, sizeof(name), "%d", tree_fd);
	if (fchdir(fd_dir) < 0 || umount2(name, MNT_DETACH) < 0) {
		fs_error_set(err, errno,
			     "the mount at %s is not read-only and could not be detached",
			     cfg->mount_point);
		err->code = ENOTRECOVERABLE;
		return -ENOTRECOVERABLE;
	}
	return fs_error_set(err, EPERM, "the mount was not read-only; detached it");
}

int hook_mount_bundle(const struct fs_config *cfg, int pidfd, pid_t pid, const char *rootfs,
		      struct fs_error *err)
{
	cleanup_close int tree = hook_bundle_tree(cfg->bundle_dir, err);
	if (tree < 0)
		return tree;
	hook_mark("tree");
	/* The host's view of the container's mounts (the caller checked that
	 * pidfd is still pid after reading pid's facts). */
	char mi[64];
	snprintf(mi, sizeof(mi), "/proc/%d/mountinfo", (int)pid);
	cleanup_close int minfo = open(mi, O_RDONLY | O_CLOEXEC);
	if (minfo < 0)
		return fs_error_set(err, errno, "opening %s", mi);
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		return fs_error_set(err, ESRCH, "pid %d exited", (int)pid);
	cleanup_close int fd_dir = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd_dir < 0)
		return fs_error_set(err, errno, "opening /proc/self/fd");
	/* No fork: the hook is single-threaded and does nothing by path after
	 * this (its log, its registry directory and everything it read are
	 * open or done already), so it can join the namespace itself. */
	if (setns(pidfd, CLONE_NEWNS) < 0)
		return fs_error_set(err, errno, "joining the container's mount namespace");
	int r = mount_attach(cfg, tree, minfo, fd_dir, rootfs, err);
	if (r < 0 && r != -ENOTRECOVERABLE) {
		err->code = EPERM;
		return -EPERM;
	}
	return r;
}

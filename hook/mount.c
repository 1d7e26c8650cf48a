/* mount.c - put the agent bundle into a container, read-only.
 *
 * The tree is cloned with open_tree(OPEN_TREE_CLONE) in the hook's (host)
 * mount namespace and made read-only, nosuid, nodev with mount_setattr
 * before it is attached anywhere, so it is never visible writable. A
 * forked child then joins the container's mount namespace (setns on the
 * container's pidfd), opens the mount point under the rootfs component by
 * component without following any symlink (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), creating missing directories, and attaches the
 * tree with move_mount onto that verified fd. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "hook.h"
#include "timeutil.h"

extern volatile pid_t hook_mount_child_pid;

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV  0x00000004
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

struct hook_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static int sys_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to,
			  unsigned flags)
{
	return (int)syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

static int sys_mount_setattr(int dfd, const char *path, unsigned flags, struct hook_mount_attr *a)
{
	return (int)syscall(SYS_mount_setattr, dfd, path, flags, a, sizeof(*a));
}

static int sys_openat2(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = {.flags = flags, .resolve = resolve};
	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
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

int hook_open_mount_point(int root_fd, const char *path, struct fs_error *err)
{
	const uint64_t resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	const uint64_t flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	char comp[NAME_MAX + 1];
	cleanup_close int cur = dup(root_fd);
	if (cur < 0)
		return fs_error_set(err, errno, "dup");
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
		int fd = sys_openat2(cur, comp, flags, resolve);
		if (fd < 0 && errno == ENOENT) {
			struct stat sb;
			if (fstatat(cur, comp, &sb, AT_SYMLINK_NOFOLLOW) == 0)
				return fs_error_set(err, ELOOP,
						    "mount point %s: '%s' is %s in the rootfs",
						    path, comp, mount_kind(cur, comp));
			if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
				return fs_error_set(err, errno, "creating '%s' of mount point %s",
						    comp, path);
			fd = sys_openat2(cur, comp, flags, resolve);
		}
		if (fd < 0) {
			int saved = errno;
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

/* Child status on the pipe: one byte ('0' ok, 'E' refused/failed, 'F' a
 * writable mount could not be removed) then a message. */
static void mount_child_reply(int fd, char code, const char *msg)
{
	char buf[FS_ERROR_MSG_MAX + 2];
	int n = snprintf(buf, sizeof(buf), "%c%s", code, msg);
	if (n > (int)sizeof(buf) - 1)
		n = (int)sizeof(buf) - 1;
	if (write(fd, buf, (size_t)n) < 0) {
		/* nothing more we can do */
	}
}

static int mount_child(const struct fs_config *cfg, int pidfd, int tree_fd, const char *rootfs,
		       int out)
{
	struct fs_error err;
	fs_error_clear(&err);
	if (setns(pidfd, CLONE_NEWNS) < 0) {
		fs_error_set(&err, errno, "joining the container's mount namespace");
		mount_child_reply(out, 'E', err.msg);
		return 1;
	}
	/* The rootfs path is the runtime's (host) path; before pivot_root it
	 * names the container's root in its own mount namespace. */
	cleanup_close int root_fd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		fs_error_set(&err, errno, "opening rootfs %s in the container's mount namespace",
			     rootfs);
		mount_child_reply(out, 'E', err.msg);
		return 1;
	}
	cleanup_close int target = hook_open_mount_point(root_fd, cfg->mount_point, &err);
	if (target < 0) {
		mount_child_reply(out, 'E', err.msg);
		return 1;
	}
	if (sys_move_mount(tree_fd, "", target, "",
			   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		fs_error_set(&err, errno, "move_mount onto %s", cfg->mount_point);
		mount_child_reply(out, 'E', err.msg);
		return 1;
	}
	/* Verify what is now on top of the mount point. */
	cleanup_close int check = sys_openat2(
	    root_fd, cfg->mount_point + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
	    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	struct statvfs sv;
	const unsigned long want = ST_RDONLY | ST_NOSUID | ST_NODEV;
	if (check >= 0 && fstatvfs(check, &sv) == 0 && (sv.f_flag & want) == want) {
		mount_child_reply(out, '0', "mounted");
		return 0;
	}
	/* Not read-only: take it away again. */
	char proc_path[64];
	snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", check >= 0 ? check : target);
	if (umount2(proc_path, MNT_DETACH) < 0) {
		fs_error_set(&err, errno,
			     "the mount at %s is not read-only and could not be detached",
			     cfg->mount_point);
		mount_child_reply(out, 'F', err.msg);
		return 2;
	}
	mount_child_reply(out, 'E', "the mount was not read-only; detached it");
	return 1;
}

static long mount_ms_left(uint64_t deadline)
{
	return (long)((int64_t)deadline - (int64_t)timeutil_now_ms());
}

int hook_mount_bundle(const struct fs_config *cfg, int pidfd, const char *rootfs,
		      unsigned timeout_ms, struct fs_error *err)
{
	uint64_t deadline = timeutil_now_ms() + timeout_ms;

	cleanup_close int tree =
	    sys_open_tree(AT_FDCWD, cfg->bundle_dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		return fs_error_set(err, errno, "open_tree(%s)", cfg->bundle_dir);
	struct hook_mount_attr attr = {
	    .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
	};
	if (sys_mount_setattr(tree, "", AT_EMPTY_PATH, &attr) < 0)
		return fs_error_set(err, errno, "making the bundle mount read-only");

	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return fs_error_set(err, errno, "pipe");
	cleanup_close int rd = pfd[0];
	cleanup_close int wr = pfd[1];
	pid_t child = fork();
	if (child < 0)
		return fs_error_set(err, errno, "fork");
	hook_mount_child_pid = child;
	if (child == 0) {
		close(rd);
		_exit(mount_child(cfg, pidfd, tree, rootfs, wr));
	}
	close(wr);
	wr = -1;

	char buf[FS_ERROR_MSG_MAX + 2];
	size_t n = 0;
	int timed_out = 0;
	for (;;) {
		long left = mount_ms_left(deadline);
		if (left <= 0) {
			timed_out = 1;
			break;
		}
		struct pollfd p = {.fd = rd, .events = POLLIN};
		int pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			timed_out = pr == 0;
			break;
		}
		ssize_t r = read(rd, buf + n, sizeof(buf) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n >= sizeof(buf) - 1)
			break;
	}
	buf[n] = '\0';
	if (timed_out)
		kill(child, SIGKILL);
	int status;
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	hook_mount_child_pid = 0;
	if (timed_out)
		return fs_error_set(err, ETIMEDOUT, "mounting the bundle took longer than %u ms",
				    timeout_ms);
	if (n == 0)
		return fs_error_set(err, EIO, "mount helper died without a reply");
	if (buf[0] == '0')
		return 0;
	fs_error_set(err, 0, "%s", buf + 1);
	if (buf[0] == 'F') {
		err->code = ENOTRECOVERABLE;
		return -ENOTRECOVERABLE;
	}
	err->code = EPERM;
	return -EPERM;
}

/* test_localfs.c - the check that keeps the root process off file systems
 * a container could stall (lib/localfs.h): the mount table parse, a local
 * file accepted, and the root of a FUSE mount whose daemon answers nothing
 * after INIT refused at once (needs root and /dev/fuse). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fusetest.h"
#include "mntcache.h"
#include "localfs.h"
#include "tap.h"
#include "timeutil.h"

static void test_parse(void)
{
	static const char mi[] =
	    "22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw\n"
	    "23 22 0:45 / /x rw master:1 shared:2 - fuse.sshfs host:/ rw,user_id=0\n"
	    "24 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
	    "25 1 0:50 / /y rw no-separator\n"
	    "99999999999999999999999 1 0:1 / /z rw - tmpfs t rw";
	char t[16];
	ok(localfs_mountinfo_type(mi, strlen(mi), 23, t, sizeof(t)) == 1 &&
	       strcmp(t, "fuse.sshfs") == 0,
	   "the type after the separator, past optional fields (%s)", t);
	ok(localfs_mountinfo_type(mi, strlen(mi), 24, t, sizeof(t)) == 1 && !strcmp(t, "ext4"),
	   "a block device file system");
	ok(localfs_mountinfo_type(mi, strlen(mi), 25, t, sizeof(t)) == 0,
	   "no separator: not found");
	ok(localfs_mountinfo_type(mi, strlen(mi), 2, t, sizeof(t)) == 0, "a missing id");
	ok(localfs_mountinfo_type(mi, strlen(mi), 23, t, 5) == 1 && !strcmp(t, "fuse"),
	   "a long type is cut to the buffer");
	ok(localfs_mountinfo_type(mi, 30, 23, t, sizeof(t)) == 0, "reads no further than len");
	ok(!localfs_type_local("fuse") && !localfs_type_local("fuse.sshfs") &&
	       !localfs_type_local("fuseblk") && !localfs_type_local("nfs4") &&
	       !localfs_type_local("9p") && !localfs_type_local("cifs") &&
	       localfs_type_local("overlay") && localfs_type_local("ext4") &&
	       localfs_type_local("tmpfs"),
	   "FUSE and network file systems are not local; overlay, ext4 and tmpfs are");
	/* By device: the superblock's type, whatever mount shows it. */
	ok(localfs_mountinfo_type_dev(mi, strlen(mi), 0, 45, t, sizeof(t)) == 1 &&
	       !strcmp(t, "fuse.sshfs"),
	   "by device 0:45 (%s)", t);
	ok(localfs_mountinfo_type_dev(mi, strlen(mi), 8, 1, t, sizeof(t)) == 1 &&
	       !strcmp(t, "ext4"),
	   "by device 8:1");
	ok(localfs_mountinfo_type_dev(mi, strlen(mi), 0, 4, t, sizeof(t)) == 0 &&
	       localfs_mountinfo_type_dev(mi, strlen(mi), 0, 2, t, sizeof(t)) == 0 &&
	       localfs_mountinfo_type_dev(mi, strlen(mi), 45, 0, t, sizeof(t)) == 0,
	   "no match on a prefix (0:4 of 0:45), on 0:2 of 0:21, or reversed");
	ok(localfs_mountinfo_type_dev(mi, strlen(mi), 0, 50, t, sizeof(t)) == 0,
	   "by device, no separator: not found");
	ok(localfs_mountinfo_type_dev(mi, strlen(mi), 0, 1, t, sizeof(t)) == 1 &&
	       !strcmp(t, "tmpfs"),
	   "a last line without a newline");
	ok(localfs_mountinfo_type_dev(mi, 60, 0, 45, t, sizeof(t)) == 0,
	   "by device, no further than len");
}

static void test_crosses(void)
{
	static const char mi[] = "21 0 0:30 / / rw - overlay overlay rw\n"
				 "22 21 0:31 / /tmp rw - tmpfs tmpfs rw\n"
				 "23 21 0:45 / /usr/lib/debug rw - fuse.x x rw\n"
				 "24 21 0:46 / /my\\040dir rw - nfs4 h:/ rw\n"
				 "25 22 0:47 / /tmp/perf-7.map rw - fuse f rw\n";
	size_t n = strlen(mi);
	char t[16] = "";
	ok(!localfs_mountinfo_crosses(mi, n, "tmp/perf-1.map", t, sizeof(t)),
	   "a path on overlay and tmpfs only");
	ok(localfs_mountinfo_crosses(mi, n, "usr/lib/debug/.build-id/ab/cd.debug", t, sizeof(t)) &&
	       !strcmp(t, "fuse.x"),
	   "a path beneath a FUSE mount (%s)", t);
	ok(localfs_mountinfo_crosses(mi, n, "/usr/lib/debug", t, sizeof(t)),
	   "the mount point itself, with a leading slash");
	ok(!localfs_mountinfo_crosses(mi, n, "usr/lib/debugger/x", t, sizeof(t)),
	   "a sibling whose name starts alike");
	ok(localfs_mountinfo_crosses(mi, n, "my dir/x", t, sizeof(t)) && !strcmp(t, "nfs4"),
	   "an escaped mount point (\\040)");
	ok(localfs_mountinfo_crosses(mi, n, "tmp/perf-7.map", t, sizeof(t)),
	   "a FUSE mount on the file itself");
	static const char fuseroot[] = "30 0 0:50 / / rw - fuse r rw\n";
	ok(localfs_mountinfo_crosses(fuseroot, strlen(fuseroot), "tmp/x", t, sizeof(t)),
	   "a FUSE root: every path");
}

/* A tmpfs file seen through a mount of another namespace that is gone
 * (what a jail's fd is): found by its device, and local. */
static void test_sb(void)
{
	char path[] = "/dev/shm/fs-localfs-XXXXXX";
	int fd = mkstemp(path);
	struct fs_error err = {0};
	ok(fd >= 0 && localfs_check_fd_sb(fd, getpid(), path, &err) == 0,
	   "by device: a file in /dev/shm: %s", err.msg);
	int sv[2] = {-1, -1};
	ok(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 &&
	       localfs_check_fd_sb(sv[0], getpid(), "a socket", &err) == -EXDEV,
	   "by device: a socket's file system is in no table: %s", err.msg);
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

static void test_local(void)
{
	char path[] = "/tmp/fs-localfs-XXXXXX";
	int fd = mkstemp(path);
	struct fs_error err = {0};
	unsigned before = localfs_refused();
	ok(fd >= 0 && localfs_check_fd(fd, getpid(), path, &err) == 0, "a file in /tmp: %s",
	   err.msg);
	ok(localfs_refused() == before, "not counted");
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

static void test_fuse(void)
{
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
		tap_skip(1 + 3 + 2 + 1, "needs root and /dev/fuse");
		return;
	}
	char mnt[] = "/tmp/fs-localfs-XXXXXX", rel[64];
	int made = mkdtemp(mnt) != NULL;
	snprintf(rel, sizeof(rel), "%s/perf-1.map", mnt + 1);
	/* The cache warm with our table before the mount: two checks, one
	 * read (lib/mntcache.h). */
	struct fs_error err = {0};
	unsigned long reads0, hits0, reads1, hits1, reads2, hits2;
	int w1 = made ? localfs_path_ok(getpid(), rel, "a path", &err) : -ENOENT;
	mntcache_counts(&reads0, &hits0);
	int w2 = made ? localfs_path_ok(getpid(), rel, "a path", &err) : -ENOENT;
	mntcache_counts(&reads1, &hits1);
	uint64_t warm_ms = timeutil_now_ms();
	ok(w1 == 0 && w2 == 0 && reads1 == reads0 && hits1 == hits0 + 1,
	   "a path in a local directory: allowed, the second time from the cache (%d %d, reads "
	   "%lu -> %lu)",
	   w1, w2, reads0, reads1);
	int fd = made ? fusetest_mount(mnt, "fs-localfs", 0, 0) : -ENOENT;
	if (fd < 0) {
		tap_skip(3 + 2 + 1, "cannot mount a FUSE file system here");
		rmdir(mnt);
		return;
	}
	pid_t daemon = fork();
	if (daemon == 0)
		_exit(fusetest_hold(fd, -1));
	close(fd);
	/* A FUSE mount made after the cache was filled: the next check sees
	 * it (the poll mark of the mount table, not the table's age). */
	int r0 = localfs_path_ok(getpid(), rel, "a path under a new FUSE mount", &err);
	mntcache_counts(&reads2, &hits2);
	uint64_t since = timeutil_now_ms() - warm_ms;
	ok(r0 == -EXDEV && strstr(err.msg, "fuse"),
	   "a FUSE mount made after the cache was warm is seen at once (%d: %s)", r0, err.msg);
	ok(reads2 == reads1 + 1 && since < MNTCACHE_MAX_AGE_MS,
	   "  by a new read of the table %llu ms after the last (max age %u ms)",
	   (unsigned long long)since, MNTCACHE_MAX_AGE_MS);
	/* The mount's root: an O_PATH open and the check ask the daemon
	 * nothing, so they return although it answers nothing. */
	int root = open(mnt, O_PATH | O_DIRECTORY | O_CLOEXEC);
	unsigned before = localfs_refused();
	uint64_t t0 = timeutil_now_ms();
	int r = root < 0 ? -errno : localfs_check_fd(root, getpid(), "the FUSE root", &err);
	uint64_t took = timeutil_now_ms() - t0;
	ok(r == -EXDEV && strstr(err.msg, "fuse"), "a FUSE mount is refused (%d: %s)", r, err.msg);
	ok(took < 1000, "at once (%llu ms)", (unsigned long long)took);
	ok(localfs_refused() == before + 1, "and counted");
	r = root < 0 ? -errno : localfs_check_fd_sb(root, getpid(), "the FUSE root", &err);
	ok(r == -EXDEV && strstr(err.msg, "fuse"), "by device too (%d: %s)", r, err.msg);
	if (root >= 0)
		close(root);
	kill(daemon, SIGKILL);
	waitpid(daemon, NULL, 0);
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

int main(void)
{
	tap_plan(7 + 6 + 7 + 2 + 2 + 1 + 2 + 3 + 1);
	test_parse();
	test_crosses();
	test_local();
	test_sb();
	test_fuse();
	return tap_done();
}

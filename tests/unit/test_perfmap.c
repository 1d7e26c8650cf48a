/* test_perfmap.c - perf map parsing, lookup, writing and the checked open. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "fusetest.h"
#include "perfmap.h"
#include "tap.h"
#include "timeutil.h"

static struct perfmap *parse(const char *text, int partial)
{
	struct perfmap *m = NULL;
	struct fs_error err = {0};
	if (perfmap_parse(text, strlen(text), partial, &m, &err) < 0)
		tap_diag("parse failed: %s", err.msg);
	return m;
}

static const char *name_at(const struct perfmap *m, uint64_t addr)
{
	const struct perfmap_entry *e = perfmap_lookup(m, addr);
	return e ? e->name : NULL;
}

static void test_basic(void)
{
	struct perfmap *m = parse("7f0010 20 Lfoo/Bar;::baz\n"
				  "0x7f0000 0x10 Interpreter\n"
				  "7f0100 8 LA; with spaces (x, y)\r\n"
				  "7F0200 1 upper",
				  0);
	ok(m, "a valid map parses");
	if (!m)
		return;
	is_int(m->count, 4, "four entries");
	is_int(m->skipped, 0, "nothing skipped");
	is_str(name_at(m, 0x7f0000), "Interpreter", "0x prefix accepted, first byte");
	is_str(name_at(m, 0x7f000f), "Interpreter", "last byte of an entry");
	is_str(name_at(m, 0x7f0010), "Lfoo/Bar;::baz", "next entry starts where one ends");
	is_str(name_at(m, 0x7f002f), "Lfoo/Bar;::baz", "last byte of the second entry");
	ok(!name_at(m, 0x7f0030), "gap between entries finds nothing");
	ok(!name_at(m, 0x10), "below the first entry finds nothing");
	is_str(name_at(m, 0x7f0104), "LA; with spaces (x, y)", "names keep spaces, CR stripped");
	is_str(name_at(m, 0x7f0200), "upper", "upper-case hex and a final line without newline");
	ok(!name_at(m, 0x7f0201), "past the last entry finds nothing");
	ok(m->entries[0].start < m->entries[1].start && m->entries[2].start < m->entries[3].start,
	   "entries are sorted");
	perfmap_free(m);
}

static void test_malformed(void)
{
	char longline[PERFMAP_MAX_LINE + 64];
	memset(longline, 'a', sizeof(longline));
	memcpy(longline, "1000 10 ", 8);
	longline[sizeof(longline) - 2] = '\n';
	longline[sizeof(longline) - 1] = '\0';
	cleanup_free char *text = NULL;
	if (asprintf(&text,
		     "\n"
		     "zzzz 10 notHex\n"
		     "2000\n"
		     "2000 10\n"
		     "2000 10 \n"
		     "3000 0 zeroSize\n"
		     "ffffffffffffff00 1000 overflows\n"
		     "11111111111111111 1 seventeenDigits\n"
		     "4000 10 good\n"
		     "%s"
		     "5000 10 alsoGood\n",
		     longline) < 0)
		return;
	struct perfmap *m = parse(text, 0);
	ok(m, "a map with bad lines still parses");
	if (!m)
		return;
	is_int(m->count, 2, "only the two good lines are kept");
	is_int(m->skipped, 9, "bad, empty, zero-size, overflowing and long lines are skipped");
	is_str(name_at(m, 0x4005), "good", "good line before the long one");
	is_str(name_at(m, 0x5005), "alsoGood", "good line after the long one");
	ok(!name_at(m, 0x1000), "the over-long line is not an entry");
	perfmap_free(m);

	const char nul[] = "1000 10 a\0b\n2000 10 c\n";
	struct fs_error err = {0};
	ok(perfmap_parse(nul, sizeof(nul) - 1, 0, &m, &err) == 0, "NUL bytes parse");
	is_int(m->count, 1, "a line with a NUL byte is skipped");
	perfmap_free(m);

	ok(perfmap_parse("", 0, 0, &m, &err) == 0 && m->count == 0, "empty input: empty map");
	ok(!perfmap_lookup(m, 0), "lookup in an empty map");
	perfmap_free(m);

	ok(perfmap_parse("x", PERFMAP_MAX_INPUT + 1, 0, &m, &err) == -E2BIG,
	   "input over the size limit is refused");
	ok(strstr(err.msg, "limit") != NULL, "and the message says so: %s", err.msg);
}

static void test_partial_tail(void)
{
	struct perfmap *m = parse("1000 10 a\n2000 10 trunc", 1);
	is_int(m ? m->count : 0, 1, "partial_tail drops an unterminated last line");
	perfmap_free(m);
}

static void test_overlaps(void)
{
	struct perfmap *m = parse("1000 100 old\n"
				  "1000 100 recompiled\n"
				  "2000 100 first\n"
				  "2080 100 overlapsFirst\n"
				  "3080 10 olderInner\n"
				  "3000 100 newerOuter\n",
				  0);
	if (!m)
		return;
	is_str(name_at(m, 0x1050), "recompiled", "same start: the later line wins");
	is_str(name_at(m, 0x2010), NULL, "partial overlap: the older entry is dropped");
	is_str(name_at(m, 0x2090), "overlapsFirst", "partial overlap: the newer entry is kept");
	is_str(name_at(m, 0x3085), "newerOuter", "an older inner entry loses to a newer outer one");
	is_int(m->replaced, 3, "three entries replaced");
	for (size_t i = 1; i < m->count; i++)
		if (m->entries[i - 1].start + m->entries[i - 1].size > m->entries[i].start)
			ok(0, "entries %zu and %zu overlap", i - 1, i);
	perfmap_free(m);
}

static void test_write(const char *dir)
{
	struct perfmap *m = parse("2000 10 b c\n1000 20 a\n", 0), *back = NULL;
	struct fs_error err = {0};
	char path[512], buf[256];
	snprintf(path, sizeof(path), "%s/perf-42.map", dir);

	ok(perfmap_write_host(dir, 42, m, &err) == 0, "write_host creates the map: %s", err.msg);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	is_str(buf, "1000 20 a\n2000 10 b c\n", "written sorted, in perf's format");
	ok(perfmap_parse(buf, strlen(buf), 0, &back, &err) == 0 && back->count == 2,
	   "the written map parses back");
	perfmap_free(back);
	ok(perfmap_write_host(dir, 42, m, &err) == 0, "our own map is replaced");
	perfmap_free(m);

	/* container-supplied names with control bytes: escaped on the host */
	m = parse("3000 10 \033]0;owned\007A\001\tB\033[2J\177\\C\n", 0);
	ok(m && m->count == 1, "a name with control bytes parses");
	ok(perfmap_write_host(dir, 42, m, &err) == 0, "and is written");
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	is_str(buf, "3000 10 \\x1b]0;owned\\x07A\\x01\\x09B\\x1b[2J\\x7f\\x5cC\n",
	       "written escaped: no byte below 0x20 but the newline");
	perfmap_free(m);
	m = parse("2000 10 b c\n1000 20 a\n", 0);

	unlink(path);
	if (symlink("/etc/passwd", path) == 0) {
		ok(perfmap_write_host(dir, 42, m, &err) == -EEXIST,
		   "a symlink in place is refused");
		ok(strstr(err.msg, "refusing") != NULL, "with a message: %s", err.msg);
		struct stat st;
		ok(lstat(path, &st) == 0 && S_ISLNK(st.st_mode), "and the symlink is left alone");
		unlink(path);
	}
	if (geteuid() == 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd >= 0) {
			ok(fchown(fd, 12345, 12345) == 0, "chown a foreign map");
			close(fd);
			ok(perfmap_write_host(dir, 42, m, &err) == -EEXIST,
			   "a map owned by someone else is not replaced");
			unlink(path);
		} else {
			tap_skip(2, "cannot create a map to chown");
		}
	} else {
		tap_skip(2, "needs root to chown a map");
	}
	perfmap_free(m);
}

/* The refusal happened without opening name at all: an O_PATH open makes
 * no IN_OPEN event, a real open (even O_NONBLOCK) does, at once. */
static void test_never_opened(int root, const char *dir, const char *name)
{
	struct fs_error err = {0};
	char path[512], buf[4096];
	size_t size;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	cleanup_close int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ok(in >= 0 && inotify_add_watch(in, path, IN_OPEN) >= 0, "watch %s for opens", name);
	perfmap_open_checked(root, name, geteuid(), 1 << 20, &size, -1, &err);
	ok(read(in, buf, sizeof(buf)) < 0 && errno == EAGAIN, "%s was never opened", name);
	/* The control: an open for reading is seen. */
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	ok(fd >= 0 && read(in, buf, sizeof(buf)) > 0, "an open of %s would have been seen", name);
	if (fd >= 0)
		close(fd);
}

static void test_open_checked(const char *dir)
{
	struct fs_error err = {0};
	char path[512];
	size_t size = 0;
	cleanup_close int root = open(dir, O_RDONLY | O_DIRECTORY);
	uid_t me = geteuid();

	snprintf(path, sizeof(path), "%s/good.map", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ok(write(fd, "1000 10 a\n", 10) == 10, "write a map");
	close(fd);
	fd = perfmap_open_checked(root, "good.map", me, 1 << 20, &size, -1, &err);
	ok(fd >= 0 && size == 10, "a regular file of ours opens: %s", err.msg);
	if (fd >= 0)
		close(fd);

	fd = perfmap_open_checked(root, "good.map", me + 1, 1 << 20, &size, -1, &err);
	ok(fd == -EPERM && strstr(err.msg, "owned by"), "another owner is refused: %s", err.msg);

	ok(perfmap_open_checked(root, "good.map", me, 4, &size, -1, &err) == -EFBIG,
	   "a file over the size cap is refused: %s", err.msg);

	snprintf(path, sizeof(path), "%s/sparse.map", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ok(fd >= 0 && ftruncate(fd, 10LL << 30) == 0, "make a 10 GiB sparse file");
	if (fd >= 0)
		close(fd);
	ok(perfmap_open_checked(root, "sparse.map", me, PERFMAP_MAX_CONTAINER_FILE, &size, -1,
				&err) == -EFBIG,
	   "a 10 GiB sparse file is refused: %s", err.msg);
	unlink(path);

	snprintf(path, sizeof(path), "%s/link.map", dir);
	ok(symlink("good.map", path) == 0, "make a symlink");
	ok(perfmap_open_checked(root, "link.map", me, 1 << 20, &size, -1, &err) == -ELOOP,
	   "a symlink is refused: %s", err.msg);

	snprintf(path, sizeof(path), "%s/sub", dir);
	ok(symlink(".", path) == 0, "make a symlinked directory");
	ok(perfmap_open_checked(root, "sub/good.map", me, 1 << 20, &size, -1, &err) == -ELOOP,
	   "a symlink on the path is refused: %s", err.msg);

	ok(perfmap_open_checked(root, "../../../../etc/passwd", 0, 1 << 20, &size, -1, &err) ==
	       -ENOENT,
	   "'..' cannot leave the root: %s", err.msg);

	snprintf(path, sizeof(path), "%s/hard.map", dir);
	char good[512];
	snprintf(good, sizeof(good), "%s/good.map", dir);
	ok(link(good, path) == 0, "make a hard link");
	ok(perfmap_open_checked(root, "hard.map", me, 1 << 20, &size, -1, &err) == -EPERM &&
	       strstr(err.msg, "hard links"),
	   "a hard-linked file is refused: %s", err.msg);

	snprintf(path, sizeof(path), "%s/fifo.map", dir);
	ok(mkfifo(path, 0600) == 0, "make a FIFO");
	ok(perfmap_open_checked(root, "fifo.map", me, 1 << 20, &size, -1, &err) == -EPERM &&
	       strstr(err.msg, "FIFO"),
	   "a FIFO without a writer is refused at once: %s", err.msg);

	test_never_opened(root, dir, "fifo.map");
	if (me == 0) {
		/* What a container root with CAP_MKNOD swaps in: /dev/null. */
		snprintf(path, sizeof(path), "%s/dev.map", dir);
		ok(mknod(path, S_IFCHR | 0600, makedev(1, 3)) == 0, "make a /dev/null node");
		ok(perfmap_open_checked(root, "dev.map", me, 1 << 20, &size, -1, &err) == -EPERM &&
		       strstr(err.msg, "character device"),
		   "a device node is refused: %s", err.msg);
		test_never_opened(root, dir, "dev.map");
	} else {
		tap_skip(2 + 3, "a device node needs root for mknod");
	}

	ok(perfmap_open_checked(root, "missing.map", me, 1 << 20, &size, -1, &err) == -ENOENT,
	   "a missing file: %s", err.msg);

	ok(perfmap_precheck(root, "missing.map", me, 1 << 20, &err) == 0,
	   "precheck: a missing map may be written");
	ok(perfmap_precheck(root, "good.map", me, 1 << 20, &err) == -EPERM,
	   "precheck: the hard-linked good.map is refused: %s", err.msg);
	snprintf(path, sizeof(path), "%s/hard.map", dir);
	unlink(path);
	ok(perfmap_precheck(root, "good.map", me, 1 << 20, &err) == 0,
	   "precheck: a regular file of ours may be rewritten: %s", err.msg);
	ok(perfmap_precheck(root, "fifo.map", me, 1 << 20, &err) == -EPERM,
	   "precheck: a FIFO is refused without opening it: %s", err.msg);
	ok(perfmap_precheck(root, "link.map", me, 1 << 20, &err) == -ELOOP,
	   "precheck: a symlink is refused: %s", err.msg);
	ok(perfmap_precheck(root, "good.map", me + 1, 1 << 20, &err) == -EPERM,
	   "precheck: another owner is refused");
}

/* perfmap_check_fd: an fd a sandboxed child handed over, checked with
 * the rules of perfmap_open_checked plus its file system and open mode. */
static void test_check_fd(const char *dir)
{
	struct fs_error err = {0};
	char path[512], hard[512];
	size_t size = 0;
	uid_t me = geteuid();
	pid_t self = getpid();
	int fd2;

	snprintf(path, sizeof(path), "%s/fd.jit", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ok(fd >= 0 && write(fd, "0 1 2\n", 6) == 6, "write a log");
	ok(perfmap_check_fd(fd, self, me, 1 << 20, &size, "/tmp/fd.jit", &err) == 0 && size == 6,
	   "a regular file of ours on a local file system passes: %s", err.msg);
	ok(perfmap_check_fd(fd, self, me + 1, 1 << 20, &size, "/tmp/fd.jit", &err) == -EPERM &&
	       strstr(err.msg, "owned by"),
	   "another owner is refused: %s", err.msg);
	ok(perfmap_check_fd(fd, self, me, 4, &size, "/tmp/fd.jit", &err) == -EFBIG,
	   "over the size cap is refused: %s", err.msg);
	snprintf(hard, sizeof(hard), "%s/fd-hard.jit", dir);
	ok(link(path, hard) == 0 &&
	       perfmap_recheck_fd(fd, me, 1 << 20, &size, "/tmp/fd.jit", &err) == -EPERM &&
	       strstr(err.msg, "hard links"),
	   "a hard link made after the check is refused by the re-check: %s", err.msg);
	unlink(hard);
	ok(perfmap_recheck_fd(fd, me, 1 << 20, &size, "/tmp/fd.jit", &err) == 0,
	   "and passes once it is gone: %s", err.msg);
	ok(unlink(path) == 0 &&
	       perfmap_recheck_fd(fd, me, 1 << 20, &size, "/tmp/fd.jit", &err) == 0,
	   "and with no name at all (removed, or renamed over): %s", err.msg);
	fd2 = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ok(fd2 >= 0 && write(fd2, "0 1 2\n", 6) == 6, "write the log again");
	if (fd2 >= 0)
		close(fd2);
	if (fd >= 0)
		close(fd);

	fd = open(path, O_PATH | O_CLOEXEC);
	ok(perfmap_check_fd(fd, self, me, 1 << 20, &size, "/tmp/fd.jit", &err) == -EBADF,
	   "an O_PATH fd is refused: %s", err.msg);
	if (fd >= 0)
		close(fd);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ok(perfmap_check_fd(fd, self, me, 1 << 20, &size, "/tmp/fd.jit", &err) == -EBADF,
	   "a write-only fd is refused: %s", err.msg);
	if (fd >= 0)
		close(fd);

	snprintf(path, sizeof(path), "%s/fd.fifo", dir);
	/* O_RDWR: a FIFO opened without blocking, as a child could hand it. */
	fd = mkfifo(path, 0600) == 0 ? open(path, O_RDWR | O_CLOEXEC) : -1;
	ok(fd >= 0 &&
	       perfmap_check_fd(fd, self, me, 1 << 20, &size, "/tmp/fd.jit", &err) == -EPERM &&
	       strstr(err.msg, "FIFO"),
	   "a FIFO is refused: %s", err.msg);
	if (fd >= 0)
		close(fd);
	int sv[2] = {-1, -1};
	ok(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0 &&
	       perfmap_check_fd(sv[0], self, me, 1 << 20, &size, "/tmp/fd.jit", &err) < 0,
	   "a socket is refused: %s", err.msg);
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}

	if (me != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
		tap_skip(2, "a FUSE mount needs root and /dev/fuse");
		return;
	}
	char mnt[600];
	snprintf(mnt, sizeof(mnt), "%s/fuse", dir);
	int dev = mkdir(mnt, 0700) == 0 ? fusetest_mount(mnt, "fs-perfmap", 0, 0) : -ENOENT;
	if (dev < 0) {
		tap_skip(2, "cannot mount a FUSE file system here");
		rmdir(mnt);
		return;
	}
	pid_t daemon = fork();
	if (daemon == 0)
		_exit(fusetest_hold(dev, -1));
	close(dev);
	/* A daemon that answers nothing: a stat or read of the file would
	 * hang, so the file system must be checked first. */
	fd = open(mnt, O_PATH | O_DIRECTORY | O_CLOEXEC);
	uint64_t t0 = timeutil_now_ms();
	int r =
	    fd < 0 ? -errno : perfmap_check_fd(fd, self, me, 1 << 20, &size, "/tmp/fd.jit", &err);
	uint64_t took = timeutil_now_ms() - t0;
	ok(r == -EXDEV && strstr(err.msg, "fuse"), "a file on FUSE is refused (%d: %s)", r,
	   err.msg);
	ok(took < 1000, "at once, before any stat (%llu ms)", (unsigned long long)took);
	if (fd >= 0)
		close(fd);
	kill(daemon, SIGKILL);
	waitpid(daemon, NULL, 0);
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

int main(void)
{
	tap_plan(73 + 14);
	char dir[] = "/tmp/test_perfmap.XXXXXX";
	test_basic();
	test_malformed();
	test_partial_tail();
	test_overlaps();
	if (!mkdtemp(dir))
		tap_diag("mkdtemp failed");
	else {
		test_write(dir);
		test_open_checked(dir);
		test_check_fd(dir);
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			tap_diag("cleanup of %s failed", dir);
	}
	return tap_done();
}

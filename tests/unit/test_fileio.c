/* test_fileio.c - lib/fileio.c: the capped reader, mkdir -p and the atomic replace that the
 * registry (fileio_replace) and the verbs' outputs (fileio_atomic_*, via
 * sidecar/outfile.c) share. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "tap.h"

static char dir[] = "/tmp/test_fileio.XXXXXX";

static int entries(const char *d)
{
	int n = 0;
	DIR *dd = opendir(d);
	struct dirent *de;
	while (dd && (de = readdir(dd)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (dd)
		closedir(dd);
	return n;
}

static int fill_fail(int fd, void *arg, struct fs_error *err)
{
	return fs_error_set(err, EIO, "fill failed on purpose");
}

/* The capped reader: refusing past the cap, or keeping the first max bytes. */
static void test_read_cap(void)
{
	int fds[2];
	char *out = NULL;
	size_t len = 0;
	struct fs_error err;
	const char text[] = "0123456789abcdef0123456789abcdef";
	for (int cut = 0; cut < 2; cut++) {
		if (pipe(fds) < 0 || write(fds[1], text, 32) != 32) {
			ok(0, "pipe");
			continue;
		}
		close(fds[1]);
		int r =
		    fileio_read_fd_flags(fds[0], 10, cut ? FILEIO_READ_CUT : 0, &out, &len, &err);
		close(fds[0]);
		if (cut)
			ok(r == 0 && len == 10 && !memcmp(out, text, 10) && out[10] == '\0',
			   "FILEIO_READ_CUT: 32 bytes read as their first 10 (%d, %zu)", r, len);
		else
			ok(r == -E2BIG, "without it, 32 bytes over a cap of 10 are refused (%d)",
			   r);
		free(out);
		out = NULL;
	}
}

int main(void)
{
	tap_plan(19 + 2);
	test_read_cap();
	char p[512], q[512];
	struct fs_error err;
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(p, sizeof(p), "%s/a/b/c", dir);
	is_int(fileio_mkdir_p(p, 0755, 0700), 0, "mkdir -p of three levels");
	struct stat sb;
	ok(stat(p, &sb) == 0 && (sb.st_mode & 0777) == 0700, "the last one has its mode");
	is_int(fileio_mkdir_p(p, 0755, 0700), 0, "again: nothing to do");
	snprintf(q, sizeof(q), "%s/file", dir);
	close(open(q, O_CREAT | O_WRONLY, 0600));
	is_int(fileio_mkdir_p(q, 0755, 0700), -ENOTDIR, "a file in the way: -ENOTDIR");
	snprintf(q, sizeof(q), "%s/link", dir);
	ok(symlink(p, q) == 0, "symlink to a directory");
	is_int(fileio_mkdir_p(q, 0755, 0700), -ENOTDIR, "a symlink is not the directory");

	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int before = entries(dir);
	is_int(fileio_replace_buf(dfd, dir, "x.json", 0640, "{}\n", 3, &err), 0, "replace_buf");
	snprintf(q, sizeof(q), "%s/x.json", dir);
	ok(stat(q, &sb) == 0 && (sb.st_mode & 0777) == 0640 && sb.st_size == 3,
	   "written with its mode, whatever the umask");
	ok(fileio_replace(dfd, dir, "x.json", 0600, fill_fail, NULL, &err) < 0 &&
	       strstr(err.msg, "on purpose"),
	   "a failing fill is reported: %s", err.msg);
	ok(stat(q, &sb) == 0 && sb.st_size == 3, "and the old file is intact");
	is_int(entries(dir), before + 1, "no temporary file left");

	struct fileio_atomic a;
	int fd = fileio_atomic_open(&a, dfd, dir, "y.svg", 0644, &err);
	ok(fd >= 0, "atomic open");
	ok(write(fd, "abc", 3) == 3, "write");
	snprintf(q, sizeof(q), "%s/y.svg", dir);
	ok(access(q, F_OK) < 0, "nothing under the final name before commit");
	is_int(fileio_atomic_commit(&a, fd, &err), 0, "commit");
	close(fd);
	ok(stat(q, &sb) == 0 && sb.st_size == 3, "in place after commit");
	fd = fileio_atomic_open(&a, dfd, dir, "y.svg", 0644, &err);
	ok(fd >= 0 && write(fd, "abcdef", 6) == 6, "a second version");
	fileio_atomic_abort(&a);
	close(fd);
	ok(stat(q, &sb) == 0 && sb.st_size == 3, "abort keeps the old one");
	is_int(entries(dir), before + 2, "no temporary file left");
	close(dfd);
	snprintf(q, sizeof(q), "rm -rf '%s'", dir);
	if (system(q) != 0)
		tap_diag("cleanup failed");
	return tap_done();
}

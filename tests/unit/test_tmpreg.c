/* test_tmpreg.c - lib/tmpreg.c through lib/fileio.c's atomic writes: what
 * a killed run leaves (its temporary files, the outputs it renamed into
 * place) is removed, and nothing it did not create: not a file that
 * replaced one of its own, not through a symlink, not in a directory that
 * replaced its own. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "tap.h"
#include "tmpreg.h"

static char dir[] = "/tmp/test_tmpreg.XXXXXX";

static int exists(const char *d, const char *name)
{
	char p[PATH_MAX];
	struct stat sb;
	snprintf(p, sizeof(p), "%s/%s", d, name);
	return lstat(p, &sb) == 0;
}

/* Entries of d whose name starts with prefix. */
static int count_prefix(const char *d, const char *prefix)
{
	int n = 0;
	DIR *dd = opendir(d);
	struct dirent *de;
	while (dd && (de = readdir(dd)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	if (dd)
		closedir(dd);
	return n;
}

static void put(const char *d, const char *name, const char *text)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", d, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* An atomic file of name in dfd; output: listed once committed. fd. */
static int open_atomic(struct fileio_atomic *a, int dfd, const char *d, const char *name,
		       int output)
{
	struct fs_error err = {0};
	int fd = fileio_atomic_open(a, dfd, d, name, 0644, &err);
	a->output = output;
	if (fd >= 0 && write(fd, "x", 1) != 1)
		tap_diag("write failed");
	return fd;
}

/* In one process: what stays listed and what tmpreg_clean does with it. */
static void test_clean(struct tmpreg *t)
{
	char sub[PATH_MAX], old[PATH_MAX], p[PATH_MAX];
	struct fileio_atomic a, b, c, d, e, f, g;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	memset(t, 0, sizeof(*t));
	tmpreg_publish(t);
	put(dir, "user.txt", "mine");

	int fa = open_atomic(&a, dfd, dir, "a.svg", 1);
	struct fs_error err = {0};
	is_int(fileio_atomic_commit(&a, fa, &err), 0, "an output committed");
	int fb = open_atomic(&b, dfd, dir, "b.folded", 1); /* never committed */
	char btmp[NAME_MAX + 1];
	snprintf(btmp, sizeof(btmp), "%s", b.tmp);
	int fc = open_atomic(&c, dfd, dir, "c.map", 0);
	is_int(fileio_atomic_commit(&c, fc, &err), 0, "a side file committed");
	int fd = open_atomic(&d, dfd, dir, "d.svg", 1);
	fileio_atomic_abort(&d);
	/* an output replaced since by somebody else's file */
	int fe = open_atomic(&e, dfd, dir, "e.svg", 1);
	is_int(fileio_atomic_commit(&e, fe, &err), 0, "another output committed");
	put(dir, "e.new", "theirs");
	snprintf(p, sizeof(p), "%s/e.new", dir);
	snprintf(old, sizeof(old), "%s/e.svg", dir);
	ok(rename(p, old) == 0, "and replaced by another file");
	/* a temporary name turned into a symlink to a file of the user */
	int ff = open_atomic(&f, dfd, dir, "f.svg", 1);
	char ftmp[NAME_MAX + 1];
	snprintf(ftmp, sizeof(ftmp), "%s", f.tmp);
	snprintf(p, sizeof(p), "%s/%s", dir, ftmp);
	snprintf(old, sizeof(old), "%s/user.txt", dir);
	ok(unlink(p) == 0 && symlink(old, p) == 0, "a temporary name made a symlink");
	/* a directory replaced by another one holding the same name */
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	mkdir(sub, 0755);
	int sfd = open(sub, O_RDONLY | O_DIRECTORY);
	int fg = open_atomic(&g, sfd, sub, "g.svg", 1);
	char gtmp[NAME_MAX + 1];
	snprintf(gtmp, sizeof(gtmp), "%s", g.tmp);
	snprintf(old, sizeof(old), "%s/sub.old", dir);
	ok(rename(sub, old) == 0 && mkdir(sub, 0755) == 0, "its directory replaced");
	put(sub, gtmp, "theirs");

	int kept = -1;
	int removed = tmpreg_clean(t, &kept);
	is_int(removed, 2, "the committed output and the open temporary file removed");
	is_int(kept, 3, "three left alone: a replaced file, a symlink, a replaced directory");
	ok(!exists(dir, "a.svg") && !exists(dir, btmp), "a.svg and b's temporary file are gone");
	ok(exists(dir, "c.map"), "a side file (not an output) stays once committed");
	ok(exists(dir, "user.txt") && exists(dir, "e.svg") && exists(dir, ftmp),
	   "the user's file, the file that replaced e.svg and the symlink stay");
	ok(exists(sub, gtmp) && exists(old, gtmp), "nothing removed in either directory");
	is_int(tmpreg_clean(t, NULL), 0, "a second clean removes nothing more");
	tmpreg_publish(NULL);
	int fh = open_atomic(&a, dfd, dir, "h.svg", 1);
	ok(a.reg == -1, "nothing listed once no table is published");
	fileio_atomic_abort(&a);
	close(fa), close(fb), close(fc), close(fd), close(fe), close(ff), close(fg), close(fh);
	close(sfd);
	close(dfd);
}

/* The watchdog's shape: the table shared, the child killed while its
 * output is open; the parent removes it. */
static void test_killed_child(struct tmpreg *t)
{
	int p[2];
	memset(t, 0, sizeof(*t));
	if (pipe(p) < 0) {
		tap_skip(3, "pipe");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		struct fileio_atomic a;
		tmpreg_publish(t);
		int dfd = open(dir, O_RDONLY | O_DIRECTORY);
		int fd = open_atomic(&a, dfd, dir, "killed.svg", 1);
		if (write(p[1], fd >= 0 ? "y" : "n", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c = 0;
	close(p[1]);
	ok(pid > 0 && read(p[0], &c, 1) == 1 && c == 'y' && count_prefix(dir, ".killed.svg.") == 1,
	   "the child opened its output");
	close(p[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	int kept = -1;
	is_int(tmpreg_clean(t, &kept), 1, "its temporary file removed by the parent");
	ok(kept == 0 && count_prefix(dir, ".killed.svg.") == 0, "nothing left of it");
}

/* More files than slots: the ones not listed are counted, not lost silently. */
static void test_full(struct tmpreg *t)
{
	struct fileio_atomic a[TMPREG_SLOTS + 1];
	int fds[TMPREG_SLOTS + 1], dfd = open(dir, O_RDONLY | O_DIRECTORY);
	char name[32];
	memset(t, 0, sizeof(*t));
	tmpreg_publish(t);
	for (int i = 0; i <= TMPREG_SLOTS; i++) {
		snprintf(name, sizeof(name), "full%d", i);
		fds[i] = open_atomic(&a[i], dfd, dir, name, 1);
	}
	ok(a[TMPREG_SLOTS - 1].reg >= 0 && a[TMPREG_SLOTS].reg == -1, "one too many is not listed");
	int kept = -1;
	is_int(tmpreg_clean(t, &kept), TMPREG_SLOTS, "the listed ones removed");
	is_int(kept, 1, "the one not listed is counted");
	fileio_atomic_abort(&a[TMPREG_SLOTS]);
	for (int i = 0; i <= TMPREG_SLOTS; i++)
		close(fds[i]);
	tmpreg_publish(NULL);
	close(dfd);
}

int main(void)
{
	tap_plan(20);
	if (!mkdtemp(dir)) {
		tap_skip_all("mkdtemp");
		return tap_done();
	}
	struct tmpreg *t =
	    mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		tap_skip_all("mmap");
		return tap_done();
	}
	test_clean(t);
	test_killed_child(t);
	test_full(t);
	char q[PATH_MAX + 16];
	snprintf(q, sizeof(q), "rm -rf '%s'", dir);
	if (system(q) != 0)
		tap_diag("cleanup failed");
	return tap_done();
}

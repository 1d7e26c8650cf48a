/* test_threadnames.c - thread names for pprof's thread labels
 * (sidecar/profile/threadnames.c) over a fake /proc in a temporary
 * directory: first read, refresh, renames, exits, sanitizing, the bound. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "threadnames.h"

static char root[] = "/tmp/test_threadnames.XXXXXX";

/* Write /<pid>/task/<tid>/comm under root (len bytes of name). */
static void comm(int pid, int tid, const char *name, size_t len)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%d", root, pid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%d/task", root, pid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%d/task/%d", root, pid, tid);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/%d/task/%d/comm", root, pid, tid);
	FILE *f = fopen(p, "w");
	if (!f)
		return;
	fwrite(name, 1, len, f);
	fclose(f);
}

static const char *name_of(struct threadnames *t, uint32_t i)
{
	const char *n = threadnames_name(t, i, NULL, NULL);
	return n ? n : "(null)";
}

int main(void)
{
	tap_plan(23);
	const uint64_t s = 1000000000ull;
	if (!mkdtemp(root)) {
		tap_skip_all("mkdtemp failed");
		return 0;
	}
	comm(10, 11, "hot-0\n", 6);
	comm(10, 12, "C2 CompilerThre\n", 16);
	comm(10, 13, "a\tb;c\x7f\xff\n", 8);

	struct threadnames *t = threadnames_new(root);
	ok(t != NULL, "threadnames_new");
	uint32_t a = threadnames_get(t, 10, 11, 5 * s);
	ok(a == 1, "first thread: index 1");
	is_str(name_of(t, a), "hot-0", "named by its comm, newline dropped");
	pid_t pid = 0, tid = 0;
	threadnames_name(t, a, &pid, &tid);
	ok(pid == 10 && tid == 11, "pid and tid kept");
	is_str(name_of(t, threadnames_get(t, 10, 12, 5 * s)), "C2 CompilerThre",
	       "a 15-byte comm whole");
	is_str(name_of(t, threadnames_get(t, 10, 13, 5 * s)), "a?b;c?\xef\xbf\xbd",
	       "control bytes -> '?', invalid UTF-8 -> U+FFFD");
	is_str(name_of(t, threadnames_get(t, 10, 14, 5 * s)), "", "unreadable comm: empty name");

	comm(10, 11, "renamed\n", 8);
	ok(threadnames_get(t, 10, 11, 5 * s + 1) == a, "within the refresh time: same index");
	uint32_t b = threadnames_get(t, 10, 11, 7 * s);
	ok(b != a && b != 0, "renamed, read again after the refresh time: a new index");
	is_str(name_of(t, b), "renamed", "with the new name");
	is_str(name_of(t, a), "hot-0", "the old index keeps the old name");
	ok(threadnames_get(t, 10, 11, 9 * s) == b, "unchanged name after a refresh: same index");

	ok(threadnames_get(t, 10, 11, 8 * s) == b, "a sample older than the last read: same index");
	threadnames_exit(t, 11);
	ok(threadnames_get(t, 10, 11, 9 * s + 1) == b,
	   "exited, the tid running under the same name: same index");
	threadnames_exit(t, 11);
	char gone[PATH_MAX];
	snprintf(gone, sizeof(gone), "%s/10/task/11/comm", root);
	unlink(gone);
	ok(threadnames_get(t, 10, 11, 9 * s + 2) == b,
	   "exited and gone: a late sample of the same thread");
	comm(10, 11, "reused\n", 7);
	uint32_t c = threadnames_get(t, 10, 11, 9 * s + 3);
	ok(c != b && c != 0, "exited, the tid reused under another name: a new thread");
	is_str(name_of(t, c), "reused", "named as now");
	threadnames_exit(t, 999); /* unknown: nothing happens */
	ok(threadnames_get(t, 20, 11, 9 * s + 2) != c, "the same tid in another pid: a new thread");
	ok(threadnames_name(t, 0, NULL, NULL) == NULL, "index 0 has no name");
	ok(threadnames_name(t, 100000, NULL, NULL) == NULL, "an unknown index has no name");

	/* the bound: indexes stop at THREADNAMES_MAX, then 0 (no label) */
	size_t before = threadnames_count(t);
	uint32_t last = 1;
	for (pid_t i = 0; i < THREADNAMES_MAX && last; i++)
		last = threadnames_get(t, 10, 100000 + i, 10 * s);
	ok(last == 0, "a full table gives 0");
	is_int(threadnames_count(t), THREADNAMES_MAX, "after %d indexes (%zu before)",
	       THREADNAMES_MAX, before);
	ok(threadnames_get(t, 10, 12, 5 * s + 3) != 0, "known threads still get theirs");
	threadnames_free(t);
	threadnames_free(NULL);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		tap_diag("rm -rf %s failed", root);
	return tap_done();
}

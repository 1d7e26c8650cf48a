/* test_ctprocs.c - finding a container's processes (lib/ctprocs.c): the
 * cgroup v2 line of /proc/<pid>/cgroup texts, the bounded walk of
 * cgroup.procs over a fake tree of directories, and the whole lookup on
 * ourselves (a process the scan by pid namespace must find). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget.h"
#include "ctprocs.h"
#include "fileio.h"
#include "proc.h"
#include "tap.h"

static char root[] = "/tmp/test_ctprocs.XXXXXX";

static void put(const char *rel, const char *content)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	char *slash = strrchr(p, '/');
	*slash = '\0';
	if (fileio_mkdir_p(p, 0700, 0700) < 0)
		tap_diag("mkdir -p %s failed", p);
	*slash = '/';
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static int path_of(const char *text, char *buf, size_t len)
{
	buf[0] = '\0';
	return ctprocs_v2_path_of(text, strlen(text), buf, len);
}

/* ctprocs_walk from root/rel: the pids found, sorted, as "a b c". */
static int walk(const char *rel, char *out, size_t len)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	int fd = open(p, O_RDONLY | O_DIRECTORY);
	pid_t *v = NULL;
	size_t n = 0, cap = 0;
	int r = fd < 0 ? -errno : ctprocs_walk(fd, &v, &n, &cap);
	if (fd >= 0)
		close(fd);
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			pid_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	out[0] = '\0';
	for (size_t i = 0, o = 0; i < n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%d", i ? " " : "", (int)v[i]);
	free(v);
	return r;
}

int main(void)
{
	tap_plan(20);
	char buf[PATH_MAX], got[256];
	if (!mkdtemp(root)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	/* the v2 line */
	is_int(path_of("9:name=systemd:/x\n0::/kubepods/pod1/ctr\n", buf, sizeof(buf)), 0,
	       "the 0:: line among v1 ones");
	is_str(buf, "/kubepods/pod1/ctr", "  its path");
	is_int(path_of("0::/\n", buf, sizeof(buf)), -ENOENT, "the root cgroup: the whole host");
	is_int(path_of("4:memory:/ctr\n", buf, sizeof(buf)), -ENOENT, "v1 only: no v2 line");
	is_int(path_of("0::/a/../b\n", buf, sizeof(buf)), -ENOENT, "a .. component refused");
	is_int(path_of("0::/a/..\n", buf, sizeof(buf)), -ENOENT, "a trailing .. refused");
	is_int(path_of("0::/a/..b\n", buf, sizeof(buf)), 0, "..b is a name");
	is_int(path_of("0::relative\n", buf, sizeof(buf)), -ENOENT, "a relative path refused");
	is_int(path_of("0::/gone (deleted)\n", buf, sizeof(buf)), -ENOENT, "a deleted cgroup");
	char small[8];
	is_int(path_of("0::/kubepods/pod1\n", small, sizeof(small)), -ENOENT,
	       "a path that does not fit is refused, not cut");
	/* the walk: the cgroup and its descendants */
	put("ctr/cgroup.procs", "12\n7\n");
	put("ctr/inner/cgroup.procs", "40\n");
	put("ctr/inner/deeper/cgroup.procs", "0\n41\n"); /* 0: outside our pid namespace */
	put("ctr/empty/cgroup.procs", "");
	put("other/cgroup.procs", "99\n");
	is_int(walk("ctr", got, sizeof(got)), 0, "walk of a cgroup with descendants");
	is_str(got, "7 12 40 41", "  every pid of the subtree, none of a sibling, no 0");
	put("bad/cgroup.procs", "12\nx13\n");
	is_int(walk("bad", got, sizeof(got)), -EINVAL, "a cgroup.procs not in the kernel's format");
	/* depth beyond the budget: the caller falls back to the scan */
	char deep[PATH_MAX] = "deep";
	for (unsigned i = 0; i <= BUDGET_CTPROCS_DEPTH; i++)
		strcat(deep, "/d");
	char deepfile[PATH_MAX + 16];
	snprintf(deepfile, sizeof(deepfile), "%s/cgroup.procs", deep);
	put(deepfile, "5\n");
	is_int(walk("deep", got, sizeof(got)), -E2BIG, "deeper than BUDGET_CTPROCS_DEPTH: E2BIG");
	/* more directories than the budget */
	for (unsigned i = 0; i < BUDGET_CTPROCS_CGROUPS; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "wide/c%u/cgroup.procs", i);
		put(rel, "");
	}
	is_int(walk("wide", got, sizeof(got)), -E2BIG, "more than BUDGET_CTPROCS_CGROUPS: E2BIG");
	/* the whole lookup on ourselves: found, whichever way was taken */
	struct registry_entry e = {.pid = getpid()};
	snprintf(e.id, sizeof(e.id), "self");
	proc_start_time(getpid(), &e.start_time, NULL);
	proc_ns_inode(getpid(), "pid", &e.pid_ns, NULL);
	pid_t *v = NULL;
	size_t n = 0;
	enum ctprocs_how how = 0;
	is_int(ctprocs_list(&e, NULL, &v, &n, &how, NULL), 0, "ctprocs_list on ourselves");
	int found = 0, sorted = 1;
	for (size_t i = 0; i < n; i++) {
		found |= v[i] == getpid();
		if (i && v[i - 1] >= v[i])
			sorted = 0;
	}
	ok(found, "  we are among the %zu processes found (%s)", n,
	   how == CTPROCS_CGROUP ? "by cgroup" : "by pid namespace");
	ok(sorted, "  ascending, no duplicates");
	free(v);
	/* an entry whose init is not the one recorded: the scan, by pid ns */
	e.start_time++;
	v = NULL;
	is_int(ctprocs_list(&e, NULL, &v, &n, &how, NULL), 0, "an init whose start time differs");
	is_int(how, CTPROCS_PIDNS, "  falls back to the scan by pid namespace");
	free(v);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", root);
	return tap_done();
}

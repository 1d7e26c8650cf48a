/* test_cgroup.c - the cgroup directory perf filters a container by
 * (sidecar/profile/cgroup.c), on /proc/<pid>/cgroup texts and a fake
 * cgroup root in a temporary directory (the function takes the root for
 * this). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "tap.h"

static char root[] = "/tmp/test_cgroup.XXXXXX";

static void mk(const char *rel)
{
	char p[PATH_MAX], cmd[PATH_MAX + 16];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	if (system(cmd) != 0)
		tap_diag("mkdir -p %s failed", p);
}

static void touch(const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
}

/* cgroup_perf_dir_of on a literal; *out gets the path relative to root. */
static int lookup(const char *text, const char **out)
{
	static char buf[PATH_MAX];
	char t[1024];
	snprintf(t, sizeof(t), "%s", text);
	buf[0] = '\0';
	int r = cgroup_perf_dir_of(t, root, buf, sizeof(buf));
	*out = !strncmp(buf, root, strlen(root)) ? buf + strlen(root) : buf;
	return r;
}

/* Our own /proc/self/cgroup read by the function, resolved in the fake
 * root where both the v1 perf_event and the v2 directory exist: the answer
 * follows from the text read here (v1 first; "/" is the whole host). */
static void test_self(void)
{
	char text[4096], v1[PATH_MAX] = "", v2[PATH_MAX] = "", want[2 * PATH_MAX], buf[PATH_MAX];
	FILE *f = fopen("/proc/self/cgroup", "r");
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = '\0';
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2 && !strncmp(l, "0::", 3))
			snprintf(v2, sizeof(v2), "%s", c2 + 1);
		else if (c2 && strstr(l, ":perf_event") && strstr(l, ":perf_event") < c2 + 1)
			snprintf(v1, sizeof(v1), "%s", c2 + 1);
	}
	const char *path = v1[0] ? v1 : v2;
	char rel[PATH_MAX + 16];
	snprintf(rel, sizeof(rel), "%s%s", v1[0] ? "perf_event" : "", path);
	mk(rel);
	snprintf(want, sizeof(want), "%s%s%s", root, v1[0] ? "/perf_event" : "", path);
	int r = cgroup_perf_dir(getpid(), root, buf, sizeof(buf));
	if (!path[0] || !strcmp(path, "/")) {
		is_int(r, -ENOENT, "cgroup_perf_dir on ourselves, in the root cgroup: none");
	} else {
		is_int(r, 0, "cgroup_perf_dir on ourselves (%s)", path);
	}
	if (r == 0)
		is_str(buf, want, "  our cgroup's directory under the root given");
	else
		ok(path[0] == '\0' || !strcmp(path, "/"), "  none only for the root cgroup (%s)",
		   path);
}

int main(void)
{
	tap_plan(16);
	const char *dir;
	if (!mkdtemp(root)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	/* hybrid: v1 perf_event hierarchy and a v2 unified one */
	mk("perf_event/ctr-a");
	mk("unified/system.slice/ctr-b");
	is_int(lookup("6:perf_event:/ctr-a\n0::/system.slice/ctr-b\n", &dir), 0,
	       "v1 perf_event wins when it exists");
	is_str(dir, "/perf_event/ctr-a", "its directory");
	is_int(lookup("6:perf_event:/\n0::/system.slice/ctr-b\n", &dir), -ENOENT,
	       "v1 perf_event at its root: the whole host, refused (no fall back to v2)");
	is_int(lookup("6:cpu,perf_event:/gone\n", &dir), -ENOENT, "a v1 directory that is missing");
	is_int(lookup("0::/system.slice/ctr-b\n", &dir), 0, "v2 under unified/ (hybrid)");
	is_str(dir, "/unified/system.slice/ctr-b", "its directory");
	is_int(lookup("0::/\n", &dir), -ENOENT, "v2 root cgroup: the whole host, refused");
	is_int(lookup("0::/elsewhere\n", &dir), -ENOENT, "no such v2 directory, no pure v2 root");
	/* pure v2: cgroup.controllers at the root */
	touch("cgroup.controllers");
	mk("kubepods/pod1/ctr-c");
	is_int(lookup("0::/kubepods/pod1/ctr-c\n", &dir), 0, "pure v2");
	is_str(dir, "/kubepods/pod1/ctr-c", "its directory");
	is_int(lookup("garbage\n1:name=systemd\n\n", &dir), -ENOENT, "malformed lines ignored");
	is_int(lookup("", &dir), -ENOENT, "empty file");
	char small[8];
	char t[] = "0::/kubepods/pod1/ctr-c\n";
	is_int(cgroup_perf_dir_of(t, root, small, sizeof(small)), -ENOENT,
	       "a path that does not fit is refused, not cut");
	/* the real thing: our own /proc/self/cgroup against the real root */
	char buf[PATH_MAX];
	test_self();
	is_int(cgroup_perf_dir(-1, NULL, buf, sizeof(buf)), -ENOENT, "no such process");
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		tap_diag("rm -rf %s failed", root);
	return tap_done();
}

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

int main(void)
{
	tap_plan(15);
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
	int r = cgroup_perf_dir(getpid(), NULL, buf, sizeof(buf));
	ok(r == 0 || r == -ENOENT, "cgroup_perf_dir on ourselves: %s", r == 0 ? buf : "none");
	is_int(cgroup_perf_dir(-1, NULL, buf, sizeof(buf)), -ENOENT, "no such process");
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		tap_diag("rm -rf %s failed", root);
	return tap_done();
}

/* cgroup.c - the cgroup directory perf can filter a container by: see cgroup.h */
#include "cgroup.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "proc.h"

static int cgroup_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cgroup_perf_dir_of(char *text, const char *root, char *buf, size_t len)
{
	char v2[PATH_MAX] = "", v1[PATH_MAX] = "";
	if (!root)
		root = "/sys/fs/cgroup";
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = '\0';
		const char *ctl = c1 + 1, *cg = c2 + 1;
		if (!strcmp(l, "0") && !*ctl)
			snprintf(v2, sizeof(v2), "%s", cg);
		else if (strstr(ctl, "perf_event"))
			snprintf(v1, sizeof(v1), "%s", cg);
	}
	/* With a v1 perf_event hierarchy the kernel filters by that one. */
	if (v1[0]) {
		if (strcmp(v1, "/") && snprintf(buf, len, "%s/perf_event%s", root, v1) < (int)len &&
		    cgroup_is_dir(buf))
			return 0;
		return -ENOENT;
	}
	if (!v2[0] || !strcmp(v2, "/"))
		return -ENOENT; /* the root cgroup is the whole host */
	if (snprintf(buf, len, "%s/unified%s", root, v2) < (int)len && cgroup_is_dir(buf))
		return 0;
	char probe[PATH_MAX];
	snprintf(probe, sizeof(probe), "%s/cgroup.controllers", root);
	if (access(probe, F_OK) == 0 && snprintf(buf, len, "%s%s", root, v2) < (int)len &&
	    cgroup_is_dir(buf))
		return 0;
	return -ENOENT;
}

int cgroup_perf_dir(pid_t pid, const char *root, char *buf, size_t len)
{
	char path[64];
	cleanup_free char *text = NULL;
	size_t n = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (proc_read_file(path, 1u << 16, &text, &n, NULL) < 0)
		return -ENOENT;
	return cgroup_perf_dir_of(text, root, buf, len);
}

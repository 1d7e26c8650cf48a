/* ctprocs.c - the processes of one container from its cgroup v2 subtree,
 * or from /proc by pid namespace: see ctprocs.h */
#include "ctprocs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "budget.h"
#include "cleanup.h"
#include "fileio.h"
#include "proc.h"
#include "rootfs.h"

int ctprocs_v2_path_of(const char *text, size_t len, char *buf, size_t buflen)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t l = (size_t)(le - p);
		if (l > 3 && !memcmp(p, "0::", 3)) {
			const char *path = p + 3;
			size_t pl = l - 3;
			if (pl < 2 || path[0] != '/' || pl >= buflen || memchr(path, '\0', pl))
				return -ENOENT; /* the root cgroup, or nothing usable */
			memcpy(buf, path, pl);
			buf[pl] = '\0';
			/* The kernel writes canonical paths; refuse anything else. */
			for (const char *c = buf; (c = strstr(c, "/..")); c += 3)
				if (c[3] == '/' || c[3] == '\0')
					return -ENOENT;
			/* A deleted cgroup is shown as "PATH (deleted)". */
			if (strstr(buf, " (deleted)"))
				return -ENOENT;
			return 0;
		}
		p = le + 1;
	}
	return -ENOENT;
}

struct ctprocs_walk_state {
	pid_t **v;
	size_t *n, *cap;
	unsigned dirs;
};

static int ctprocs_push(struct ctprocs_walk_state *w, pid_t pid)
{
	if (*w->n >= BUDGET_CTPROCS_PIDS)
		return -E2BIG;
	if (*w->n == *w->cap) {
		size_t nc = *w->cap ? *w->cap * 2 : 64;
		pid_t *nv = reallocarray(*w->v, nc, sizeof(**w->v));
		if (!nv)
			return -ENOMEM;
		*w->v = nv;
		*w->cap = nc;
	}
	(*w->v)[(*w->n)++] = pid;
	return 0;
}

/* cgroup.procs of dirfd into the list. */
static int ctprocs_read_procs(struct ctprocs_walk_state *w, int dirfd)
{
	cleanup_close int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	cleanup_free char *text = NULL;
	size_t len = 0;
	int r = fileio_read_fd(fd, BUDGET_CTPROCS_FILE_BYTES, &text, &len, NULL);
	if (r < 0)
		return r;
	for (char *p = text; *p;) {
		char *e;
		long pid = strtol(p, &e, 10);
		if (e == p || (*e && *e != '\n'))
			return -EINVAL; /* not the kernel's format */
		/* 0: a process outside our pid namespace (we cannot name it) */
		if (pid > 0 && pid <= INT_MAX && (r = ctprocs_push(w, (pid_t)pid)) < 0)
			return r;
		p = *e ? e + 1 : e;
	}
	return 0;
}

static int ctprocs_walk_at(struct ctprocs_walk_state *w, int dirfd, unsigned depth)
{
	if (++w->dirs > BUDGET_CTPROCS_CGROUPS || depth > BUDGET_CTPROCS_DEPTH)
		return -E2BIG;
	int r = ctprocs_read_procs(w, dirfd);
	/* EOPNOTSUPP: a threaded cgroup, whose processes its domain lists;
	 * ENOENT: removed meanwhile, nothing in it */
	if (r < 0 && r != -EOPNOTSUPP && r != -ENOENT)
		return r;
	int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	cleanup_closedir DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		cleanup_close int sub =
		    openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			if (errno == ENOENT)
				continue; /* removed meanwhile: nothing in it */
			return -errno;
		}
		if ((r = ctprocs_walk_at(w, sub, depth + 1)) < 0)
			return r;
	}
	return 0;
}

int ctprocs_walk(int dirfd, pid_t **v, size_t *n, size_t *cap)
{
	struct ctprocs_walk_state w = {.v = v, .n = n, .cap = cap};
	return ctprocs_walk_at(&w, dirfd, 0);
}

/* The cgroup2 mount under root: root/unified (hybrid hosts) or root. */
static int ctprocs_v2_root(const char *root, char *buf, size_t len)
{
	struct statfs sf;
	if (snprintf(buf, len, "%s/unified", root) < (int)len && statfs(buf, &sf) == 0 &&
	    sf.f_type == CGROUP2_SUPER_MAGIC)
		return 0;
	if (snprintf(buf, len, "%s", root) < (int)len && statfs(buf, &sf) == 0 &&
	    sf.f_type == CGROUP2_SUPER_MAGIC)
		return 0;
	return -ENOENT;
}

static int ctprocs_in_ns(pid_t pid, uint64_t ns)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return stat(path, &st) == 0 && (uint64_t)st.st_ino == ns;
}

static int ctprocs_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* The cgroup way; -ENOENT/-E2BIG/... when it cannot be used. */
static int ctprocs_by_cgroup(const struct registry_entry *e, const char *cgroup_root, pid_t **out,
			     size_t *nout)
{
	char path[64], cg[PATH_MAX], base[PATH_MAX];
	cleanup_free char *text = NULL;
	size_t len = 0;
	uint64_t st = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)e->pid);
	if (e->pid <= 0 || proc_read_file(path, 1u << 16, &text, &len, NULL) < 0 ||
	    ctprocs_v2_path_of(text, len, cg, sizeof(cg)) < 0)
		return -ENOENT;
	/* read by pid: the file was the entry's init's only if it still is */
	if (proc_start_time(e->pid, &st, NULL) < 0 || st != e->start_time)
		return -ESRCH;
	if (ctprocs_v2_root(cgroup_root ? cgroup_root : "/sys/fs/cgroup", base, sizeof(base)) < 0)
		return -ENOENT;
	cleanup_close int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return -errno;
	cleanup_close int cfd =
	    rootfs_openat2(bfd, cg + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0,
			   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV);
	if (cfd < 0)
		return cfd;
	cleanup_free pid_t *v = NULL;
	size_t n = 0, cap = 0;
	int r = ctprocs_walk(cfd, &v, &n, &cap);
	if (r < 0)
		return r;
	qsort(v, n, sizeof(*v), ctprocs_cmp);
	size_t k = 0;
	int init_seen = 0;
	pid_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] == prev)
			continue; /* listed twice: it moved during the walk */
		prev = v[i];
		if (v[i] == e->pid)
			init_seen = 1;
		if (ctprocs_in_ns(v[i], e->pid_ns))
			v[k++] = v[i];
	}
	if (!init_seen)
		return -ESRCH; /* the init left that cgroup: it is not the container's */
	*out = steal_pointer(&v);
	*nout = k;
	return 0;
}

static int ctprocs_by_pidns(const struct registry_entry *e, pid_t **out, size_t *nout,
			    struct fs_error *err)
{
	cleanup_closedir DIR *d = opendir("/proc");
	if (!d)
		return fs_error_set(err, errno, "opening /proc");
	cleanup_free pid_t *v = NULL;
	size_t n = 0, cap = 0;
	struct ctprocs_walk_state w = {.v = &v, .n = &n, .cap = &cap};
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX || !ctprocs_in_ns((pid_t)pid, e->pid_ns))
			continue;
		int r = ctprocs_push(&w, (pid_t)pid);
		if (r == -E2BIG)
			break;
		if (r < 0)
			return fs_error_set(err, -r, "listing the processes of container %s",
					    e->id);
	}
	qsort(v, n, sizeof(*v), ctprocs_cmp);
	*out = steal_pointer(&v);
	*nout = n;
	return 0;
}

int ctprocs_list(const struct registry_entry *e, const char *cgroup_root, pid_t **pids, size_t *n,
		 enum ctprocs_how *how, struct fs_error *err)
{
	*pids = NULL;
	*n = 0;
	int r = ctprocs_by_cgroup(e, cgroup_root, pids, n);
	if (r == -ENOMEM)
		return fs_error_set(err, ENOMEM, "listing the processes of container %s", e->id);
	if (r == 0) {
		if (how)
			*how = CTPROCS_CGROUP;
		return 0;
	}
	if (how)
		*how = CTPROCS_PIDNS;
	return ctprocs_by_pidns(e, pids, n, err);
}

/* ctprocs.h - the processes of one container, found from its cgroup rather
 * than from every process on the host.
 *
 * `run`, `map`, `top` and the off-CPU view look for the processes (and the
 * JVMs) of one container. Walking all of /proc for that costs a stat of
 * /proc/<pid>/ns/pid per host process (~8 us each: +10 ms per 1,000 host
 * processes). With cgroup v2 the container's own processes are listed by
 * the kernel: cgroup.procs of its init's cgroup and of that cgroup's
 * descendants. Every pid found there is still checked to be in the
 * container's pid namespace, exactly as the /proc walk checks it, so a host
 * process moved into the container's cgroup is not one of the container's,
 * and a host process that only joined its pid namespace (nsenter -p) is not
 * in its cgroup: the sampler, which filters by that cgroup, never sees it
 * either (docs/security.md, "Finding a container's processes"). */
#ifndef FS_CTPROCS_H
#define FS_CTPROCS_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "registry.h"

enum ctprocs_how {
	CTPROCS_CGROUP = 1, /* cgroup.procs of the init's cgroup v2 subtree */
	CTPROCS_PIDNS = 2,  /* every /proc entry, by pid namespace (the fallback) */
};

/* Host pids (in our pid namespace) of the processes in e->pid_ns, sorted
 * ascending, into a malloc'd *pids (NULL when *n is 0).
 *
 * The cgroup way: the cgroup v2 line of /proc/<e->pid>/cgroup, read and
 * then checked to belong to the init the entry names (e->start_time); the
 * cgroup.procs of that directory under cgroup_root (NULL: /sys/fs/cgroup,
 * its "unified" mount on hybrid hosts; it must be a cgroup2 file system)
 * and of its descendants, at most BUDGET_CTPROCS_CGROUPS directories,
 * BUDGET_CTPROCS_DEPTH levels and BUDGET_CTPROCS_PIDS pids; the init itself
 * must be among them (else it moved meanwhile). Any of that not holding
 * (no cgroup v2, the init in the root cgroup, an entry whose init is gone,
 * a bound reached) falls back to the pid namespace scan of /proc, which
 * grows with the host. *how (may be NULL) says which way was taken.
 * 0, or -errno (-ENOMEM; /proc unreadable for the fallback). */
int ctprocs_list(const struct registry_entry *e, const char *cgroup_root, pid_t **pids, size_t *n,
		 enum ctprocs_how *how, struct fs_error *err);

/* The cgroup v2 path ("0::PATH" line) in the text of a /proc/<pid>/cgroup
 * file, into buf. 0, or -ENOENT (no such line, an empty or relative path,
 * the root cgroup "/", or a path with a ".." component or too long for
 * buf). Exposed for tests and the fuzzer. */
int ctprocs_v2_path_of(const char *text, size_t len, char *buf, size_t buflen);

/* The pids listed in dirfd's cgroup.procs and in those of its descendant
 * directories, appended to *v (*n used, *cap allocated), within the
 * bounds above. 0, -E2BIG (a bound reached: the caller falls back),
 * -ENOMEM or another -errno. Exposed for tests (a fake tree of
 * directories works). */
int ctprocs_walk(int dirfd, pid_t **v, size_t *n, size_t *cap);

#endif

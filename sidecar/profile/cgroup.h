/* cgroup.h - the cgroup directory of a process that perf_event_open can
 * filter by (PERF_FLAG_PID_CGROUP). */
#ifndef FS_CGROUP_H
#define FS_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

/* The container's cgroup directory usable for perf (its cgroup v2 path
 * under <root>/unified or <root>, or the perf_event v1 one), into buf.
 * 0 or -ENOENT (none: use the pid namespace). */
int cgroup_perf_dir(pid_t pid, const char *root, char *buf, size_t len);

/* The same decision on the text of a /proc/<pid>/cgroup file (modified in
 * place; exposed for tests). */
int cgroup_perf_dir_of(char *text, const char *root, char *buf, size_t len);

#endif

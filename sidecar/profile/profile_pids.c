/* profile_pids.c - the first sight of a process in scope: its slot in the
 * pid table, its maps cached for the symbolizer, and the choice between the
 * HotSpot side (profile_jvms.c) and the native one (profile_native.c).
 * Above both, so that neither calls the other (profile_int.h has the
 * contracts). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "attach.h"
#include "cleanup.h"
#include "ctprocs.h"
#include "proc.h"
#include "profile_int.h"
#include "symbols.h"

/* First sight of pid: cache its maps for the symbolizer (so it can be
 * symbolized after it exits), note whether it is a JVM, warn about frame
 * pointers once. */
struct profile_pid *profile_pid_note(struct profile *p, pid_t pid)
{
	struct profile_pid *pp = profile_pid_slot(p, pid);
	if (pp->pid == pid)
		return pp;
	if (p->npids >= PROFILE_MAX_PIDS)
		return NULL; /* still symbolized, lazily; just not remembered */
	pp->pid = pid;
	p->npids++;
	proc_start_time(pid, &pp->start_time, NULL);
	symbolizer_load_pid(p->sym, pid, NULL);
	if (attach_check_hotspot(pid, NULL) == 0)
		profile_pid_jvm(p, pp);
	else
		profile_pid_native(p, pp);
	return pp;
}

int profile_pid_scan(struct profile *p)
{
	if (p->o.unwind == PROFILE_UNWIND_FP)
		return 0;
	if (p->o.pid) {
		struct profile_pid *pp = profile_pid_note(p, p->o.pid);
		return pp && pp->native;
	}
	/* the container's processes (lib/ctprocs.h): its cgroup, not all of /proc */
	cleanup_free pid_t *v = NULL;
	size_t n = 0;
	if (ctprocs_list(&p->entry, p->o.cgroup_root, &v, &n, NULL, NULL) < 0)
		return 0;
	int any = 0;
	for (size_t i = 0; i < n && p->npids < PROFILE_MAX_PIDS; i++) {
		struct profile_pid *pp = profile_pid_note(p, v[i]);
		any |= pp && pp->native;
	}
	return any;
}

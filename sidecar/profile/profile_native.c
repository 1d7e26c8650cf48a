/* profile_native.c - which processes that are not JVMs get the native
 * unwinder (nativeunwind.h) and when the window needs stack copies for
 * them (profile_int.h has the contract of each function; docs/unwind.md
 * the policy).
 *
 * A process is looked at once, at its first sample (or at open, for those
 * running then) and again after an exec: its executable mappings are read
 * and the CFI of each file it maps (cached by file identity, walked in the
 * ELF child) says whether the file was built with frame pointers
 * (cfi_proc_fp_missing). One file without them (on Debian: the program
 * itself, or glibc) is enough: the kernel's frame-pointer walk breaks at
 * every frame of such a file. Such a process gets the native unwinder when
 * the window has stack copies; when it has none (auto), the events are
 * reopened with copies at the next poll, as for a JVM. A process whose
 * every file keeps frame pointers keeps the kernel's chain, copies or not.
 * With --unwind fp nothing here runs. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cfi.h"
#include "nativeunwind.h"
#include "profile_int.h"

/* Look at pp (not a JVM) once: does a file it maps lack frame pointers? */
static void profile_native_check(struct profile *p, struct profile_pid *pp)
{
	struct cfi_proc *maps = NULL;
	pp->native_checked = 1;
	if (!p->cfi || cfi_proc_open(p->cfi, pp->pid, &maps, NULL) < 0)
		return;
	pp->native = cfi_proc_fp_missing(maps, pp->lacks, sizeof(pp->lacks)) == 1;
	cfi_proc_free(maps);
	if (pp->native)
		p->st.native_wanted++;
}

/* pp lacks frame pointers: the native unwinder when the window has stack
 * copies, else (auto, events open) a reopen with copies. */
static void profile_native_give(struct profile *p, struct profile_pid *pp)
{
	struct fs_error err = {0};
	if (p->nu) {
		if (nativeunwind_add(p->nu, pp->pid, pp->lacks, &err) < 0 && !p->warned_native) {
			p->warned_native = 1;
			profile_warn(p, "pid %d keeps the kernel's frame-pointer chains: %s",
				     (int)pp->pid, err.msg);
		}
	} else if (p->o.unwind == PROFILE_UNWIND_AUTO && p->s && !p->no_reopen) {
		p->want_copies = 1;
	}
}

void profile_pid_native(struct profile *p, struct profile_pid *pp)
{
	if (pp->jvm || p->o.unwind == PROFILE_UNWIND_FP)
		return;
	if (!pp->native_checked)
		profile_native_check(p, pp);
	if (pp->native && p->opened)
		profile_native_give(p, pp);
}

void profile_native_known(struct profile *p)
{
	for (size_t i = 0; i < PROFILE_PID_SLOTS; i++)
		if (p->pids[i].pid && !p->pids[i].jvm && p->pids[i].native)
			profile_native_give(p, &p->pids[i]);
}

void profile_native_forget(struct profile *p, struct profile_pid *pp)
{
	if (p->nu)
		nativeunwind_remove(p->nu, pp->pid);
	pp->native = 0;
	pp->native_checked = 0;
}

/* The nativeunwind counts of one process, as the summary shows them. */
static void profile_native_entry(const struct nativeunwind_stats *ns, struct profile_unwinder *u)
{
	memset(u, 0, sizeof(*u));
	u->pid = ns->pid;
	u->native = 1;
	u->fp_missing = 1;
	snprintf(u->why, sizeof(u->why), "%s", ns->lacks);
	u->samples = ns->samples;
	u->reached_root = ns->ends[UNWIND_END_ROOT];
	u->frames = ns->frames;
	u->native_cfi = ns->native_cfi;
	u->native_fp = ns->native_fp;
	u->unwind_ns = ns->unwind_ns;
}

static void profile_native_add_rest(struct profile_stats *st, const struct profile_unwinder *u)
{
	st->native_more++;
	st->native_rest.samples += u->samples;
	st->native_rest.reached_root += u->reached_root;
	st->native_rest.frames += u->frames;
	st->native_rest.unwind_ns += u->unwind_ns;
}

/* Insert u into st->native, kept sorted by samples (most first); past
 * PROFILE_MAX_NATIVE the fewest go to st->native_rest. */
static void profile_native_insert(struct profile_stats *st, const struct profile_unwinder *u)
{
	size_t k = st->nnative;
	if (k == PROFILE_MAX_NATIVE) {
		if (u->samples <= st->native[k - 1].samples) {
			profile_native_add_rest(st, u);
			return;
		}
		profile_native_add_rest(st, &st->native[--k]);
	} else {
		st->nnative++;
	}
	for (; k > 0 && st->native[k - 1].samples < u->samples; k--)
		st->native[k] = st->native[k - 1];
	st->native[k] = *u;
}

void profile_native_stats(const struct profile *p, struct profile_stats *st)
{
	st->nnative = 0;
	st->native_more = 0;
	memset(&st->native_rest, 0, sizeof(st->native_rest));
	for (size_t i = 0; p->nu && i < nativeunwind_count(p->nu); i++) {
		struct nativeunwind_stats ns;
		struct profile_unwinder u;
		nativeunwind_stats(p->nu, i, &ns);
		profile_native_entry(&ns, &u);
		profile_native_insert(st, &u);
	}
}

/* profile_jvms.c - the processes and JVMs of a window: the pid table, which
 * JVM gets the HotSpot unwinder and what it loads before the window, the
 * JIT slots, and the warnings about them (profile_int.h). Used by every
 * other file of the folder; calls none of them. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "attach.h"
#include "jvmflags.h"
#include "jvmunwind.h"
#include "proc.h"
#include "profile_int.h"

void profile_warn(struct profile *p, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	if (!p->o.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->o.warn(p->o.warn_ctx, msg);
}

/* ---- processes ----------------------------------------------------------- */

struct profile_pid *profile_pid_slot(struct profile *p, pid_t pid)
{
	size_t mask = PROFILE_PID_SLOTS - 1;
	for (size_t i = ((size_t)pid * 0x9E3779B1u) & mask;; i = (i + 1) & mask)
		if (p->pids[i].pid == pid || p->pids[i].pid == 0)
			return &p->pids[i];
}

/* pid runs HotSpot: count it, choose its unwinder (jvmunwind.h whenever
 * the window has stack copies), and warn
 * once if it lacks frame pointers and gets no HotSpot unwinder. */
/* Give JVM pp its unwinder (jvmunwind.h whenever the window has stack
 * copies: with frame pointers too, for their interpreted frames' names),
 * ask for copies when it lacks frame pointers and they are off (auto: the
 * next poll reopens the events, profile_reopen), or warn once that its
 * stacks will be shallow. */
static void profile_pid_unwinder(struct profile *p, struct profile_pid *pp)
{
	struct profile_unwinder *u = pp->unwinder ? &p->st.unwinder[pp->unwinder - 1] : NULL;
	int missing = u ? u->fp_missing : jvmflags_fp_missing(pp->pid, NULL) == 1;
	struct fs_error err = {0};
	if (u && u->hotspot)
		return;
	if (p->ju) {
		if (jvmunwind_add(p->ju, pp->pid, &err) == 0) {
			if (u) {
				u->hotspot = 1;
				u->why[0] = '\0';
			}
			return;
		}
		if (u)
			snprintf(u->why, sizeof(u->why), "%s", err.msg);
	} else if (p->o.unwind == PROFILE_UNWIND_AUTO && p->s && !p->no_reopen) {
		/* a JVM started during the window: reopen with copies */
		p->want_copies = 1;
		return;
	} else if (missing && u) {
		snprintf(u->why, sizeof(u->why), "%s",
			 p->o.unwind == PROFILE_UNWIND_FP ? "--unwind fp" : "no stack copies");
	}
	if (missing && !pp->warned_fp) {
		const char *comm = symbolizer_comm(p->sym, pp->pid);
		pp->warned_fp = 1;
		profile_warn(p,
			     "JVM pid %d (%s) runs without -XX:+PreserveFramePointer and gets no "
			     "HotSpot unwinder (%s): its Java stacks will be shallow (cut after "
			     "the first compiled frame); restart it with "
			     "-XX:+PreserveFramePointer (e.g. in JAVA_TOOL_OPTIONS)",
			     (int)pp->pid, comm ? comm : "?", u ? u->why : "too many JVMs");
	}
}

/* Every JVM seen so far: its unwinder, once the events are open (or
 * reopened with copies). */
void profile_unwind_known(struct profile *p)
{
	for (size_t i = 0; i < PROFILE_PID_SLOTS; i++)
		if (p->pids[i].pid && p->pids[i].jvm)
			profile_pid_unwinder(p, &p->pids[i]);
}

/* pid runs HotSpot: count it, note whether it has frame pointers, and
 * (once the window is open) choose its unwinder. */
void profile_pid_jvm(struct profile *p, struct profile_pid *pp)
{
	if (pp->jvm)
		return;
	pp->jvm = 1;
	p->st.jvms++;
	if (p->st.nunwinder < PROFILE_MAX_JVMS) {
		struct profile_unwinder *u = &p->st.unwinder[p->st.nunwinder++];
		memset(u, 0, sizeof(*u));
		u->pid = pp->pid;
		u->fp_missing = jvmflags_fp_missing(pp->pid, NULL) == 1;
		pp->unwinder = (int)p->st.nunwinder;
	}
	if (p->opened)
		profile_pid_unwinder(p, pp);
}

/* libjvm.so's symbol table of every JVM unwound, loaded now (the ELF
 * child parses it: ~50 ms) rather than at its first frame in the window. */
void profile_preload_libjvm(struct profile *p)
{
	for (size_t i = 0; i < PROFILE_PID_SLOTS; i++) {
		pid_t pid = p->pids[i].pid;
		uint64_t text = pid && p->pids[i].jvm ? jvmunwind_libjvm_text(p->ju, pid) : 0;
		if (text)
			(void)symbolizer_addr(p->sym, pid, text, 0, NULL, NULL);
	}
}

/* The slot of pid in p->jit, added if new; NULL when full. */
struct profile_jit *profile_jit_slot(struct profile *p, pid_t pid)
{
	for (size_t i = 0; i < p->njit; i++)
		if (p->jit[i].pid == pid)
			return &p->jit[i];
	if (p->njit == PROFILE_MAX_JVMS)
		return NULL;
	p->jit[p->njit] = (struct profile_jit){.pid = pid};
	return &p->jit[p->njit++];
}

/* A window's log could not be read: the JVM exited (expected: its frames
 * keep the names read so far) or something failed. */
void profile_window_warn(struct profile *p, pid_t pid, int r, const char *why)
{
	struct profile_pid *pp = profile_pid_slot(p, pid);
	/* ENOEXEC: libjvm.so is unmapped already (an exiting JVM, a zombie) */
	if (r == -ESRCH || r == -ENOEXEC ||
	    (pp->pid == pid && pp->start_time && !proc_alive(pid, pp->start_time)))
		profile_warn(p,
			     "JVM pid %d exited during the window: its Java frames are named "
			     "from its JIT log as read before it exited",
			     (int)pid);
	else
		profile_warn(p,
			     "JVM pid %d: reading its JIT log failed (%s); code compiled after "
			     "this may stay unnamed",
			     (int)pid, why);
}

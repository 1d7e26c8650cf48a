/* offcpu.h - off-CPU and wall-clock profiles (`run --event offcpu|wall`,
 * docs/run.md "Events"): the state of every thread of the container's
 * processes, read from the host at a fixed rate.
 *
 * Every tick (opts.frequency, default 99 Hz, whatever the context-switch
 * rate of the container) each thread of each process in scope (the
 * container's pid namespace, or opts.pid) is looked at:
 *
 *   /proc/<pid>/task/<tid>/stat       its state (R, S, D, ...) and start time
 *   /proc/<pid>/task/<tid>/schedstat  time on a CPU, time waiting for one,
 *                                     and how often it was scheduled
 *   /proc/<pid>/task/<tid>/syscall    the user sp and pc of a blocked thread
 *   /proc/<pid>/task/<tid>/stack      its kernel frames (root), unless
 *                                     opts.user_only
 *   process_vm_readv from sp          a copy of its user stack (opts.stack_copy)
 *
 * A blocked thread (any state but R) becomes a sample weighted by the
 * time since the previous tick, in microseconds: its user stack unwound by
 * the profile's unwinders (the HotSpot-aware one for JVMs, through
 * profile_add_sample; offcpu_native.h's CFI walk for other processes),
 * then its kernel frames, then its state as the leaf frame ("[sleeping]",
 * "[blocked: io]", ...). A thread that has not been scheduled since the
 * previous tick (schedstat unchanged) has the same stack: its last chain
 * is counted again without reading its memory, so idle threads cost two
 * small reads per tick.
 *
 * OFFCPU_EVENT_WALL adds the time threads were runnable but waiting for a
 * CPU (schedstat's run-queue delay) as "[runnable]"; their time on a CPU
 * comes from the profile's own cpu-clock samples (profile_opts.on_cpu_frame,
 * weighted by their period), so each thread's total is the window.
 *
 * Bounds: at most OFFCPU_MAX_PROCS processes and OFFCPU_MAX_THREADS threads
 * looked at per tick, and a tick ends after OFFCPU_TICK_BUDGET_PCT of its
 * interval: the threads not reached lose that tick's time (counted in the
 * stats, docs/run.md). The chain cache is fixed (OFFCPU_CACHE_SLOTS). A
 * process's memory is read only while its pidfd says it is the process
 * found at discovery (proc_pidfd_recheck after each read), so a recycled
 * pid is never read. Not thread-safe. */
#ifndef FS_OFFCPU_H
#define FS_OFFCPU_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "profile.h"
#include "registry.h"
#include "cleanup.h"

#define OFFCPU_MAX_PROCS	  256
#define OFFCPU_MAX_THREADS	  4096 /* per tick, all processes together */
#define OFFCPU_CACHE_SLOTS	  4096 /* threads whose last chain is kept */
#define OFFCPU_CHAIN_MAX	  (SYMBOLIZER_MAX_FRAMES + 1)
#define OFFCPU_KERNEL_FRAMES	  32 /* of /proc/<tid>/stack */
#define OFFCPU_TICK_BUDGET_PCT	  50
#define OFFCPU_PROCS_REFRESH_MS	  1000
#define OFFCPU_DEFAULT_STACK_COPY 32768
#define OFFCPU_FDS_MAX		  2048 /* schedstat files kept open */
#define OFFCPU_FDS_SPARE	  512  /* fds left for everything else */
#define OFFCPU_EXEC_MAX		  1024 /* executable mappings kept per process */
/* Looks in a row that count a thread's last chain again because it blocked
 * at the same wait point (offcpu.c): then it is walked anew. */
#define OFFCPU_SAME_POINT_MAX 16
/* A thread blocked at one place (schedstat unchanged) for OFFCPU_IDLE_AFTER
 * looks in a row is looked at every OFFCPU_IDLE_EVERY ticks (offcpu.c). */
#define OFFCPU_IDLE_AFTER 8
#define OFFCPU_IDLE_EVERY 4
/* The thread list of a process is read again after this (a new thread's
 * first ms until then are not seen). */
#define OFFCPU_TIDS_REFRESH_MS 100

enum offcpu_event {
	OFFCPU_EVENT_CPU = 0, /* not ours: the sampler's CPU profile */
	OFFCPU_EVENT_OFFCPU,  /* blocked threads only */
	OFFCPU_EVENT_WALL,    /* blocked + runnable here, on-CPU by the profile */
};

struct offcpu_opts {
	const struct registry_entry *entry; /* the container */
	pid_t pid;			    /* one process of it; 0 all */
	enum offcpu_event event;
	unsigned frequency;   /* ticks per second; 0 = 99 */
	unsigned stack_copy;  /* bytes of user stack per read; 0 = default */
	int user_only;	      /* no kernel frames */
	unsigned max_threads; /* per tick; 0 = OFFCPU_MAX_THREADS (tests: fewer) */
};

struct offcpu_stats {
	uint64_t ticks, late_ticks; /* late: the budget ended the tick early */
	uint64_t thread_ticks;	    /* threads looked at, all ticks */
	uint64_t blocked;	    /* samples of blocked threads */
	uint64_t reused;	    /* of those, the last chain counted again */
	uint64_t same_point;	    /* and of those, after a wake-up, at the same wait point */
	uint64_t idle_skips;	    /* ticks an idle thread was not looked at (kept for it) */
	uint64_t copies;	    /* user stacks copied */
	uint64_t no_stack;	    /* blocked, but no user stack (kernel thread, gone) */
	uint64_t capped;	    /* threads not looked at in a tick (cap, budget) */
	uint64_t capped_us;	    /* their time, lost */
	uint64_t recycled;	    /* reads thrown away: the process was gone */
	uint64_t cpu_ns;	    /* this process's CPU time in ticks */
	unsigned procs;		    /* processes in scope at the last refresh */
};

struct offcpu;

/* Start polling the scope of o into p (opened with no_events, and with
 * on_cpu_frame for OFFCPU_EVENT_WALL). 0 or -errno. */
int offcpu_new(struct profile *p, const struct offcpu_opts *o, struct offcpu **out,
	       struct fs_error *err);

/* Tick when due, then wait up to timeout_ms (or until the next tick) for
 * the profile's events. 0, or -EINTR when a signal interrupted the wait,
 * or -errno. */
int offcpu_poll(struct offcpu *oc, int timeout_ms, struct fs_error *err);

/* The window (or one interval of `top`) ends: one last tick counts the
 * time since the previous one; with OFFCPU_EVENT_WALL each thread's
 * on-CPU samples not folded yet are scaled to its run time since the
 * previous call (profile_scale_on_cpu). Call before profile_fold; polling
 * may go on after it. */
void offcpu_stop(struct offcpu *oc);

void offcpu_stats(const struct offcpu *oc, struct offcpu_stats *st);
void offcpu_free(struct offcpu *oc);
FS_DEFINE_CLEANUP(struct offcpu, offcpu_free)
#define cleanup_offcpu __attribute__((cleanup(offcpu_free_cleanup)))

/* "cpu", "offcpu" or "wall" into *out: 0 or -EINVAL. */
int offcpu_parse_event(const char *s, enum offcpu_event *out);

/* The leaf frame of a thread state letter of /proc/<pid>/stat:
 * "[sleeping]" (S), "[blocked: io]" (D), "[stopped]" (T, t), "[idle]" (I),
 * "[running]" (R), "[other: X]" otherwise (buf of 16). */
const char *offcpu_state_frame(char state, char *buf);

/* Parse a /proc/<pid>/task/<tid>/syscall line: 1 with *sp and *pc of a
 * thread blocked in (or outside, "-1 sp pc") a system call, 0 running or
 * unparsable. */
int offcpu_parse_syscall(const char *line, uint64_t *sp, uint64_t *pc);

/* Where a blocked thread waits, from its syscall line: the system call
 * (UINT64_MAX: blocked outside one), its first argument (the futex word,
 * the fd, ...), and the user sp and pc. */
struct offcpu_wait_point {
	uint64_t nr, arg0, sp, pc;
};
/* 1 with *wp from a syscall line offcpu_parse_syscall accepts, else 0. */
int offcpu_parse_wait_point(const char *line, struct offcpu_wait_point *wp);
/* 1 when a and b are the same wait point: the same system call, sp and pc,
 * and first argument, except that a futex is the same within 8 bytes (a
 * glibc condition variable waits on one of two words 4 bytes apart, its
 * group alternating; no two futex objects, a mutex, a condition variable,
 * HotSpot's Parker, are closer). */
int offcpu_same_wait_point(const struct offcpu_wait_point *a, const struct offcpu_wait_point *b);

/* Parse a /proc/<pid>/task/<tid>/stat line: its state letter and start
 * time (field 22). 0 or -EINVAL. */
int offcpu_parse_stat(const char *line, char *state, uint64_t *start);

/* The function names of a /proc/<pid>/task/<tid>/stack text, leaf first,
 * as "name_[k]" into names (max of them, each of 64 bytes). Returns how
 * many. */
size_t offcpu_parse_kstack(const char *text, char (*names)[64], size_t max);

#endif

/* profile_int.h - what profile.c (open, poll, the raw table, close) and
 * profile_fold.c (mapping JVMs, symbolizing chains into the fold table)
 * share: the state of a struct profile. Not for use outside
 * sidecar/profile/: profile.h is the contract.
 *
 * The files call one way (no circle): each calls only files after it in
 *   profile.c, profile_fold.c, profile_pids.c, profile_rtmaps.c,
 *   profile_native.c, profile_jvms.c (which calls none of them). */
#ifndef FS_PROFILE_INT_H
#define FS_PROFILE_INT_H

#include <limits.h>
#include <stdint.h>

#include "jvmunwind.h"
#include "profile.h"
#include "sampler.h"
#include "threadnames.h"

#define PROFILE_PID_SLOTS      (2 * PROFILE_MAX_PIDS) /* open addressing, power of two */
#define PROFILE_LINE_MAX       (SYMBOLIZER_MAX_FRAMES * (SYMBOLIZER_NAME_MAX + 8) + 128)
#define PROFILE_ENV_MAX	       (1u << 20)
#define PROFILE_WARM_US	       10000   /* per poll: symbolize new chains early (see profile_warm) */
#define PROFILE_WINDOW_READ_US 1000000 /* read the JVMs' JIT logs this often */
/* Last word of a raw chain cut at the root end: a context marker no kernel
 * emits (>= PERF_CONTEXT_MAX), so the symbolizer skips it. */
#define PROFILE_CUT_WORD     ((uint64_t)-4095)
#define PROFILE_KERNEL_PROBE 0xffffffff81000000ull /* any kernel address: loads kallsyms */

/* One distinct (pid, thread, callchain): its words are words[off .. off +
 * nr), preceded in the arena by pid | thread << 32 and nr (so the arena
 * can be walked). thread: a threadnames index, 0 without per_thread. */
struct profile_chain {
	uint64_t hash;
	uint64_t count;	      /* 0: free slot */
	uint64_t first, last; /* sample times (CLOCK_MONOTONIC ns) */
	size_t off;
	pid_t pid;
	uint32_t nr;
	uint32_t thread;
};

struct profile_pid {
	pid_t pid; /* 0: free slot */
	uint64_t start_time;
	/* pidfd + 1 for reads of its memory (profile_read_mem), 0 not opened
	 * yet, -1 refused (its start time changed: nothing is read) */
	int memfd;
	int jvm; /* maps HotSpot's libjvm.so */
	int warned_map;
	int warned_fp;
	int unwinder; /* index + 1 into st.unwinder, 0 none */
	/* not a JVM: looked at for frame pointers (profile_native.c) */
	int native_checked;
	int native;	/* a file it maps lacks frame pointers: the native unwinder */
	char lacks[64]; /* that file's label */
};

struct profile_jit {
	pid_t pid;
	struct perfmap *map;	/* taken at the end (no window) */
	int map_vmstructs;	/* map named by hotspot_method_name as the unwinder's */
	struct map_window *win; /* or the JIT log of the whole window */
	int win_failed;		/* a read failed: keep what was read */
};

struct profile {
	struct profile_opts o;
	struct registry_entry entry;
	struct sampler *s;
	struct symbolizer *sym;
	struct debuginfo *dbg; /* separate debug info (NULL: off) */
	/* raw table */
	struct profile_chain *chains;
	size_t cap, count;
	uint64_t *words;
	size_t nwords, wcap;
	size_t warm_off; /* arena offset of the first chain not warmed yet */
	size_t raw_max;	 /* words before an early fold */
	/* processes seen */
	struct profile_pid *pids;
	size_t npids;
	/* JVMs mapped */
	struct profile_jit jit[PROFILE_MAX_JVMS];
	size_t njit;
	uint64_t window_read_us; /* last read of the JIT logs */
	int jit_full;		 /* PROFILE_JIT_BUDGET reached (warned once) */
	struct fold *table;
	struct threadnames *threads; /* with opts.per_thread */
	char *line;
	struct profile_stats st;
	struct sampler_stats sst; /* kept after profile_stop */
	struct jvmunwind *ju;	  /* with stack copies */
	struct cfi *cfi;	  /* CFI files of every process (unless --unwind fp) */
	struct nativeunwind *nu;  /* with stack copies: processes without frame pointers */
	int warned_native;	  /* nativeunwind_add failed (warned once) */
	struct sampler_opts so;	  /* as opened (for a reopen with copies) */
	char cg[PATH_MAX];
	int want_copies;	   /* a JVM without frame pointers appeared: reopen */
	int opened;		   /* the events were opened once */
	int no_reopen;		   /* reopening with copies failed: do not retry */
	struct sampler_stats base; /* counts of samplers closed by a reopen */
	uint64_t chain[SYMBOLIZER_MAX_FRAMES + 1]; /* + PROFILE_CUT_WORD */
	struct profile_rtmaps *rt; /* other runtimes' perf maps (profile_rtmaps.h) */
	int stopped;		   /* profile_stop was called (no_events: polls do nothing) */
	/* named leaf frames (profile_name_index): names[i - 1] */
	char **names;
	size_t nnames;
	uint32_t *name_slots; /* open addressing over names, 2 * PROFILE_NAMES_MAX */
};

/* The fold table's byte budget for o (budget.h). */
static inline size_t profile_table_budget(const struct profile_opts *o)
{
	return o->table_bytes ? o->table_bytes : (size_t)BUDGET_STACK_TABLE_MIB_DEFAULT << 20;
}

/* profile_jvms.c. One line of warning through the caller's callback
 * (dropped without one). */
void profile_warn(struct profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* pid's slot in p->jit (a new one when there is room), or NULL. */
struct profile_jit *profile_jit_slot(struct profile *p, pid_t pid);
/* profile_rtmaps.c. JIT names of every process together (the JVMs' perf
 * maps and JIT logs, other runtimes' perf maps) are bounded: 1 (and a
 * warning, once) when adding more bytes to pid's would pass
 * PROFILE_JIT_BUDGET; the caller then keeps what it has. */
#define PROFILE_JIT_BUDGET BUDGET_JIT_BYTES
int profile_jit_full(struct profile *p, pid_t pid, size_t more);
/* What the budget leaves for pid's JIT names (everything but its own). */
size_t profile_jit_room(const struct profile *p, pid_t pid);

/* profile_jvms.c. Warn that reading pid's JIT log failed (r, why). */
void profile_window_warn(struct profile *p, pid_t pid, int r, const char *why);

/* pid's slot in the process table (found or free), NULL when full. */
struct profile_pid *profile_pid_slot(struct profile *p, pid_t pid);
/* profile_pids.c. First sight of pid: cache its maps, note whether it
 * runs HotSpot (profile_pid_jvm) or not (profile_pid_native). */
struct profile_pid *profile_pid_note(struct profile *p, pid_t pid);
/* pp runs HotSpot: count it and choose its unwinder. */
void profile_pid_jvm(struct profile *p, struct profile_pid *pp);
/* Every JVM seen so far: its unwinder (or its warning, or a reopen with
 * stack copies). */
void profile_unwind_known(struct profile *p);
/* Before the window: libjvm.so's symbols of every JVM unwound. */
void profile_preload_libjvm(struct profile *p);

/* profile_native.c. pp is not a JVM: look at its files once (frame
 * pointers or not), then (once the events are open) give it the native
 * unwinder, or ask for a reopen with stack copies. Nothing with --unwind fp. */
void profile_pid_native(struct profile *p, struct profile_pid *pp);
/* Every process seen so far that lacks frame pointers: its unwinder (or
 * the reopen), once the events are open or reopened with copies. */
void profile_native_known(struct profile *p);
/* pp exec'd: forget what was decided (and its unwinder's mappings). */
void profile_native_forget(struct profile *p, struct profile_pid *pp);
/* profile_pids.c. Before the events open: note every process in scope
 * (profile_pid_note). 1 when one of them lacks frame pointers. */
int profile_pid_scan(struct profile *p);
/* The native unwinder's part of profile_stats. */
void profile_native_stats(const struct profile *p, struct profile_stats *st);

#endif

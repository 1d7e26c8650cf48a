/* profile.h - the record -> symbolize -> aggregate loop behind `run` and
 * `top` (and the hook's annotation-triggered profiles, through `run`).
 *
 *   sampler  every thread of every process of a container (its cgroup v2
 *            directory when there is one, else its pid namespace) or one
 *            process of it; cgroup and pid kept by the kernel filter
 *            (kfilter.h) where it loads (opts.kernel_filter)
 *   jit      profile_open starts, before the sampler, a timed agent session
 *            in each JVM running then (map_window_open: every code load and
 *            unload with its time); its log is read every second
 *            (PROFILE_WINDOW_READ_US), and profile_close stops it
 *   maps     every other process's own perf map (node --perf-basic-prof,
 *            python -X perf, ...) is read over the window the same way and
 *            names its JIT frames (profile_rtmaps.h, docs/runtimes.md)
 *   unwind   with stack copies (opts.unwind; on from when a JVM, or a
 *            process that maps a file built without frame pointers, is in
 *            scope, for every sample), each JVM's user chain is rebuilt by
 *            the HotSpot-aware unwinder (jvmunwind.h) and each such other
 *            process's by the native CFI unwinder (nativeunwind.h): the
 *            changes on the per-sample path (profile_on_sample)
 *   raw      while recording, samples are aggregated by (pid, callchain)
 *            (with opts.per_thread, by (pid, thread, callchain)):
 *            equal chains only bump a count (and their first/last sample
 *            time), so memory grows with distinct chains, not with time;
 *            each new process is looked at once (maps cached for the
 *            symbolizer, JVM or not, frame pointers)
 *   fold     at the end (profile_fold) the logs' tails are read (JVMs
 *            without a session are mapped now: map_jvm, the perf map taken
 *            AFTER the window), every distinct chain is symbolized once, its
 *            JIT frames by address and its last sample's time, and added to
 *            a folded-stack table (fold.h) with its count
 *
 * The raw table is bounded (PROFILE_RAW_MAX_WORDS, PROFILE_RAW_MAX_CHAINS):
 * when it fills, it is folded early (JVMs mapped at that moment) and
 * emptied, and recording goes on. The fold table has a byte budget
 * (opts.table_bytes): past it, a new stack's samples are counted in one
 * "comm;[dropped: stack table full]" stack per process, and a chain the
 * kernel or the unwinder cut at the root end gets "[truncated: deeper
 * stack]" under the process name (lib/budget.h), so the graph's total is
 * still every sample and says what was lost. Frames are counted per kind,
 * weighted by samples, for the summary.
 *
 * Usage (each call 0 or -errno with err filled):
 *	cleanup_profile struct profile *p = NULL;
 *	profile_open(&opts, &p, &err);
 *	while (!stop)
 *		profile_poll(p, 100, &err);
 *	profile_stop(p);            // close the events: the window ends
 *	profile_fold(p, 0, &err);   // map JVMs, symbolize into profile_table(p)
 *	fold_write(profile_table(p), out);
 *	                            // profile_close(p) at scope exit
 */
#ifndef FS_PROFILE_H
#define FS_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "debuginfo.h"
#include "error.h"
#include "fold.h"
#include "map.h"
#include "registry.h"
#include "sampler.h"
#include "symbols.h"
#include "cleanup.h"

#define PROFILE_RAW_MAX_WORDS  BUDGET_RAW_WORDS	 /* raw callchain words (budget.h) */
#define PROFILE_RAW_MAX_CHAINS BUDGET_RAW_CHAINS /* distinct raw chains (budget.h) */
#define PROFILE_MAX_PIDS       BUDGET_MAX_PIDS	 /* processes remembered (JVM or not, warned) */
#define PROFILE_MAX_JVMS       BUDGET_MAX_JVMS	 /* JVMs mapped (symbolizer_set_jit's limit) */

/* Which unwinder JVMs get (docs/unwind.md). The choice of stack copies is
 * made once at open for the whole window (the events are per CPU). */
enum profile_unwind {
	PROFILE_UNWIND_AUTO = 0, /* stack copies when the scope holds a JVM or a
				  * process without frame pointers; then the HotSpot
				  * unwinder for every JVM (whole stacks without frame
				  * pointers, interpreted frames named) and the native
				  * one for those processes (nativeunwind.h) */
	PROFILE_UNWIND_FP,	 /* the kernel's frame-pointer chains only */
	PROFILE_UNWIND_HOTSPOT,	 /* stack copies even when no such process is seen at open */
};

/* Called with one line of warning text (no trailing newline). */
typedef void (*profile_warn_fn)(void *ctx, const char *msg);

/* Where the samples of a stack came from: what pprof and speedscope keep
 * beside the stack and the folded text has no room for. */
struct profile_origin {
	pid_t pid;	    /* host pid */
	pid_t tid;	    /* host tid, 0 unless opts.per_thread */
	const char *thread; /* its name (threadnames.h; "[unknown]" when it could
			     * not be read), NULL unless per_thread */
};

/* Called by profile_fold for every stack it adds to the fold table, with
 * where its samples came from. With opts.per_thread a folded stack comes
 * once per thread that ran it (the fold table sums them as before).
 * Non-zero fails the fold. */
typedef int (*profile_stack_fn)(void *ctx, const struct profile_origin *o, const char *stack,
				size_t len, uint64_t count);

/* Called by profile_fold, before the stack holding it, for every native
 * frame of a stack with the module it was found in: frame is the frame's
 * text in the stack (len bytes), module the file as the process sees it
 * (symbols.h: not sanitized), build_id hex or NULL. Non-zero fails the
 * fold. */
typedef int (*profile_module_fn)(void *ctx, const char *frame, size_t len, const char *module,
				 const char *build_id);

struct profile_opts {
	const struct registry_entry *entry; /* the container (required) */
	pid_t pid;			    /* one process of it (host pid); 0 = all of them */
	unsigned frequency;		    /* Hz per CPU; 0 = 99 */
	unsigned max_stack;		    /* 0 = the sampler's default */
	int user_only;			    /* no kernel frames */
	int no_map;			    /* do not attach to JVMs (JIT frames stay [unknown]) */
	struct map_opts map;		    /* how JVMs are mapped */
	int with_pid;			    /* root frame "comm-PID" instead of "comm" */
	enum profile_unwind unwind;	    /* see above */
	unsigned stack_copy;		    /* bytes per sample; 0 = SAMPLER_DEFAULT_STACK_COPY */
	const char *cgroup_root;	    /* NULL = /sys/fs/cgroup (tests) */
	size_t raw_max_words;		    /* 0 = PROFILE_RAW_MAX_WORDS (tests: smaller) */
	size_t table_bytes;   /* fold table budget; 0 = BUDGET_STACK_TABLE_MIB_DEFAULT MiB */
	profile_warn_fn warn; /* NULL = warnings are dropped */
	void *warn_ctx;
	profile_stack_fn on_stack;   /* NULL = none; see profile_stack_fn */
	profile_module_fn on_module; /* NULL = none; called with on_stack_ctx */
	void *on_stack_ctx;
	/* Aggregate by (pid, thread, callchain) instead of (pid, callchain):
	 * on_stack gets thread names (memory grows with distinct stacks per
	 * thread; the folded table is the same). */
	int per_thread;
	/* How the scope is enforced (sampler.h): AUTO = the kernel filter
	 * where it loads, else cgroup events (or the user-space pid check);
	 * ON = the kernel filter or fail; OFF = never the kernel filter. */
	enum sampler_kfilter kernel_filter;
	/* Separate debug info for native names (debuginfo.h): no_debuginfo
	 * turns it off; debuginfod_urls names servers (NULL or "" = none,
	 * nothing is downloaded). */
	int no_debuginfo;
	const char *debuginfod_urls;
	/* Off-CPU and wall-clock profiles (sidecar/offcpu/offcpu.h): no perf
	 * events at all (the caller adds every sample with profile_add_sample;
	 * profile_poll only does the housekeeping). */
	int no_events;
	/* Wall-clock profiles: the events are the cpu-clock software event and
	 * each sample counts its period in microseconds, with this frame as its
	 * leaf (e.g. "[running]"); NULL: a sample counts 1 (CPU profiles). */
	const char *on_cpu_frame;
	/* With per_thread: the thread's name as a frame under the process
	 * ("comm;[thread];root;...;leaf"), as async-profiler's -t. */
	int thread_frames;
};

struct profile_jvm_result {
	pid_t pid;
	int ok;		       /* mapped */
	struct map_result res; /* when ok */
	int windowed;	       /* named by its window's JIT log, not a map at the end */
	char msg[256];	       /* why not, when !ok */
};

#define PROFILE_DEPTH_MARKS 4 /* 4, 8, 16, 32 KiB: profile_unwinder.within_kib */

#define PROFILE_MAX_NATIVE 32 /* processes with the native unwinder shown one by one */

/* Which unwinder a JVM (or a process without frame pointers) got, for the
 * summary. */
struct profile_unwinder {
	pid_t pid;
	int hotspot;	/* 1: the HotSpot unwinder, 0: frame pointers */
	int native;	/* 1: the native CFI unwinder (not a JVM) */
	int fp_missing; /* runs without -XX:+PreserveFramePointer (native: a file lacks them) */
	char why[160];	/* when it needed the HotSpot unwinder but did not get it;
			 * native: the file without frame pointers ("[bash]") */
	uint64_t samples, reached_root, interpreted, frames;
	uint64_t native_cfi, native_fp; /* native: frames stepped by CFI, by frame pointer */
	unsigned depth_p50_kib, depth_p99_kib, depth_max_kib; /* of whole walks */
	uint64_t unwind_ns;				      /* CPU time unwinding */
	/* whole walks (reached_root) that used at most 4, 8, 16, 32 KiB of
	 * stack: how small a --stack-copy would still have served them */
	uint64_t within_kib[PROFILE_DEPTH_MARKS];
	/* hotspot: the work behind unwind_ns, counted (jvmunwind.h) */
	uint64_t blob_lookups, blob_hits, blob_new, blob_expired, blob_revalidated;
	uint64_t reads, read_bytes, leaf_reads, name_reads;
	uint64_t compiled;			  /* hotspot: compiled frames (nmethods) */
	uint64_t end_stack, end_bad, end_unknown; /* walks that stopped short, why */
	uint64_t spliced; /* of those, continued with the kernel's frame-pointer chain */
};

/* A process of another runtime whose JIT frames were named from its own
 * perf map (profile_rtmaps.h), for the summary. */
#define PROFILE_MAX_RTMAPS BUDGET_MAX_RTMAPS
struct profile_rtmap_result {
	pid_t pid, ns_pid;
	char comm[32];	     /* as the process named itself: escape before printing */
	size_t entries;	     /* in its map now */
	uint64_t bytes;	     /* of its map read */
	size_t skipped;	     /* malformed, overlong or dropped lines */
	unsigned restarts;   /* the file was replaced or truncated */
	int capped;	     /* larger than PERFMAP_MAX_CONTAINER_FILE: its start read */
	int stopped;	     /* reading stopped (budget, or the file became unreadable) */
	uint64_t jit, named; /* its frames in anonymous code (weighted by samples), named */
};

struct profile_stats {
	/* sampler */
	const char *scope;    /* "cgroup", "pid_ns", "pid" */
	const char *events;   /* "kernel filter", "cgroup events", "user-space filter" */
	char filter_why[256]; /* kernel filter asked (auto) but not used: why */
	unsigned cpus;
	int hardware;
	uint64_t samples, lost, throttled, truncated;
	uint64_t dropped; /* samples not stored (out of memory) */
	/* JVM samples whose leaf was in a prologue or epilogue: the caller
	 * the frame-pointer walk skipped was put back (leafcall.h) */
	uint64_t leaf_callers;
	/* raw table */
	size_t chains;	      /* distinct (pid, callchain) pending now */
	size_t words;	      /* their words */
	uint64_t early_folds; /* times the raw table filled and was folded early */
	/* symbolization, weighted by samples, over everything folded so far */
	uint64_t frames[SYMBOLIZER_KIND_COUNT];
	uint64_t resolved[SYMBOLIZER_KIND_COUNT];
	uint64_t folded; /* samples added to the fold table */
	/* of those, samples counted as "[dropped: stack table full]" (the fold
	 * table's budget was reached) and samples of chains cut at the root
	 * end ("[truncated: deeper stack]") */
	uint64_t table_dropped, cut;
	size_t table_bytes; /* the fold table's memory now */
	/* samples of chains in which a JIT address changed owner between the
	 * chain's first and last sample (named by the later owner) */
	uint64_t time_approx;
	/* samples whose leaf is compiled Java code named by a window's JIT log,
	 * and of those, the ones in code whose debug info is safepoint-only
	 * (compiled before -XX:+DebugNonSafepoints was on: their self time may
	 * sit on a caller; agent/debuginfo.h) */
	uint64_t jit_leaves, sp_only_leaves;
	/* processes */
	size_t pids, jvms;
	/* the last mapping round */
	struct profile_jvm_result jvm[PROFILE_MAX_JVMS];
	size_t njvm;
	uint64_t map_us, symbolize_us; /* time of the last profile_fold's two phases */
	/* unwinding */
	unsigned stack_copy; /* bytes per sample, 0: no stack copies this window */
	uint64_t stack_copies;
	struct profile_unwinder unwinder[PROFILE_MAX_JVMS];
	size_t nunwinder;
	/* processes that are not JVMs: how many lacked frame pointers, and
	 * those that got the native unwinder (most samples first; past
	 * PROFILE_MAX_NATIVE, native_more of them summed in native_rest) */
	uint64_t native_wanted;
	struct profile_unwinder native[PROFILE_MAX_NATIVE];
	size_t nnative, native_more;
	struct profile_unwinder native_rest;
	/* separate debug info: files named from each source (debuginfo.h) */
	struct debuginfo_stats debug;
	/* other runtimes named from their perf maps */
	struct profile_rtmap_result rtmap[PROFILE_MAX_RTMAPS];
	size_t nrtmap;
};

struct profile;

/* Open the events (scope chosen as described above) and the symbolizer.
 * 0 or -errno: -EACCES/-EPERM (not permitted), -ESRCH (the container or
 * the pid is gone, or the pid is not in the container). */
int profile_open(const struct profile_opts *o, struct profile **out, struct fs_error *err);

/* Wait up to timeout_ms for samples and aggregate them. The number of
 * samples taken, or -errno (-EINTR when a signal interrupted the wait). */
int profile_poll(struct profile *p, int timeout_ms, struct fs_error *err);

/* The longest the caller may leave samples in the rings, in ms. With
 * stack copies the HotSpot unwinder reads the JVM's code cache as it
 * processes each sample, so a sample read late may find its code already
 * recompiled or unloaded: then 100 ms. Also 100 ms with --unwind auto while
 * the events may still be reopened with copies (the samples of a process
 * that needs them keep the kernel's chains until it is seen). Otherwise
 * 1000 (names come from the JIT log by time and the kernel's chains). */
unsigned profile_max_latency_ms(const struct profile *p);

/* Drain what is left and close the events; later polls return 0. */
void profile_stop(struct profile *p);

/* Map the JVMs now (unless no_map): those found in the container and
 * every JVM sampled so far. Failures are warnings (a JVM that exited keeps
 * its frames unnamed) and are reported in the stats. Returns the number of
 * JVMs mapped. */
int profile_map_jvms(struct profile *p);

/* Map the JVMs (profile_map_jvms) when map_first, then symbolize every
 * pending chain into the fold table and empty the raw table. 0 or -errno
 * (-ENOMEM). */
int profile_fold(struct profile *p, int map_first, struct fs_error *err);

/* The folded stacks so far ("comm;root;...;leaf" -> samples). */
struct fold *profile_table(struct profile *p);

/* Start a new, empty fold table (and zero the per-kind frame counts): the
 * next interval of `top`. 0 or -ENOMEM. */
int profile_reset_table(struct profile *p);

void profile_stats(const struct profile *p, struct profile_stats *st);

/* A sample made by the caller (the off-CPU poller) counted count times
 * (microseconds of wall time): the same per-sample path as the events'
 * (the HotSpot unwinder when smp has registers and a stack copy and its
 * process is a JVM). smp->ips may start with named leaf frames
 * (see PROFILE_NAMES_WORD). With chain, the callchain as recorded (after
 * unwinding, at most max words) is copied there and its length put in *nr:
 * the same stack counted again later is that chain in a sample without
 * registers. 0 or -ENOMEM (then counted as dropped). */
int profile_add_sample(struct profile *p, const struct sample *smp, uint64_t count, uint64_t *chain,
		       size_t max, size_t *nr);

/* Wall-clock profiles: the on-CPU time of a thread as the kernel counted it
 * (schedstat), which the cpu-clock samples only estimate. */
struct profile_on_cpu {
	pid_t pid, tid;
	uint64_t want_us;  /* its time on a CPU over the window */
	uint64_t found_us; /* out: what its on-CPU samples counted before */
};

/* Scale the counts of each thread's on-CPU chains (on_cpu_frame leaf,
 * not folded yet) so that they sum to its want_us: the samples then give
 * the stacks' shares, the kernel's accounting the thread's total. v is
 * sorted by tid here. Needs per_thread. */
void profile_scale_on_cpu(struct profile *p, struct profile_on_cpu *v, size_t n);

/* Named frames at the leaf end of a chain (thread states, kernel frames
 * read from /proc/<tid>/stack): a chain may start with
 * PROFILE_NAMES_WORD, a count k and k indexes from profile_name_index
 * (leaf first); the symbolizer skips them and profile_fold puts the names
 * after the symbolized frames. */
#define PROFILE_NAMES_WORD ((uint64_t)-4094) /* a context marker no kernel emits */
#define PROFILE_NAMES_MAX  8192		     /* distinct names per profile */

/* The index of name (interned, at most PROFILE_NAMES_MAX names of at most
 * 127 bytes); 0 when the table is full or out of memory (then the frame is
 * left out). */
uint32_t profile_name_index(struct profile *p, const char *name);

/* Stops the JVMs' timed agent sessions (warnings through opts.warn), closes
 * everything. */
void profile_close(struct profile *p);
FS_DEFINE_CLEANUP(struct profile, profile_close)
#define cleanup_profile __attribute__((cleanup(profile_close_cleanup)))

#endif

/* sampler.h - CPU stack sampling with perf_event_open.
 *
 * One event per online CPU (cycles if the machine has a PMU, else the
 * cpu-clock software event), frequency mode, callchains through frame
 * pointers (kernel + user), read from one ring buffer per CPU. The scope
 * is one of:
 *
 *   cgroup   per-CPU events with PERF_FLAG_PID_CGROUP on a cgroup v2 (or
 *            perf_event v1) directory: the kernel counts only tasks in it,
 *            including ones that start during the recording.
 *   pid_ns   system-wide per-CPU events; samples are kept when their
 *            process is in the given pid namespace (resolved lazily from
 *            /proc/<pid>/ns/pid, inherited through PERF_RECORD_FORK).
 *   pid      system-wide per-CPU events; samples of one process (every
 *            thread, also threads created later).
 *   all      everything (tests, debugging).
 *
 * The cgroup and pid scopes filter in the kernel when they can
 * (kfilter.h): system-wide per-CPU events (no PERF_FLAG_PID_CGROUP, whose
 * cost the kernel pays on every context switch into or out of the cgroup)
 * with a BPF program that drops out-of-scope samples before they reach the
 * ring. opts.kernel_filter decides: AUTO uses it when it loads and falls
 * back (cgroup events, or the user-space pid check) saying why in
 * stats.filter_why; ON fails instead; OFF never tries.
 *
 * Memory is bounded whatever the duration: fixed rings, a bounded pid
 * cache; the caller aggregates samples as they arrive. */
#ifndef FS_SAMPLER_H
#define FS_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "cleanup.h"

#define SAMPLER_DEFAULT_FREQUENCY  99
#define SAMPLER_MAX_FREQUENCY	   10000
#define SAMPLER_DEFAULT_MAX_STACK  127
#define SAMPLER_DEFAULT_RING_PAGES 128 /* data pages per CPU (power of two), as perf record */
#define SAMPLER_MAX_CPUS	   4096
#define SAMPLER_PID_CACHE	   8192 /* pids whose scope is remembered */
/* Stack copies (PERF_SAMPLE_STACK_USER) for the HotSpot-aware unwinder:
 * the kernel copies this many bytes from the user sp with each sample (see
 * docs/unwind.md for why this size); the record size field is 16 bits, so
 * a copy is at most SAMPLER_MAX_STACK_COPY. Rings grow to hold at least
 * SAMPLER_STACK_RING_SAMPLES copies per CPU (SAMPLER_STACK_RING_TOTAL at
 * most for all CPUs). */
#define SAMPLER_DEFAULT_STACK_COPY 32768
#define SAMPLER_MAX_STACK_COPY	   (65536 - 4096)
#define SAMPLER_STACK_RING_SAMPLES 256
#define SAMPLER_STACK_RING_TOTAL   (128u << 20) /* bytes of rings, all CPUs */

struct sampler;

enum sampler_kfilter {
	SAMPLER_KFILTER_AUTO = 0, /* the kernel filter where it loads */
	SAMPLER_KFILTER_ON,	  /* the kernel filter or an error */
	SAMPLER_KFILTER_OFF,	  /* cgroup events / the user-space check */
};

struct sampler_opts {
	unsigned frequency;  /* Hz per CPU; 0 = SAMPLER_DEFAULT_FREQUENCY */
	unsigned max_stack;  /* frames; 0 = SAMPLER_DEFAULT_MAX_STACK */
	unsigned ring_pages; /* 0 = SAMPLER_DEFAULT_RING_PAGES */
	int user_only;	     /* no kernel frames */
	int software_only;   /* do not try the hardware cycles event */
	/* Bytes of user stack copied with each sample, with the user registers
	 * ip, sp and bp (0: neither; rounded up to a multiple of 8). For the
	 * whole window and every process in scope: the events are per CPU. */
	unsigned stack_copy;
	/* scope: the first one set wins, in this order */
	const char *cgroup_path; /* cgroup directory (PERF_FLAG_PID_CGROUP) */
	uint64_t pid_ns;	 /* pid namespace inode */
	pid_t pid;		 /* one process */
	/* (none of them: every process on the host) */
	enum sampler_kfilter kernel_filter; /* cgroup and pid scopes */
	const char *proc_root;		    /* NULL = /proc (tests) */
};

struct sample {
	pid_t pid, tid; /* host view: tgid and thread id */
	uint32_t cpu;
	uint64_t time;	 /* CLOCK_MONOTONIC, ns */
	uint64_t period; /* ns of cpu-clock (or cycles) this sample stands for */
	uint64_t ip;
	const uint64_t *ips; /* callchain, leaf first, with PERF_CONTEXT_* markers */
	size_t nr;
	int truncated; /* nr reached max_stack: the kernel may have cut the root end */
	/* With stack_copy (else has_regs = 0): the user registers when the
	 * sample was taken (also when it was taken in the kernel: those of the
	 * syscall entry), and stack_size bytes copied from user sp upwards. */
	int has_regs;
	uint64_t user_ip, user_sp, user_bp;
	const uint8_t *stack;
	size_t stack_size;
};

enum sampler_task_kind {
	SAMPLER_TASK_FORK, /* new process (pid == tid) or thread */
	SAMPLER_TASK_EXIT,
	SAMPLER_TASK_EXEC, /* PERF_RECORD_COMM with the exec flag */
};

struct sampler_task {
	enum sampler_task_kind kind;
	pid_t pid, tid, ppid;
	const char *comm; /* EXEC only */
	int in_scope;	  /* known to belong to the scope */
};

struct sampler_stats {
	uint64_t samples; /* delivered to the callback */
	/* out of scope (other processes, idle), filtered here in user space;
	 * with the kernel filter out-of-scope samples never reach the ring and
	 * are not counted anywhere */
	uint64_t filtered;
	uint64_t lost;	       /* PERF_RECORD_LOST: records dropped by the kernel */
	uint64_t throttled;    /* PERF_RECORD_THROTTLE events */
	uint64_t truncated;    /* callchains at max_stack (maybe cut) */
	uint64_t malformed;    /* records that did not parse */
	uint64_t stack_copies; /* samples with user registers and a stack copy */
	uint64_t stack_bytes;  /* bytes of stack copied in all */
	unsigned ring_pages;   /* data pages per CPU as opened */
	unsigned stack_copy;   /* bytes asked per sample (0: off) */
	uint64_t tasks;	       /* fork/exit/comm records seen */
	unsigned cpus;	       /* CPUs with an event */
	int hardware;	       /* 1: cycles, 0: cpu-clock */
	const char *scope;     /* "cgroup", "pid_ns", "pid", "all" */
	/* how the scope is enforced: "kernel filter", "cgroup events",
	 * "user-space filter" or "none" */
	const char *events;
	char filter_why[256]; /* AUTO without the kernel filter: why ("" else) */
	/* Of the fork/exit/comm records, those of tasks out of scope (not
	 * passed on: the kernel filter does not see side-band records). */
	uint64_t tasks_dropped;
};

/* Open and enable the events. 0 or -errno: -EACCES/-EPERM with a message
 * about root/CAP_PERFMON and perf_event_paranoid; -ENOENT for a missing
 * cgroup. */
int sampler_open(const struct sampler_opts *opts, struct sampler **out, struct fs_error *err);

/* Optional: be told about fork/exit/exec (to drop symbol caches). */
void sampler_set_task_cb(struct sampler *s, void (*on_task)(const struct sampler_task *, void *),
			 void *ctx);

typedef int (*sampler_sample_fn)(const struct sample *smp, void *ctx);

/* Wait up to timeout_ms (0: don't wait, -1: forever) for data, then drain
 * every ring, calling on_sample for each in-scope sample (the struct and
 * its ips are valid during the call only). A callback returning non-zero
 * stops the drain and is returned. Otherwise returns the number of samples
 * delivered, or -errno (-EINTR when a signal interrupted the wait). */
int sampler_poll(struct sampler *s, int timeout_ms, sampler_sample_fn on_sample, void *ctx);

void sampler_stats(const struct sampler *s, struct sampler_stats *st);

/* Disable, unmap, close. */
void sampler_close(struct sampler *s);
FS_DEFINE_CLEANUP(struct sampler, sampler_close)
#define cleanup_sampler __attribute__((cleanup(sampler_close_cleanup)))

/* Online CPUs from a /sys/devices/system/cpu/online style list ("0-3,6").
 * Fills cpus (up to max), returns the count or -EINVAL. */
int sampler_parse_cpulist(const char *list, int *cpus, int max);

#endif

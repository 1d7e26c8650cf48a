/* nativeunwind.h - the per-sample path of processes that are not JVMs and
 * lack frame pointers: their user chain is rebuilt from the sample's stack
 * copy by the native walk (sidecar/unwind/nativewalk.h: .eh_frame CFI, else
 * frame pointers per frame) instead of the kernel's frame-pointer chain.
 *
 * A table of processes (at most NATIVEUNWIND_MAX_PROCS), each with its
 * executable mappings (cfi.h) over a CFI file cache shared with the JVMs'
 * unwinder (so libc's table is walked once for every process). Which
 * process is added is the caller's choice (profile_native.c). A process
 * that exits or execs is removed: its mappings are freed, its counts kept
 * for the summary (a removed process with no sample gives its slot to the
 * next one when the table is full).
 *
 * nativeunwind_sample() rebuilds a sample's callchain: the kernel part as
 * the kernel gave it, PERF_CONTEXT_USER, then the unwound user frames;
 * when the walk stops short of the thread's base and the kernel's chain
 * holds its last return address, the kernel's frames after it follow.
 * Container input rules: those of unwind.h and cfi.h. Not thread-safe. */
#ifndef FS_NATIVEUNWIND_H
#define FS_NATIVEUNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cfi.h"
#include "error.h"
#include "sampler.h"
#include "unwind.h"
#include "cleanup.h"

#define NATIVEUNWIND_MAX_PROCS 256

struct nativeunwind;

struct nativeunwind_stats {
	pid_t pid;
	char lacks[64];	  /* the file without frame pointers that chose it ("[bash]") */
	uint64_t samples; /* samples unwound */
	uint64_t no_regs; /* samples without registers */
	uint64_t frames;  /* user frames produced */
	uint64_t native_cfi, native_fp;
	uint64_t ends[UNWIND_END_COUNT];
	uint64_t spliced;   /* walks continued with the kernel's chain */
	uint64_t unwind_ns; /* thread CPU time in nativeunwind_sample */
};

/* c: the CFI file cache, borrowed (it must outlive the table). 0 or
 * -ENOMEM. */
int nativeunwind_new(struct cfi *c, struct nativeunwind **out);
void nativeunwind_free(struct nativeunwind *nu);
FS_DEFINE_CLEANUP(struct nativeunwind, nativeunwind_free)
#define cleanup_nativeunwind __attribute__((cleanup(nativeunwind_free_cleanup)))

/* Unwind pid from now on: its mappings are read now (while it runs).
 * lacks: what the summary says chose it. 0 (also when already added),
 * -ENOSPC (table full), -ESRCH (gone) or -errno, with err. */
int nativeunwind_add(struct nativeunwind *nu, pid_t pid, const char *lacks, struct fs_error *err);

/* Forget pid's mappings (it exited or exec'd); its counts stay. */
void nativeunwind_remove(struct nativeunwind *nu, pid_t pid);

/* 1 when pid is unwound here now. */
int nativeunwind_has(const struct nativeunwind *nu, pid_t pid);

/* The callchain of smp rebuilt into out (at most max words): its length,
 * or 0 when pid is not unwound here or the sample has no registers (then
 * the kernel's chain stands). */
size_t nativeunwind_sample(struct nativeunwind *nu, const struct sample *smp, uint64_t *out,
			   size_t max);

/* Every process added so far (removed ones included), in order. */
size_t nativeunwind_count(const struct nativeunwind *nu);
void nativeunwind_stats(const struct nativeunwind *nu, size_t i, struct nativeunwind_stats *st);

#endif

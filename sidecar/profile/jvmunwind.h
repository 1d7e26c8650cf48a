/* jvmunwind.h - the per-sample path of JVMs that get the HotSpot-aware
 * unwinder (sidecar/unwind/) instead of the kernel's frame-pointer chain.
 *
 * A table of JVMs (at most PROFILE_MAX_JVMS), each with its hotspot reader
 * (VMStructs, hotspot.h), its executable mappings for CFI (cfi.h) and a
 * set-associative cache of code blobs by pc, so the unwinder reads the
 * JVM's memory once per distinct pc, not once per frame (entries are
 * trusted JVMUNWIND_BLOB_TTL_MS: code is compiled and freed during a
 * window; then one read of the blob's header, hotspot_blob_check, renews
 * an entry whose blob is still there).
 *
 * jvmunwind_sample() rebuilds a sample's callchain: the kernel part as the
 * kernel gave it, then PERF_CONTEXT_USER and the unwound user frames, with
 * interpreted frames as tagged Method* words (symbols.h) that
 * jvmunwind_method_name() names at fold time. */
#ifndef FS_JVMUNWIND_H
#define FS_JVMUNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "cfi.h"
#include "error.h"
#include "sampler.h"
#include "unwind.h"
#include "cleanup.h"

#define JVMUNWIND_MAX_JVMS	  64
#define JVMUNWIND_BLOB_CACHE	  4096 /* blobs cached per JVM */
#define JVMUNWIND_BLOB_WAYS	  4    /* entries per set of that cache */
#define JVMUNWIND_BLOB_TTL_MS	  1000
#define JVMUNWIND_CODE_CHUNK	  256	     /* bytes of compiled code read together for a leaf */
#define JVMUNWIND_CODE_SLOTS	  256	     /* such chunks kept per JVM (direct-mapped) */
#define JVMUNWIND_SEEN_MAX	  32768	     /* compiled methods remembered per JVM */
#define JVMUNWIND_SEEN_NAME_BYTES (4u << 20) /* of their names, per JVM */
#define JVMUNWIND_DEPTH_BUCKETS	  65

struct jvmunwind;

struct jvmunwind_jvm_stats {
	pid_t pid;
	int major;	  /* JDK major version, 0 unknown */
	uint64_t samples; /* samples of this JVM unwound */
	uint64_t no_regs; /* samples without registers (kernel threads, copies off) */
	uint64_t frames;  /* user frames produced */
	uint64_t interpreted, compiled, native_cfi, native_fp;
	uint64_t ends[UNWIND_END_COUNT];
	uint64_t blob_lookups, blob_hits;
	/* the misses: pcs not in the cache, entries past their time (and of
	 * those, found unchanged by hotspot_blob_check) */
	uint64_t blob_new, blob_expired, blob_revalidated;
	/* reads of the JVM's memory during walks (process_vm_readv calls),
	 * their bytes, and the leaf code reads among them */
	uint64_t reads, read_bytes, leaf_reads;
	uint64_t name_reads; /* of the names of compiled methods first seen */
	uint64_t spliced;    /* walks continued with the kernel's frame-pointer chain */
	uint64_t unwind_ns;  /* thread CPU time spent in jvmunwind_sample */
	/* stack used by walks that reached the thread's base, per KiB (the
	 * last bucket: 64 KiB and more): what sizes the stack copy */
	uint64_t depth_kib[JVMUNWIND_DEPTH_BUCKETS];
};

/* shared: a CFI file cache to use (borrowed: it must outlive the table),
 * NULL for one of its own. */
int jvmunwind_new(struct cfi *shared, struct jvmunwind **out);
void jvmunwind_free(struct jvmunwind *ju);
FS_DEFINE_CLEANUP(struct jvmunwind, jvmunwind_free)
#define cleanup_jvmunwind __attribute__((cleanup(jvmunwind_free_cleanup)))

/* Start unwinding pid (a HotSpot JVM): open its VMStructs and maps.
 * 0, or -errno with err saying why (then the kernel's chain is used for
 * it); -ENOSPC when the table is full; 0 when already added. */
int jvmunwind_add(struct jvmunwind *ju, pid_t pid, struct fs_error *err);

/* The start of pid's libjvm.so text, whose CFI jvmunwind_add walked
 * already (so that the first sample does not wait for it); 0 unknown. */
uint64_t jvmunwind_libjvm_text(const struct jvmunwind *ju, pid_t pid);

/* Whether the names of the compiled methods the walks find in pid are
 * read when first seen (on: the default, for a JVM named by a map taken
 * at the end, which lacks code freed during the window) or only if
 * jvmunwind_code_name asks (off: a JVM whose agent logs its code over the
 * window, JIT log, names them all). Before or after jvmunwind_add. */
void jvmunwind_names_at_sight(struct jvmunwind *ju, pid_t pid, int on);

/* Forget pid (it exec'd or exited). */
void jvmunwind_remove(struct jvmunwind *ju, pid_t pid);

/* 1 when pid is unwound by us. */
int jvmunwind_has(const struct jvmunwind *ju, pid_t pid);

/* The callchain of smp rebuilt into out (at most max words): returns its
 * length, or 0 when pid is not ours or the sample has no registers (use
 * smp->ips as they are). */
size_t jvmunwind_sample(struct jvmunwind *ju, const struct sample *smp, uint64_t *out, size_t max);

/* A symbolizer_method_fn (symbols.h) over the table (ctx). */
int jvmunwind_method_name(void *ctx, pid_t pid, uint64_t method, uint64_t time, char *buf,
			  size_t len);

/* A symbolizer_jit_fn (symbols.h) over the table (ctx): the compiled
 * method whose code held addr when a walk found it during the window,
 * named by its Method* (the outer method: no inline chain). For code the
 * map taken at the end no longer has (freed or replaced during the
 * window). 1 named, 0 not seen. */
int jvmunwind_code_name(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf, size_t len);

/* Stats of the i-th JVM (0 <= i < count). */
size_t jvmunwind_count(const struct jvmunwind *ju);
void jvmunwind_stats(const struct jvmunwind *ju, size_t i, struct jvmunwind_jvm_stats *st);

#endif

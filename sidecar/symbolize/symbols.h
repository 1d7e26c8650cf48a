/* symbols.h - the symbolizer: perf callchains (pid + addresses with
 * PERF_CONTEXT_KERNEL/USER markers) to frame names for flame graphs.
 *
 *   kernel  /proc/kallsyms                         "do_syscall_64_[k]"
 *   native  ELF .symtab/.dynsym of the mapped file  "JavaCalls::call_helper"
 *           opened as /proc/<pid>/map_files/<start>-<end> (never by path)
 *   jit     a per-pid lookup callback (the perf map) "java.util.HashMap.get"
 *
 * Unresolved frames are labelled like perf + stackcollapse-perf.pl:
 * "[libfoo.so]" when the mapping is known (basename of the mapped file),
 * "[unknown]" for anonymous memory or no mapping at all, and
 * "[kernel.kallsyms]_[k]" in the kernel. See docs/sampling.md.
 *
 * Per-process maps are read lazily from /proc/<pid>/maps and cached, so a
 * process can be symbolized after it exited if it was seen while alive
 * (symbolizer_load_pid). ELF symbol tables are cached per file identity
 * (device, inode, size, mtime) and aliased by build-id, so every process of
 * one image costs one parse. Every cache is bounded (see the constants).
 *
 * Container ELF files are never parsed here: a sandboxed child does it
 * (elfjail.h) and sends back flat tables that are validated before use
 * (elfflat.h). A file it cannot parse in time gets no symbols.
 *
 * Not thread-safe: one symbolizer per thread. */
#ifndef FS_SYMBOLS_H
#define FS_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "error.h"
#include "cleanup.h"

/* The numbers are lib/budget.h's; /proc/<pid>/maps is read and bounded by
 * procmaps.h (per file, per process and for all processes together). */
#define SYMBOLIZER_MAX_FRAMES	  BUDGET_MAX_FRAMES /* frames per callchain handled */
#define SYMBOLIZER_MAX_PIDS	  BUDGET_MAX_PIDS   /* cached processes (then the cache restarts) */
#define SYMBOLIZER_MAX_FILES	  BUDGET_ELF_FILES  /* ELF files cached */
#define SYMBOLIZER_MAX_ELF_MEMORY BUDGET_ELF_BYTES  /* bytes of ELF symbol tables cached */
#define SYMBOLIZER_REFRESH_MS	  1000		    /* re-read maps on a miss at most this often */
#define SYMBOLIZER_NAME_MAX	  4096 /* = PERFMAP_MAX_LINE: a JIT map line's whole inline chain */
#define SYMBOLIZER_MODULE_MAX	  1024 /* bytes of a module path kept (longer ones are cut) */

struct symbolizer;
struct elfsource;
struct elfsyms;

enum symbolizer_kind {
	SYMBOLIZER_KIND_KERNEL,
	SYMBOLIZER_KIND_NATIVE,	 /* file-backed user code (and the vDSO) */
	SYMBOLIZER_KIND_JIT,	 /* anonymous executable memory: Java and other JITs */
	SYMBOLIZER_KIND_UNKNOWN, /* user address in no known mapping */
	SYMBOLIZER_KIND_COUNT,
};

/* Options (flags). */
#define SYMBOLIZER_JIT_SUFFIX	    0x1 /* append "_[j]" to JIT frames (stackcollapse --jit) */
#define SYMBOLIZER_NO_KERNEL_SUFFIX 0x2 /* no "_[k]" on kernel frames */

struct symbolizer_opts {
	const char *kallsyms_path; /* NULL = /proc/kallsyms */
	const char *proc_root;	   /* NULL = /proc (tests) */
	unsigned flags;
	/* Told why an ELF file gets no symbols (the first 16 files, then
	 * once that there are more); NULL = not told. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	/* More names for a file just parsed (separate debug info,
	 * sidecar/debuginfo/debuginfo.h's debuginfo_augment): called once per
	 * distinct file (not for one sharing another's table by build-id) with
	 * the fd, the pid that maps it, its path as that process sees it (NULL
	 * when unknown), its label and its table *es, which it may replace.
	 * Returns > 0 when it did. NULL = none. */
	int (*debug)(void *ctx, pid_t pid, int fd, const char *path, const char *label,
		     struct elfsource *src, struct elfsyms **es);
	void *debug_ctx;
};

struct symbolizer_frame {
	const char *name; /* valid until the next call on the symbolizer */
	uint64_t addr;	  /* the address looked up */
	enum symbolizer_kind kind;
	int resolved; /* 1 when name is a real symbol */
	/* Native frames: the mapped file as the process sees it (its path in
	 * /proc/<pid>/maps, so inside a container the container's path, at
	 * most SYMBOLIZER_MODULE_MAX bytes, not sanitized), or "[vdso]"; and
	 * its GNU build id in hex when it has one. NULL otherwise. Valid as
	 * long as name. */
	const char *module;
	const char *build_id;
};

struct symbolizer_stats {
	uint64_t frames[SYMBOLIZER_KIND_COUNT];
	uint64_t resolved[SYMBOLIZER_KIND_COUNT];
	uint64_t elf_loaded, elf_failed, elf_shared; /* parses, failures, build-id hits */
	uint64_t maps_reads;
	uint64_t cache_hits, cache_misses; /* of the frame cache (symcache.h) */
	size_t pids, files, memory;	   /* cached now; memory in bytes (ELF tables) */
};

/* Look up a JIT address of pid at time (CLOCK_MONOTONIC ns, see
 * symbolizer_set_time; 0 = unknown): write the name into buf
 * (NUL-terminated) and return 1, or return 0 when unknown. */
typedef int (*symbolizer_jit_fn)(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf,
				 size_t len);

/* An interpreted Java frame in a user callchain (from the HotSpot-aware
 * unwinder, sidecar/unwind/): its Method* with bit 62 set and bit 63 clear,
 * a word that is neither a user address (< 2^57) nor a kernel address or
 * PERF_CONTEXT_* marker (bit 63 set). Named through the method callback,
 * marked "_[0]" as async-profiler marks interpreted frames. */
#define SYMBOLIZER_METHOD_TAG  (1ull << 62)
#define SYMBOLIZER_METHOD_MASK ((1ull << 57) - 1)
static inline int symbolizer_is_method(uint64_t word)
{
	return (word >> 62) == 1;
}

/* A C1-compiled Java frame (compilation levels 1-3) in a user callchain:
 * its pc or return address with bit 61 set (62 and 63 clear). Looked up
 * without the tag; its name is marked "_[1]" on the compiled method (before
 * the first "->" of an inline chain, whose inlined parts become "_[i]"). */
#define SYMBOLIZER_C1_TAG (1ull << 61)
static inline int symbolizer_is_c1(uint64_t word)
{
	return (word >> 61) == 1;
}

/* Name a Method* of pid ("java.util.HashMap.get") as it was at time (the
 * sample's, CLOCK_MONOTONIC ns; 0 unknown) into buf: 1 named, 0 not. */
typedef int (*symbolizer_method_fn)(void *ctx, pid_t pid, uint64_t method, uint64_t time, char *buf,
				    size_t len);

/* Register the Method* namer (one for all pids; NULL removes it). Without
 * one, or when it fails, an interpreted frame is "Interpreter_[0]". */
void symbolizer_set_method(struct symbolizer *sym, symbolizer_method_fn fn, void *ctx);

/* A symbolizer_jit_fn over a parsed perf map (sidecar/jvm/perfmap.h): pass the
 * struct perfmap * as ctx. Names are copied verbatim (truncated to len). */
int symbolizer_jit_perfmap(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf,
			   size_t len);

/* The same over a window's JIT log (sidecar/jvm/jitlog.h): by address and
 * time. Pass the struct jitlog * as ctx. */
int symbolizer_jit_jitlog(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf,
			  size_t len);

/* The time the next callchains were sampled at, handed to the JIT lookups. */
void symbolizer_set_time(struct symbolizer *sym, uint64_t time);

/* opts may be NULL. 0 or -errno. /proc/kallsyms is read on first use. */
int symbolizer_open(const struct symbolizer_opts *opts, struct symbolizer **out,
		    struct fs_error *err);
void symbolizer_close(struct symbolizer *sym);
FS_DEFINE_CLEANUP(struct symbolizer, symbolizer_close)
#define cleanup_symbolizer __attribute__((cleanup(symbolizer_close_cleanup)))

/* Register (fn != NULL) or remove the JIT lookup for pid; pid 0 is the
 * fallback for every process without its own. 0 or -ENOSPC (64 max). */
int symbolizer_set_jit(struct symbolizer *sym, pid_t pid, symbolizer_jit_fn fn, void *ctx);

/* Read and cache pid's maps now (while it runs). 0 or -errno (-ESRCH
 * when it is gone). Optional: symbolizing does this on first use. */
int symbolizer_load_pid(struct symbolizer *sym, pid_t pid, struct fs_error *err);

/* Drop what is cached about pid (it exec'd, or the pid is new). */
void symbolizer_forget_pid(struct symbolizer *sym, pid_t pid);

/* Symbolize a perf callchain (leaf first, with context markers) of pid.
 * Fills up to max frames (leaf first, markers dropped), *n the count.
 * Return addresses (every frame after the first of each context) are
 * looked up at addr - 1, as perf does; the first frame of a context (the
 * interrupted pc) is asked of the JIT lookup at addr + 1, which names it
 * the way JFR does in a HotSpot-layout map (agent/agentmap.h). Frames keep
 * addr as looked up for ELF. Always succeeds (unknown frames get
 * labels); returns 0. */
int symbolizer_symbolize(struct symbolizer *sym, pid_t pid, const uint64_t *ips, size_t nr,
			 struct symbolizer_frame *frames, size_t max, size_t *n);

/* Symbolize one address of known kind context (kernel != 0: kernel). */
const char *symbolizer_addr(struct symbolizer *sym, pid_t pid, uint64_t addr, int kernel,
			    enum symbolizer_kind *kind, int *resolved);

/* The process name (/proc/<pid>/comm) as cached with its maps, or NULL. */
const char *symbolizer_comm(struct symbolizer *sym, pid_t pid);

void symbolizer_stats(const struct symbolizer *sym, struct symbolizer_stats *st);

/* "kernel", "native", "jit", "unknown" */
const char *symbolizer_kind_name(enum symbolizer_kind kind);

#endif

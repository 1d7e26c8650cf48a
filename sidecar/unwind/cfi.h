/* cfi.h - native frames by .eh_frame call frame information, for the
 * unwinder (unwind.h).
 *
 * Code built without frame pointers (glibc on Debian, most distribution
 * libraries) can only be unwound by its CFI. A container's files are never
 * parsed here (root): each file, opened as
 * /proc/<pid>/map_files/<start>-<end> (the very file that is mapped, never
 * a path inside the container) with O_PATH, checked to be a regular file
 * and reopened by fd, goes to the sandboxed ELF child (elfjail_cfi), which
 * runs libdw over .eh_frame_hdr's table and answers with a flat table of
 * pc ranges and simple rules (symbolize/cfiflat.h). cfitable.h validates
 * it and evaluates a row's rule over three registers (ip, sp, bp) and the
 * stack copy: a binary search and at most two reads per frame. A file the
 * child fails on, overruns its deadline with or lies about gets no CFI
 * (frame pointers then); after CFI_MAX_KILLS missed deadlines no more
 * files are sent.
 *
 * Tables are cached per file identity (device, inode, size, mtime) for
 * every process: at most CFI_MAX_FILES files and CFI_MAX_BYTES of tables
 * together. A process's executable mappings are read from /proc/<pid>/maps
 * by procmaps.h (the symbolizer's reader, bounded and counted in the same
 * budget) once, and again on a miss at most once a second.
 *
 * Not thread-safe. */
#ifndef FS_CFI_H
#define FS_CFI_H

#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "error.h"
#include "unwind.h"
#include "cleanup.h"

#define CFI_MAX_FILES	  BUDGET_CFI_FILES
#define CFI_REFRESH_MS	  1000
#define CFI_ROW_CACHE	  1024 /* CFI rules kept by pc, per process */
#define CFI_MAX_FILE_SIZE (1ull << 30)
/* per file walked in the child: the sampler waits meanwhile (libjvm.so
 * takes ~150 ms) */
#define CFI_TIMEOUT_MS 2000
#define CFI_MAX_KILLS  4 /* missed deadlines before the child gets no more files */
/* CFI tables kept, all files together (libjvm.so's: 2.4 MiB); past it a
 * file gets no CFI */
#define CFI_MAX_BYTES (128u << 20)

/* A file whose stepping CFI rows have fewer rbp-based code bytes than this
 * (per mille) was built without frame pointers (cfitable_fp_permille). */
#define CFI_FP_PERMILLE 500

struct cfi;	 /* the file cache, shared by processes */
struct cfi_proc; /* one process's executable mappings */

/* proc_root: NULL = /proc (tests). 0 or -ENOMEM. */
int cfi_new(const char *proc_root, struct cfi **out);
void cfi_free(struct cfi *c);
FS_DEFINE_CLEANUP(struct cfi, cfi_free)
#define cleanup_cfi __attribute__((cleanup(cfi_free_cleanup)))

/* Read pid's maps now (while it runs). 0 or -errno (-ESRCH gone). */
int cfi_proc_open(struct cfi *c, pid_t pid, struct cfi_proc **out, struct fs_error *err);
void cfi_proc_free(struct cfi_proc *p);
FS_DEFINE_CLEANUP(struct cfi_proc, cfi_proc_free)
#define cleanup_cfi_proc __attribute__((cleanup(cfi_proc_free_cleanup)))

/* 1 when pc lies in an executable file mapping (or the vDSO) of the
 * process. */
int cfi_proc_is_text(struct cfi_proc *p, uint64_t pc);

/* 1 when pc lies in any executable mapping of the process, anonymous
 * (JIT code) included: where a walk may still step by frame pointers. */
int cfi_proc_is_exec(struct cfi_proc *p, uint64_t pc);

/* 1 when a file mapped executable by the process was built without frame
 * pointers (its CFI says so: CFI_FP_PERMILLE), with its label ("[bash]")
 * in which; 0 when every file that has CFI keeps them (a file without
 * CFI cannot be told apart and counts as keeping them). Walks the CFI of
 * every file not in the cache yet (in the ELF child), so that the samples
 * that follow do not; which names the first file without them in address
 * order (the executable before the libraries). */
int cfi_proc_fp_missing(struct cfi_proc *p, char *which, size_t len);

/* Walk now the CFI of the file mapped with that base name ("libjvm.so"),
 * so that its first sample does not wait for it (libjvm.so: ~150 ms in the
 * ELF child). Returns the start of its first executable mapping, 0 when
 * there is none. */
uint64_t cfi_proc_preload(struct cfi_proc *p, const char *base);

/* unwind_ops.cfi_step over p (ctx): 1 stepped (r is the caller's), 2 the
 * outermost frame (return address undefined), 0 no CFI for r->ip, -1 the
 * CFI cannot be followed (a register we do not have, a read outside the
 * stack copy). */
int cfi_proc_step(struct cfi_proc *p, struct unwind_regs *r, const struct unwind_stack *st,
		  int leaf);

struct cfi_stats {
	uint64_t steps, no_cfi, failed, files, file_errors;
	uint64_t stall_refused; /* files on a file system the container could stall */
};
void cfi_stats(const struct cfi *c, struct cfi_stats *st);

#endif

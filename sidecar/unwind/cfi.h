/* cfi.h - native frames by .eh_frame call frame information, for the
 * unwinder (unwind.h).
 *
 * Code built without frame pointers (glibc on Debian, most distribution
 * libraries) can only be unwound by its CFI. Reading and evaluating CFI is
 * done by elfutils' libdw (dwarf_getcfi_elf, dwarf_cfi_addrframe,
 * dwarf_frame_cfa, dwarf_frame_register): a maintained library that parses
 * .eh_frame/.eh_frame_hdr, runs the CFA programs and hands back DWARF
 * expressions, fuzzed upstream; hand code would have to repeat all of that
 * against files a container controls. This module only evaluates the
 * resulting expressions over three registers (ip, sp, bp) and the stack
 * copy, with a bounded expression stack.
 *
 * Files are opened as /proc/<pid>/map_files/<start>-<end> (the very file
 * that is mapped, never a path inside the container), read by libelf with
 * ELF_C_READ (pread: a container truncating the file cannot SIGBUS us), and
 * cached per file identity (device, inode, size, mtime) for every process:
 * at most CFI_MAX_FILES files. A process's executable mappings are read
 * from /proc/<pid>/maps by procmaps.h (the symbolizer's reader, bounded and
 * counted in the same budget) once, and again on a miss at most once a
 * second.
 *
 * Not thread-safe. */
#ifndef FS_CFI_H
#define FS_CFI_H

#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "error.h"
#include "unwind.h"

#define CFI_MAX_FILES	  BUDGET_CFI_FILES
#define CFI_REFRESH_MS	  1000
#define CFI_MAX_FILE_SIZE (1ull << 30)

struct cfi;	 /* the file cache, shared by processes */
struct cfi_proc; /* one process's executable mappings */

/* proc_root: NULL = /proc (tests). 0 or -ENOMEM. */
int cfi_new(const char *proc_root, struct cfi **out);
void cfi_free(struct cfi *c);

/* Read pid's maps now (while it runs). 0 or -errno (-ESRCH gone). */
int cfi_proc_open(struct cfi *c, pid_t pid, struct cfi_proc **out, struct fs_error *err);
void cfi_proc_free(struct cfi_proc *p);

/* 1 when pc lies in an executable file mapping (or the vDSO) of the
 * process. */
int cfi_proc_is_text(struct cfi_proc *p, uint64_t pc);

/* unwind_ops.cfi_step over p (ctx): 1 stepped (r is the caller's), 2 the
 * outermost frame (return address undefined), 0 no CFI for r->ip, -1 the
 * CFI cannot be followed (a register we do not have, a read outside the
 * stack copy). */
int cfi_proc_step(struct cfi_proc *p, struct unwind_regs *r, const struct unwind_stack *st,
		  int leaf);

struct cfi_stats {
	uint64_t steps, no_cfi, failed, files, file_errors;
};
void cfi_stats(const struct cfi *c, struct cfi_stats *st);

#endif

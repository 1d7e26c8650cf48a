/* nativewalk.h - the walk of a process that is not a JVM: unwind_walk
 * (unwind.h) over one process's executable mappings (cfi.h), with no code
 * cache.
 *
 * Per frame, leaf first: a pc in a file's text is stepped by the file's
 * .eh_frame CFI when a row covers it (cfi_proc_step: the table walked in
 * the sandboxed ELF child, cached by file identity), else by the frame
 * pointer; a pc in anonymous executable memory (JIT code: V8, LuaJIT, a
 * JVM's code cache seen from outside) by the frame pointer; anything else
 * ends the walk. The rules of unwind.h hold: every read bounds-checked
 * against the stack copy, sp strictly growing, at most UNWIND_MAX_FRAMES,
 * so a garbage stack or garbage CFI costs a short stack, never a loop.
 *
 * The output is the callchain's user part (pc, then return addresses);
 * res says why the walk ended (UNWIND_END_ROOT: CFI marked the thread's
 * base, or a zero return address or frame pointer). */
#ifndef FS_NATIVEWALK_H
#define FS_NATIVEWALK_H

#include <stddef.h>
#include <stdint.h>

#include "cfi.h"
#include "unwind.h"

struct nativewalk {
	struct unwind_ops ops; /* over the cfi_proc given to nativewalk_init */
};

/* maps stays the caller's and must outlive w. */
void nativewalk_init(struct nativewalk *w, struct cfi_proc *maps);

/* unwind_walk's contract (out[0] = regs->ip, at most max words). */
size_t nativewalk_run(const struct nativewalk *w, const struct unwind_regs *regs,
		      const struct unwind_stack *st, uint64_t *out, size_t max,
		      struct unwind_result *res);

#endif

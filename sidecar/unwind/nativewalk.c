/* nativewalk.c - native stacks by CFI, else frame pointers: see nativewalk.h */
#include "nativewalk.h"

static int nativewalk_is_exec(void *ctx, uint64_t pc)
{
	return cfi_proc_is_exec(ctx, pc);
}

static int nativewalk_cfi_step(void *ctx, struct unwind_regs *r, const struct unwind_stack *st,
			       int leaf)
{
	return cfi_proc_step(ctx, r, st, leaf);
}

void nativewalk_init(struct nativewalk *w, struct cfi_proc *maps)
{
	/* No code cache: every pc is native code (a file's, or JIT code
	 * stepped by frame pointers, cfi_proc_step finding no row for it). */
	w->ops = (struct unwind_ops){
	    .ctx = maps, .is_text = nativewalk_is_exec, .cfi_step = nativewalk_cfi_step};
}

size_t nativewalk_run(const struct nativewalk *w, const struct unwind_regs *regs,
		      const struct unwind_stack *st, uint64_t *out, size_t max,
		      struct unwind_result *res)
{
	return unwind_walk(&w->ops, regs, st, out, max, res);
}

/* offcpu_native.c - native user stacks of blocked threads: see
 * offcpu_native.h. */
#include "offcpu_native.h"

#include <stdlib.h>

#include "cfi.h"
#include "unwind.h"

struct offcpu_native {
	struct cfi_proc *maps;
	struct unwind_ops ops;
};

static int offcpu_native_is_text(void *ctx, uint64_t pc)
{
	return cfi_proc_is_text(ctx, pc);
}

static int offcpu_native_step(void *ctx, struct unwind_regs *r, const struct unwind_stack *st,
			      int leaf)
{
	return cfi_proc_step(ctx, r, st, leaf);
}

struct offcpu_native *offcpu_native_new(struct cfi *c, pid_t pid)
{
	struct offcpu_native *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	if (cfi_proc_open(c, pid, &n->maps, NULL) < 0) {
		free(n);
		return NULL;
	}
	n->ops = (struct unwind_ops){
	    .ctx = n->maps, .is_text = offcpu_native_is_text, .cfi_step = offcpu_native_step};
	return n;
}

void offcpu_native_free(struct offcpu_native *n)
{
	if (!n)
		return;
	cfi_proc_free(n->maps);
	free(n);
}

size_t offcpu_native_walk(struct offcpu_native *n, uint64_t pc, uint64_t sp, uint64_t bp,
			  const uint8_t *stack, size_t size, uint64_t *out, size_t max)
{
	if (!max)
		return 0;
	if (!n) {
		out[0] = pc;
		return 1;
	}
	struct unwind_regs regs = {.ip = pc, .sp = sp, .bp = bp};
	struct unwind_stack st = {.sp = sp, .data = stack, .size = size};
	struct unwind_result res;
	size_t got = unwind_walk(&n->ops, &regs, &st, out, max, &res);
	if (!got) {
		out[0] = pc;
		got = 1;
	}
	return got;
}

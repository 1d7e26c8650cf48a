/* unwind.h - a HotSpot-aware stack unwinder over one sample's user
 * registers (ip, sp, bp) and a copy of the top of its user stack.
 *
 * For JVMs that run without -XX:+PreserveFramePointer: compiled Java code
 * then uses rbp as a general register, so the kernel's frame-pointer walk
 * stops at the first compiled frame. This unwinder walks, leaf first:
 *
 *   compiled Java frames (nmethods) and stubs   by their frame size, from
 *       the JVM's code cache (before frame_complete, in the prologue, the
 *       return address is still at sp)
 *   interpreted frames   by the frame link in rbp; their Method* (from the
 *       frame's slot) is emitted as a tagged word (UNWIND_METHOD_TAG) that
 *       the symbolizer names through hotspot_method_name
 *   native frames        .eh_frame CFI when the mapped file has it (libdw,
 *       see cfi.h), else frame pointers
 *
 * The output is a callchain of today's form (the first pc, then return
 * addresses, leaf first), so aggregation and symbolization do not change.
 *
 * Trust: the registers and the stack copy come from the sampled (container)
 * process and the code cache facts from its memory. Every stack read is
 * bounds-checked against the copy, sp must grow strictly at each step (no
 * cycles), and the walk stops at UNWIND_MAX_FRAMES. No memory of the process
 * is read per frame except through the callbacks (the blob lookup, cached
 * by the caller). A lying process gets a short or wrong stack, nothing more.
 */
#ifndef FS_UNWIND_H
#define FS_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "hotspot.h"
#include "symbols.h"

#define UNWIND_MAX_FRAMES 256

/* An interpreted frame's Method* in a callchain: bit 62 set, bit 63 clear
 * (symbols.h, whose symbolizer names it). User addresses are below 2^57 and
 * kernel addresses and PERF_CONTEXT_* markers have bit 63 set, so the tag
 * collides with neither. */
#define UNWIND_METHOD_TAG  SYMBOLIZER_METHOD_TAG
#define UNWIND_METHOD_MASK SYMBOLIZER_METHOD_MASK
/* A C1-compiled frame's word: its pc with bit 61 set (symbols.h). */
#define UNWIND_C1_TAG SYMBOLIZER_C1_TAG
static inline int unwind_is_method(uint64_t word)
{
	return symbolizer_is_method(word);
}

struct unwind_regs {
	uint64_t ip, sp, bp;
};

/* The copied stack: size bytes that were at [sp, sp + size) in the process. */
struct unwind_stack {
	uint64_t sp;
	const uint8_t *data;
	size_t size;
};

/* What the unwinder asks of the process. A callback may be NULL (then
 * that kind of frame ends the walk). */
struct unwind_ops {
	void *ctx;
	/* 1 pc lies in the JVM's code cache (cheap: no process read). */
	int (*in_code_cache)(void *ctx, uint64_t pc);
	/* hotspot_find_blob's contract. */
	int (*find_blob)(void *ctx, uint64_t pc, struct hotspot_blob *out);
	/* 1 pc lies in an executable file mapping of the process. */
	int (*is_text)(void *ctx, uint64_t pc);
	/* One native frame by CFI: 1 *r is now the caller's, 0 no CFI covers
	 * r->ip, -1 the CFI could not be followed on this stack. leaf: r->ip
	 * is the sampled pc (else a return address, looked up at ip - 1). */
	int (*cfi_step)(void *ctx, struct unwind_regs *r, const struct unwind_stack *st, int leaf);
	/* Where the return address of a leaf compiled method lies when its
	 * frame is not whole at pc (in its entry, before the frame is built;
	 * in its exit, after `add $N, %rsp`): its offset from sp, or -1 when
	 * the code is not recognised, UNWIND_LEAF_BUILT when the frame is
	 * certainly whole though pc is before frame_complete (the nmethod
	 * entry barrier). *bp_saved = 1
	 * when the word below it certainly holds the caller's rbp (after
	 * `push %rbp`, at `pop %rbp`). Reads the code at pc (leafcall_exit,
	 * leafcall_locate). May be NULL. */
	int (*leaf_frame)(void *ctx, uint64_t pc, int *bp_saved);
#define UNWIND_LEAF_BUILT (-3)
	struct hotspot_frame_layout layout;
};

/* Why a walk ended. */
enum unwind_end {
	UNWIND_END_ROOT,    /* a zero return address or frame pointer: a thread's base */
	UNWIND_END_STACK,   /* the next read was outside the stack copy */
	UNWIND_END_LIMIT,   /* max frames reached */
	UNWIND_END_BAD,	    /* sp did not grow, or an impossible frame */
	UNWIND_END_UNKNOWN, /* a pc in no code we know */
	UNWIND_END_COUNT,
};

struct unwind_result {
	size_t n;	     /* words written */
	size_t interpreted;  /* interpreted frames (tagged Method*) among them */
	size_t compiled;     /* nmethod frames */
	size_t native_cfi;   /* native frames stepped by CFI */
	size_t native_fp;    /* native frames stepped by frame pointer */
	enum unwind_end end; /* why it stopped */
	uint64_t depth;	     /* bytes of stack the walk went through (last sp - first sp) */
};

/* Walk: out[0] = regs->ip (nothing when it is 0 or no user address), then one word per caller
 * (return address, or a tagged Method* for an interpreted frame); a C1-compiled frame's word has
 * UNWIND_C1_TAG set. At most max words (and
 * UNWIND_MAX_FRAMES). Returns the number of words (>= 1 when regs->ip is
 * not 0). */
size_t unwind_walk(const struct unwind_ops *ops, const struct unwind_regs *regs,
		   const struct unwind_stack *st, uint64_t *out, size_t max,
		   struct unwind_result *res);

/* 1 when pc can be a return address: in the code cache or in a file's
 * text (ops' callbacks), else 0. */
int unwind_plausible_pc(const struct unwind_ops *ops, uint64_t pc);

/* Read the 8 bytes at addr from the copy: 0, or -1 when outside it. */
int unwind_read(const struct unwind_stack *st, uint64_t addr, uint64_t *val);

/* "root", "stack", "limit", "bad", "unknown" */
const char *unwind_end_name(enum unwind_end end);

#endif

/* unwind.c - the HotSpot-aware walk: see unwind.h */
#include "unwind.h"

#include <string.h>

#define UNWIND_MAX_FRAME_BYTES (1u << 20) /* larger compiled frames are not believed */

int unwind_read(const struct unwind_stack *st, uint64_t addr, uint64_t *val)
{
	if (addr < st->sp || addr - st->sp > st->size || st->size - (addr - st->sp) < 8)
		return -1;
	memcpy(val, st->data + (addr - st->sp), 8);
	return 0;
}

const char *unwind_end_name(enum unwind_end end)
{
	switch (end) {
	case UNWIND_END_ROOT: return "root";
	case UNWIND_END_STACK: return "stack";
	case UNWIND_END_LIMIT: return "limit";
	case UNWIND_END_BAD: return "bad";
	case UNWIND_END_UNKNOWN:
	default: return "unknown";
	}
}

int unwind_plausible_pc(const struct unwind_ops *ops, uint64_t pc)
{
	if (!pc)
		return 0;
	if (ops->in_code_cache && ops->in_code_cache(ops->ctx, pc))
		return 1;
	return ops->is_text && ops->is_text(ops->ctx, pc);
}

/* One step through a frame-pointer link at r->bp: 0 or an end reason. */
static int unwind_fp_step(const struct unwind_stack *st, struct unwind_regs *r)
{
	uint64_t fp = r->bp, ra, link;
	if (fp < r->sp || fp % 8)
		return UNWIND_END_BAD;
	if (unwind_read(st, fp, &link) < 0 || unwind_read(st, fp + 8, &ra) < 0)
		return UNWIND_END_STACK;
	*r = (struct unwind_regs){.ip = ra, .sp = fp + 16, .bp = link};
	return 0;
}

/* An interpreted frame at r->bp: its Method* into *method (0 unknown), the
 * caller's registers into r. 0 or an end reason. */
static int unwind_interp_step(const struct unwind_ops *ops, const struct unwind_stack *st,
			      struct unwind_regs *r, uint64_t *method)
{
	const struct hotspot_frame_layout *l = &ops->layout;
	uint64_t fp = r->bp, m = 0, ra, link, sender_sp;
	*method = 0;
	if (fp < r->sp || fp % 8)
		return UNWIND_END_BAD;
	if (unwind_read(st, fp + (int64_t)l->return_addr_off, &ra) < 0 ||
	    unwind_read(st, fp + (int64_t)l->saved_fp_off, &link) < 0)
		return UNWIND_END_STACK;
	if (unwind_read(st, fp + (int64_t)l->interp_method_off, &m) == 0 && m && !(m & 7) &&
	    m <= UNWIND_METHOD_MASK)
		*method = m;
	/* The caller's sp before the interpreter (or a c2i adapter) extended
	 * it: what a compiled caller's frame size counts from. It lies at or
	 * above the raw sp just past our frame (fp + 16). */
	uint64_t raw_sp = fp + 16;
	if (unwind_read(st, fp + (int64_t)l->interp_sender_sp_off, &sender_sp) < 0 ||
	    sender_sp < raw_sp || sender_sp - raw_sp > UNWIND_MAX_FRAME_BYTES || sender_sp % 8)
		sender_sp = raw_sp;
	*r = (struct unwind_regs){.ip = ra, .sp = sender_sp, .bp = link};
	return 0;
}

/* The leaf's return address where the code at pc puts it (leaf_frame):
 * 0 and *r the caller's, or -1 (then the frame size or the prologue rule
 * decides), or UNWIND_LEAF_BUILT (the frame size decides). The caller's rbp is the word below the
 * return address when that is certain, or when rbp points into the unbuilt frame (it was made this
 * frame's pointer); otherwise rbp still is the caller's. */
static int unwind_leaf_frame(const struct unwind_ops *ops, const struct unwind_stack *st,
			     struct unwind_regs *r)
{
	int saved = 0;
	int off = ops->leaf_frame(ops->ctx, r->ip, &saved);
	uint64_t ra, bp = r->bp, link;
	if (off == UNWIND_LEAF_BUILT)
		return UNWIND_LEAF_BUILT;
	if (off < 0 || off % 8 || (uint64_t)off > UNWIND_MAX_FRAME_BYTES)
		return -1;
	if (unwind_read(st, r->sp + (uint64_t)off, &ra) < 0 || !unwind_plausible_pc(ops, ra))
		return -1;
	if (off >= 8 && (saved || (r->bp >= r->sp && r->bp < r->sp + (uint64_t)off))) {
		if (unwind_read(st, r->sp + (uint64_t)off - 8, &link) < 0)
			return -1;
		bp = link;
	}
	*r = (struct unwind_regs){.ip = ra, .sp = r->sp + (uint64_t)off + 8, .bp = bp};
	return 0;
}

/* A compiled frame or stub of the blob b: 0 or an end reason. */
static int unwind_blob_step(const struct unwind_ops *ops, const struct unwind_stack *st,
			    const struct hotspot_blob *b, struct unwind_regs *r, int leaf)
{
	uint64_t size = b->frame_size, ra, link;
	if (size == 0)
		return unwind_fp_step(st, r); /* no frame size: stubs that keep rbp */
	if (size % 8 || size > UNWIND_MAX_FRAME_BYTES || size < 8)
		return UNWIND_END_BAD;
	/* A leaf in its entry or exit: the code at pc says where the return
	 * address is (the frame size does not: the frame is not built yet,
	 * or `add $N, %rsp` already released it). */
	int built = 0;
	if (leaf && b->kind == HOTSPOT_BLOB_NMETHOD && ops->leaf_frame &&
	    (built = unwind_leaf_frame(ops, st, r)) == 0)
		return 0;
	if (leaf && built != UNWIND_LEAF_BUILT && b->frame_complete >= 0 &&
	    r->ip - b->code_begin < (uint64_t)b->frame_complete) {
		/* In the prologue: the frame is not built yet, the return
		 * address is at sp (or one word up once rbp was pushed). */
		if (unwind_read(st, r->sp, &ra) < 0)
			return UNWIND_END_STACK;
		if (unwind_plausible_pc(ops, ra)) {
			*r = (struct unwind_regs){.ip = ra, .sp = r->sp + 8, .bp = r->bp};
			return 0;
		}
		if (unwind_read(st, r->sp + 8, &ra) < 0 || unwind_read(st, r->sp, &link) < 0)
			return UNWIND_END_STACK;
		if (!unwind_plausible_pc(ops, ra))
			return UNWIND_END_BAD;
		*r = (struct unwind_regs){.ip = ra, .sp = r->sp + 16, .bp = link};
		return 0;
	}
	uint64_t csp = r->sp + size;
	if (unwind_read(st, csp - 8, &ra) < 0 || unwind_read(st, csp - 16, &link) < 0)
		return UNWIND_END_STACK;
	*r = (struct unwind_regs){.ip = ra, .sp = csp, .bp = link};
	return 0;
}

/* A native frame: CFI, else frame pointers. 0, -1 the thread's base (CFI
 * says the return address is undefined), or an end reason. */
static int unwind_native_step(const struct unwind_ops *ops, const struct unwind_stack *st,
			      struct unwind_regs *r, int leaf, struct unwind_result *res)
{
	if (ops->cfi_step) {
		struct unwind_regs n = *r;
		int c = ops->cfi_step(ops->ctx, &n, st, leaf);
		if (c == 2)
			return -1;
		if (c == 1) {
			*r = n;
			res->native_cfi++;
			return 0;
		}
	}
	int e = unwind_fp_step(st, r);
	if (!e)
		res->native_fp++;
	return e;
}

size_t unwind_walk(const struct unwind_ops *ops, const struct unwind_regs *regs,
		   const struct unwind_stack *st, uint64_t *out, size_t max,
		   struct unwind_result *res)
{
	struct unwind_result local;
	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (max > UNWIND_MAX_FRAMES)
		max = UNWIND_MAX_FRAMES;
	res->end = UNWIND_END_ROOT;
	/* No user pc is at or above 2^57: such a word would also read as a
	 * tag (bits 61, 62) in the callchain. */
	if (max == 0 || regs->ip == 0 || regs->ip > UNWIND_METHOD_MASK) {
		res->end = regs->ip ? UNWIND_END_BAD : UNWIND_END_ROOT;
		return 0;
	}
	struct unwind_regs r = *regs;
	size_t n = 0;
	out[n++] = r.ip;
	for (int leaf = 1;; leaf = 0) {
		if (n >= max) {
			res->end = UNWIND_END_LIMIT;
			break;
		}
		struct unwind_regs prev = r;
		struct hotspot_blob b = {.kind = HOTSPOT_BLOB_NONE};
		int e;
		if (ops->in_code_cache && ops->find_blob && ops->in_code_cache(ops->ctx, r.ip) &&
		    ops->find_blob(ops->ctx, r.ip, &b) == 1 && b.kind != HOTSPOT_BLOB_NONE) {
			if (b.kind == HOTSPOT_BLOB_INTERPRETER) {
				uint64_t method;
				e = unwind_interp_step(ops, st, &r, &method);
				if (method) {
					out[n - 1] = UNWIND_METHOD_TAG | method;
					res->interpreted++;
				}
			} else {
				e = unwind_blob_step(ops, st, &b, &r, leaf);
				if (b.kind == HOTSPOT_BLOB_NMETHOD)
					res->compiled++;
				if (b.kind == HOTSPOT_BLOB_NMETHOD && b.comp_level >= 1 &&
				    b.comp_level <= 3)
					out[n - 1] |= UNWIND_C1_TAG;
			}
		} else if (ops->is_text && ops->is_text(ops->ctx, r.ip)) {
			e = unwind_native_step(ops, st, &r, leaf, res);
			if (e < 0) {
				res->end = UNWIND_END_ROOT;
				break;
			}
		} else {
			e = UNWIND_END_UNKNOWN;
		}
		if (e) {
			res->end = (enum unwind_end)e;
			break;
		}
		if (r.ip == 0) {
			res->end = UNWIND_END_ROOT;
			break;
		}
		if (r.ip > UNWIND_METHOD_MASK) {
			res->end = UNWIND_END_BAD; /* garbage, not a return address */
			break;
		}
		if (r.sp <= prev.sp) {
			res->end = UNWIND_END_BAD;
			break;
		}
		out[n++] = r.ip;
	}
	res->n = n;
	res->depth = r.sp > regs->sp ? r.sp - regs->sp : 0;
	return n;
}

/* test_unwind.c - the HotSpot-aware unwinder on synthetic stacks: compiled
 * frames, stubs, interpreted frames, native frames by frame pointer and by
 * real CFI (this process's libc and _start through libdw), the prologue,
 * corrupt and cyclic stacks, the step limit; and the symbolizer naming a
 * tagged Method* "_[0]". The JVM side is a fixture (a fake code cache), not
 * the hotspot reader. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"
#include "leafcall.h"
#include "symbols.h"
#include "tap.h"
#include "unwind.h"

/* ---- the fixture: a fake code cache and a fake text segment ---------------- */

#define CC_LOW	 0x7f0000000000ull
#define CC_HIGH	 0x7f0000100000ull
#define TEXT_LOW 0x400000ull
#define TEXT_HI	 0x500000ull
#define STACK_SP 0x7ffd00000000ull

#define NMETHOD_A 0x7f0000001000ull /* frame 32 bytes, frame_complete 16 */
#define NMETHOD_B 0x7f0000002000ull /* frame 48 bytes */
#define INTERP	  0x7f0000010000ull
#define CALLSTUB  0x7f0000020000ull /* frame size 0: rbp frame */

static const struct hotspot_blob blobs[] = {
    {HOTSPOT_BLOB_NMETHOD, 1, NMETHOD_A, NMETHOD_A + 0x100, 32, 16, 0x111000, 4, 1, ""},
    {HOTSPOT_BLOB_NMETHOD, 2, NMETHOD_B, NMETHOD_B + 0x100, 48, 16, 0x222000, 1, 2, ""},
    {HOTSPOT_BLOB_INTERPRETER, 3, INTERP, INTERP + 0x1000, 0, -1, 0, 0, -1, ""},
    {HOTSPOT_BLOB_STUB, 4, CALLSTUB, CALLSTUB + 0x100, 0, -1, 0, 0, -1, "StubRoutines (1)"},
};

static int fx_in_code_cache(void *ctx, uint64_t pc)
{
	return pc >= CC_LOW && pc < CC_HIGH;
}

static int fx_find_blob(void *ctx, uint64_t pc, struct hotspot_blob *out)
{
	for (size_t i = 0; i < sizeof(blobs) / sizeof(blobs[0]); i++)
		if (pc >= blobs[i].code_begin && pc < blobs[i].code_end) {
			*out = blobs[i];
			return 1;
		}
	memset(out, 0, sizeof(*out));
	return 0;
}

static int fx_is_text(void *ctx, uint64_t pc)
{
	return pc >= TEXT_LOW && pc < TEXT_HI;
}

static struct unwind_ops fx_ops(void)
{
	return (struct unwind_ops){
	    .in_code_cache = fx_in_code_cache,
	    .find_blob = fx_find_blob,
	    .is_text = fx_is_text,
	    .layout = {.interp_method_off = -24,
		       .interp_sender_sp_off = -8,
		       .interp_bcp_off = -64,
		       .saved_fp_off = 0,
		       .return_addr_off = 8},
	};
}

static uint64_t stack[512]; /* stack[i] is at STACK_SP + 8 i */
#define AT(i) (STACK_SP + 8 * (uint64_t)(i))

static struct unwind_stack fx_stack(size_t words)
{
	return (struct unwind_stack){
	    .sp = STACK_SP, .data = (const uint8_t *)stack, .size = words * 8};
}

/* A whole thread: A (compiled) <- B (compiled) <- interpreted (Method*
 * 0x333000) <- call stub <- native (fp) <- thread base (ra 0).
 *   A: sp = 0, frame 32: ra at [3], saved rbp at [2]
 *   B: sp = 4, frame 48: ra at [9], saved rbp at [8] = fp of interp
 *   interp: fp at 20: [20] link -> 30, [21] ra in the call stub,
 *           [17] Method*, [19] sender sp
 *   call stub: fp 30: [30] link -> 40, [31] ra in native text
 *   native: fp 40: [40] 0, [41] 0 */
static void fx_thread(void)
{
	memset(stack, 0, sizeof(stack));
	stack[3] = NMETHOD_B + 0x40;
	stack[2] = 0xdead; /* rbp as A saved it: B used rbp as a register */
	stack[9] = INTERP + 0x80;
	stack[8] = AT(20);
	stack[20] = AT(30);
	stack[21] = CALLSTUB + 0x30;
	stack[17] = 0x333000;
	stack[19] = AT(22);
	stack[30] = AT(40);
	stack[31] = TEXT_LOW + 0x1234;
	stack[40] = 0;
	stack[41] = 0;
}

static void test_whole_thread(void)
{
	struct unwind_ops ops = fx_ops();
	fx_thread();
	struct unwind_regs regs = {.ip = NMETHOD_A + 0x50, .sp = AT(0), .bp = 0xbeef};
	struct unwind_stack st = fx_stack(64);
	uint64_t out[16];
	struct unwind_result res;
	size_t n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	is_int(n, 5, "whole thread: 5 frames");
	is_int(out[0], NMETHOD_A + 0x50, "leaf pc");
	is_int(out[1], (NMETHOD_B + 0x40) | UNWIND_C1_TAG,
	       "compiled caller by frame size, tagged C1 (level 1)");
	ok(!symbolizer_is_c1(out[0]), "a C2 frame is not tagged");
	is_int(out[2], UNWIND_METHOD_TAG | 0x333000, "interpreted frame as a tagged Method*");
	is_int(out[3], CALLSTUB + 0x30, "call stub by frame link");
	is_int(out[4], TEXT_LOW + 0x1234, "native caller by frame pointer");
	is_int(res.end, UNWIND_END_ROOT, "ends at the thread's base");
	is_int(res.compiled, 2, "two compiled frames");
	is_int(res.interpreted, 1, "one interpreted frame");
	is_int(res.native_fp, 1, "one native frame by fp");
	ok(symbolizer_is_method(out[2]) && !symbolizer_is_method(out[1]) &&
	       !symbolizer_is_method((uint64_t)PERF_CONTEXT_USER) &&
	       !symbolizer_is_method(0xffffffff81000000ull),
	   "the tag collides with no address or marker");
}

static void test_prologue(void)
{
	struct unwind_ops ops = fx_ops();
	uint64_t out[16];
	struct unwind_result res;
	/* before push rbp: the return address at sp */
	memset(stack, 0, sizeof(stack));
	stack[0] = TEXT_LOW + 0x10;
	stack[1] = 0;
	stack[2] = 0;
	struct unwind_regs regs = {.ip = NMETHOD_A + 4, .sp = AT(0), .bp = AT(1)};
	struct unwind_stack st = fx_stack(16);
	size_t n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	ok(n >= 2 && out[1] == TEXT_LOW + 0x10, "prologue: return address at sp");
	ok(!symbolizer_is_c1(out[1]) && !symbolizer_is_method(out[1]),
	   "a native frame is untagged");
	/* after push rbp: saved rbp at sp, return address one word up */
	stack[0] = AT(4);
	stack[1] = TEXT_LOW + 0x20;
	stack[4] = 0;
	stack[5] = 0;
	regs = (struct unwind_regs){.ip = NMETHOD_A + 8, .sp = AT(0), .bp = 0};
	n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	ok(n >= 2 && out[1] == TEXT_LOW + 0x20, "prologue: return address above the pushed rbp");
	is_int(res.end, UNWIND_END_ROOT, "prologue: then frame pointers to the base");
	/* not the leaf: frame_complete does not matter */
	fx_thread();
	stack[3] = NMETHOD_B + 4; /* a return address inside B's prologue range */
	st = fx_stack(64);
	regs = (struct unwind_regs){.ip = NMETHOD_A + 0x50, .sp = AT(0), .bp = 0};
	n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	ok(n >= 3 && symbolizer_is_method(out[2]),
	   "a caller's pc before frame_complete still uses the frame size");
}

/* The exit of NMETHOD_A: add $0x10,%rsp; pop %rbp; poll; ja; ret */
#define A_EXIT (NMETHOD_A + 0xe0)
static const uint8_t a_exit[] = {0x48, 0x83, 0xc4, 0x10, 0x5d, 0x49, 0x3b, 0xa7, 0x40, 0x03,
				 0x00, 0x00, 0x0f, 0x87, 0x10, 0x00, 0x00, 0x00, 0xc3};

static int fx_leaf_frame(void *ctx, uint64_t pc, int *bp_saved)
{
	if (pc < A_EXIT || pc >= A_EXIT + sizeof(a_exit))
		return -1;
	int x = leafcall_exit(a_exit + (pc - A_EXIT), sizeof(a_exit) - (pc - A_EXIT));
	*bp_saved = x == 8;
	return x;
}

static void test_exit(void)
{
	struct unwind_ops ops = fx_ops();
	uint64_t out[16];
	struct unwind_result res;
	ops.leaf_frame = fx_leaf_frame;
	/* at pop %rbp: saved rbp at sp, the return address above it; the
	 * word at sp + frame size - 8 belongs to the caller's frame */
	memset(stack, 0, sizeof(stack));
	stack[0] = AT(6);
	stack[1] = TEXT_LOW + 0x30;
	stack[3] = NMETHOD_B + 0x40;
	struct unwind_regs regs = {.ip = A_EXIT + 4, .sp = AT(0), .bp = AT(0)};
	struct unwind_stack st = fx_stack(16);
	size_t n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	ok(n >= 2 && out[1] == TEXT_LOW + 0x30,
	   "exit: at pop %%rbp, the caller above the saved rbp");
	is_int(res.end, UNWIND_END_ROOT, "exit: at pop %%rbp, then the saved rbp to the base");
	/* after pop %rbp (the poll, ja, ret): the return address at sp */
	stack[0] = TEXT_LOW + 0x40;
	stack[2] = NMETHOD_B + 0x40;
	for (uint64_t at = 5; at < sizeof(a_exit); at = at == 5 ? 12 : at == 12 ? 18 : 99) {
		regs = (struct unwind_regs){.ip = A_EXIT + at, .sp = AT(0), .bp = AT(6)};
		n = unwind_walk(&ops, &regs, &st, out, 16, &res);
		ok(n >= 2 && out[1] == TEXT_LOW + 0x40, "exit: at +%u, the caller at sp",
		   (unsigned)at);
	}
	/* before the frame is released: the frame size still holds */
	fx_thread();
	st = fx_stack(64);
	regs = (struct unwind_regs){.ip = A_EXIT, .sp = AT(0), .bp = 0};
	n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	ok(n >= 3 && symbolizer_is_method(out[2]), "exit: at add %%rsp, by the frame size");
	/* a word at sp that is no code: the frame size decides */
	regs = (struct unwind_regs){.ip = A_EXIT + 12, .sp = AT(0), .bp = 0};
	n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	ok(n >= 3 && symbolizer_is_method(out[2]),
	   "exit: an implausible return address is ignored");
}

static void test_corrupt(void)
{
	struct unwind_ops ops = fx_ops();
	uint64_t out[16];
	struct unwind_result res;
	struct unwind_stack st = fx_stack(64);
	/* an interpreted frame linking to itself */
	memset(stack, 0, sizeof(stack));
	stack[10] = AT(10);
	stack[11] = INTERP + 0x10;
	stack[7] = 0x444000;
	stack[9] = 0;
	struct unwind_regs regs = {.ip = INTERP + 0x10, .sp = AT(0), .bp = AT(10)};
	size_t n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	/* the leaf and the interpreted frame, then the link back to itself */
	ok(n == 2 && res.end == UNWIND_END_BAD,
	   "a cyclic frame link ends the walk (%zu frames, %s)", n, unwind_end_name(res.end));
	/* a frame pointer below sp */
	regs = (struct unwind_regs){.ip = TEXT_LOW + 8, .sp = AT(8), .bp = AT(2)};
	n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	is_int(n, 1, "fp below sp: only the leaf");
	is_int(res.end, UNWIND_END_BAD, "fp below sp: bad");
	/* a frame that runs past the copy */
	fx_thread();
	st = fx_stack(3); /* B's return address at [3] is outside */
	regs = (struct unwind_regs){.ip = NMETHOD_A + 0x50, .sp = AT(0), .bp = 0};
	n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	is_int(n, 1, "past the copy: only the leaf");
	is_int(res.end, UNWIND_END_STACK, "past the copy: stack");
	/* a pc in no code */
	regs = (struct unwind_regs){.ip = 0x1000, .sp = AT(0), .bp = 0};
	n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	ok(n == 1 && res.end == UNWIND_END_UNKNOWN, "unknown pc: only the leaf");
	/* a Method* that is no pointer is not tagged */
	fx_thread();
	stack[17] = 0x8000000000000001ull;
	st = fx_stack(64);
	regs = (struct unwind_regs){.ip = NMETHOD_A + 0x50, .sp = AT(0), .bp = 0};
	n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	ok(n == 5 && out[2] == INTERP + 0x80, "an impossible Method* keeps the pc");
	/* a return address that is no user address ends the walk (it would
	 * read as a tag) */
	fx_thread();
	stack[3] = 0x4000000000001000ull;
	regs = (struct unwind_regs){.ip = NMETHOD_A + 0x50, .sp = AT(0), .bp = 0};
	n = unwind_walk(&ops, &regs, &st, out, 16, &res);
	ok(n == 1 && res.end == UNWIND_END_BAD, "a return address >= 2^57 ends the walk");
	/* zero registers */
	regs = (struct unwind_regs){0};
	is_int(unwind_walk(&ops, &regs, &st, out, 16, &res), 0, "ip 0: no frames");
}

static void test_limit(void)
{
	struct unwind_ops ops = fx_ops();
	uint64_t out[16];
	struct unwind_result res;
	fx_thread();
	struct unwind_stack st = fx_stack(64);
	struct unwind_regs regs = {.ip = NMETHOD_A + 0x50, .sp = AT(0), .bp = 0};
	size_t n = unwind_walk(&ops, &regs, &st, out, 3, &res);
	is_int(n, 3, "max 3: 3 frames");
	is_int(res.end, UNWIND_END_LIMIT, "max 3: limit");
	/* a long fp chain stops at UNWIND_MAX_FRAMES */
	memset(stack, 0, sizeof(stack));
	for (size_t i = 0; i + 3 < 512; i += 2) {
		stack[i] = AT(i + 2);
		stack[i + 1] = TEXT_LOW + 0x100;
	}
	st = fx_stack(512);
	regs = (struct unwind_regs){.ip = TEXT_LOW + 0x100, .sp = AT(0), .bp = AT(0)};
	uint64_t big[UNWIND_MAX_FRAMES + 8];
	n = unwind_walk(&ops, &regs, &st, big, UNWIND_MAX_FRAMES + 8, &res);
	is_int(n, UNWIND_MAX_FRAMES, "a 255-frame chain stops at UNWIND_MAX_FRAMES");
}

/* ---- CFI on this very process ------------------------------------------------ */

extern void _start(void);

static int fx_cfi_is_text(void *ctx, uint64_t pc)
{
	return cfi_proc_is_text(ctx, pc);
}

static int fx_cfi_step(void *ctx, struct unwind_regs *r, const struct unwind_stack *st, int leaf)
{
	return cfi_proc_step(ctx, r, st, leaf);
}

static void test_cfi(void)
{
	struct cfi *c = NULL;
	struct cfi_proc *p = NULL;
	struct fs_error err = {0};
	if (cfi_new(NULL, &c) < 0 || cfi_proc_open(c, getpid(), &p, &err) < 0) {
		tap_ok(0, "cfi: open self (%s)", err.msg);
		cfi_free(c);
		return;
	}
	uint64_t fn = (uint64_t)(uintptr_t)&getpid; /* libc, no frame pointer */
	uint64_t ret = (uint64_t)(uintptr_t)&test_cfi + 16;
	ok(cfi_proc_is_text(p, fn) && cfi_proc_is_text(p, ret), "cfi: libc and us are text");
	ok(!cfi_proc_is_text(p, (uint64_t)(uintptr_t)stack), "cfi: data is not text");
	/* at a function's first instruction: CFA = sp + 8, ra at sp */
	memset(stack, 0, sizeof(stack));
	stack[0] = ret;
	struct unwind_regs r = {.ip = fn, .sp = AT(0), .bp = 0x1234};
	struct unwind_stack st = fx_stack(16);
	int s = cfi_proc_step(p, &r, &st, 1);
	is_int(s, 1, "cfi: stepped out of libc's getpid at its entry");
	ok(r.ip == ret && r.sp == AT(1) && r.bp == 0x1234, "cfi: ra from sp, rbp unchanged");
	/* again: the rule kept for that pc (CFI_ROW_CACHE) gives the same step */
	r = (struct unwind_regs){.ip = fn, .sp = AT(0), .bp = 0x1234};
	is_int(cfi_proc_step(p, &r, &st, 1), 1, "cfi: the same pc again");
	ok(r.ip == ret && r.sp == AT(1) && r.bp == 0x1234, "cfi:   the same step");
	/* a pc in no file whose slot in that cache is getpid's: not its rule */
	uint64_t far = fn + (1ull << 22);
	for (int k = 2; k < 64 && cfi_proc_is_text(p, far); k++)
		far = fn + ((uint64_t)k << 22);
	r = (struct unwind_regs){.ip = far, .sp = AT(0), .bp = 0};
	is_int(cfi_proc_step(p, &r, &st, 1), 0, "cfi: another pc of the same slot: no CFI");
	/* the program's entry: the return address is undefined (the base) */
	r = (struct unwind_regs){.ip = (uint64_t)(uintptr_t)&_start + 4, .sp = AT(0), .bp = 0};
	s = cfi_proc_step(p, &r, &st, 0);
	/* glibc's _start marks the return address undefined in its CFI */
	is_int(s, 2, "cfi: _start is the outermost frame");
	/* a pc in no file */
	r = (struct unwind_regs){.ip = 0x10, .sp = AT(0), .bp = 0};
	is_int(cfi_proc_step(p, &r, &st, 1), 0, "cfi: no CFI outside any file");
	/* the read would be outside the copy */
	r = (struct unwind_regs){.ip = fn, .sp = AT(0), .bp = 0};
	st = fx_stack(0);
	is_int(cfi_proc_step(p, &r, &st, 1), -1, "cfi: ra outside the copy fails");
	/* through the unwinder: libc leaf by CFI, then our ra, then fp */
	struct unwind_ops ops = {.ctx = p, .is_text = fx_cfi_is_text, .cfi_step = fx_cfi_step};
	uint64_t out[8];
	struct unwind_result res;
	r = (struct unwind_regs){.ip = fn, .sp = AT(0), .bp = 0};
	st = fx_stack(16);
	size_t n = unwind_walk(&ops, &r, &st, out, 8, &res);
	ok(n >= 2 && out[1] == ret && res.native_cfi >= 1, "cfi: the walk takes libc's CFI");
	struct cfi_stats cs;
	cfi_stats(c, &cs);
	ok(cs.files >= 1, "cfi: files cached (%llu)", (unsigned long long)cs.files);
	cfi_proc_free(p);
	cfi_free(c);
}

/* ---- the symbolizer's side ---------------------------------------------------- */

static int fx_method_name(void *ctx, pid_t pid, uint64_t method, uint64_t time, char *buf,
			  size_t len)
{
	if (method != 0x333000)
		return 0;
	snprintf(buf, len, "flametest.Workload.hotLoop");
	return 1;
}

static int fx_jit(void *ctx, pid_t pid, uint64_t addr, uint64_t time, char *buf, size_t len)
{
	if (addr + 1 >= 0x10000 && addr <= 0x10000 + 1) /* a leaf is looked up at pc + 1 */
		snprintf(buf, len, "a.B.outer->a.B.inl");
	else if (addr == 0x20000 - 1)
		snprintf(buf, len, "a.B.plain");
	else
		return 0;
	return 1;
}

static void test_symbolize_c1(void)
{
	struct symbolizer *sym;
	struct fs_error err = {0};
	if (symbolizer_open(NULL, &sym, &err) < 0) {
		tap_ok(0, "symbolizer_open: %s", err.msg);
		return;
	}
	symbolizer_set_jit(sym, getpid(), fx_jit, NULL);
	/* anonymous memory (JIT) of this process: map two pages to name */
	uint64_t chain[] = {(uint64_t)PERF_CONTEXT_USER, 0x10000 | SYMBOLIZER_C1_TAG,
			    0x20000 | SYMBOLIZER_C1_TAG, 0x20000};
	struct symbolizer_frame f[4];
	size_t n = 0;
	symbolizer_symbolize(sym, getpid(), chain, 4, f, 4, &n);
	is_int(n, 3, "three frames");
	is_str(f[0].name, "a.B.outer_[1]->a.B.inl", "C1 leaf: _[1] on the compiled method");
	is_str(f[1].name, "a.B.plain_[1]", "C1 caller looked up at ra - 1 without the tag");
	is_str(f[2].name, "a.B.plain", "the same pc untagged: no mark");
	symbolizer_close(sym);
}

static void test_symbolize_method(void)
{
	struct symbolizer *sym;
	struct fs_error err = {0};
	if (symbolizer_open(NULL, &sym, &err) < 0) {
		tap_ok(0, "symbolizer_open: %s", err.msg);
		return;
	}
	uint64_t chain[] = {(uint64_t)PERF_CONTEXT_USER, UNWIND_METHOD_TAG | 0x333000,
			    UNWIND_METHOD_TAG | 0x444000};
	struct symbolizer_frame f[4];
	size_t n = 0;
	symbolizer_symbolize(sym, getpid(), chain, 3, f, 4, &n);
	is_int(n, 2, "two interpreted frames");
	is_str(f[0].name, "Interpreter_[0]", "no namer: Interpreter_[0]");
	symbolizer_set_method(sym, fx_method_name, NULL);
	symbolizer_symbolize(sym, getpid(), chain, 3, f, 4, &n);
	is_str(f[0].name, "flametest.Workload.hotLoop_[0]", "named and marked _[0]");
	ok(f[0].kind == SYMBOLIZER_KIND_JIT && f[0].resolved, "a resolved Java frame");
	is_str(f[1].name, "Interpreter_[0]", "an unknown Method*: Interpreter_[0]");
	symbolizer_close(sym);
}

int main(void)
{
	tap_plan(57);
	test_whole_thread();
	test_prologue();
	test_exit();
	test_corrupt();
	test_limit();
	test_cfi();
	test_symbolize_method();
	test_symbolize_c1();
	return tap_done();
}

/* test_nativewalk.c - the walk of processes that are not JVMs
 * (nativewalk.h) on this very process: built -O2 without frame pointers,
 * its own stack walked by CFI to the thread's base, with the return
 * addresses the compiler saw; JIT-like anonymous code stepped by frame
 * pointer; and hostile stacks (random words, words that point back into the
 * stack or at code, a cycle) that must give a bounded walk and no crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cfi.h"
#include "nativewalk.h"
#include "tap.h"

#define NW_COPY 32768

static uint8_t copy[NW_COPY];
static struct unwind_regs regs;
static size_t copied;
static void *ra_c, *ra_b, *ra_a;

/* [lo, hi) of this thread's stack, from /proc/self/maps. */
static int nw_stack_range(uint64_t *lo, uint64_t *hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", lo, hi) == 2)
			found = 1;
	if (f)
		fclose(f);
	return found ? 0 : -1;
}

/* What the kernel does for a sample: copy the stack as raw bytes (the
 * frames' redzones too: no ASan check here). */
__attribute__((no_sanitize_address, noinline)) static void nw_copy(uint64_t sp, size_t len)
{
	const volatile uint8_t *from = (const volatile uint8_t *)(uintptr_t)sp;
	for (size_t i = 0; i < len; i++)
		copy[i] = from[i];
}

/* The registers here and a copy of the stack above them, as a sample. */
__attribute__((noinline)) static void nw_c(void)
{
	uint64_t sp, bp, ip, lo, hi;
	__asm__ volatile("mov %%rsp, %0\n\tmov %%rbp, %1\n\tlea 0(%%rip), %2"
			 : "=r"(sp), "=r"(bp), "=r"(ip));
	ra_c = __builtin_return_address(0);
	regs = (struct unwind_regs){.ip = ip, .sp = sp, .bp = bp};
	copied = 0;
	if (nw_stack_range(&lo, &hi) == 0 && sp >= lo && sp < hi) {
		copied = hi - sp < NW_COPY ? hi - sp : NW_COPY;
		nw_copy(sp, copied);
	}
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void nw_b(void)
{
	nw_c();
	ra_b = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void nw_a(void)
{
	nw_b();
	ra_a = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static void test_self(struct cfi_proc *p)
{
	nw_a();
	struct nativewalk w;
	nativewalk_init(&w, p);
	struct unwind_stack st = {.sp = regs.sp, .data = copy, .size = copied};
	uint64_t out[64];
	struct unwind_result res;
	size_t n = nativewalk_run(&w, &regs, &st, out, 64, &res);
	ok(copied > 0, "own stack copied (%zu bytes)", copied);
	ok(n >= 4 && out[0] == regs.ip, "the pc first (%zu words)", n);
	ok(n >= 4 && out[1] == (uintptr_t)ra_c && out[2] == (uintptr_t)ra_b &&
	       out[3] == (uintptr_t)ra_a,
	   "nw_c -> nw_b -> nw_a -> main: the return addresses the compiler saw");
	is_int(res.end, UNWIND_END_ROOT, "the walk reached the thread's base (%s)",
	       unwind_end_name(res.end));
	ok(res.native_cfi >= 4, "stepped by CFI (%zu frames, %zu by frame pointer)", res.native_cfi,
	   res.native_fp);
}

/* Code in anonymous executable memory (a JIT's) with a frame-pointer
 * frame: stepped by frame pointer. */
static void test_anon(struct cfi *c, void *code)
{
	struct cfi_proc *p = NULL;
	if (cfi_proc_open(c, getpid(), &p, NULL) < 0) {
		tap_ok(0, "reopen self with the anonymous code mapped");
		return;
	}
	static uint64_t stk[16];
	uint64_t ra = (uint64_t)(uintptr_t)&test_self + 8;
	uint64_t base = (uint64_t)(uintptr_t)stk;
	stk[2] = 0;  /* saved rbp: 0 = the base */
	stk[3] = ra; /* return address into our text */
	struct unwind_regs r = {.ip = (uint64_t)(uintptr_t)code + 16, .sp = base, .bp = base + 16};
	struct unwind_stack st = {.sp = base, .data = (const uint8_t *)stk, .size = sizeof(stk)};
	struct nativewalk w;
	uint64_t out[8];
	struct unwind_result res;
	nativewalk_init(&w, p);
	size_t n = nativewalk_run(&w, &r, &st, out, 8, &res);
	ok(n >= 2 && out[1] == ra && res.native_fp >= 1,
	   "JIT code (anonymous, executable) stepped by frame pointer");
	cfi_proc_free(p);
}

/* Random words, words pointing into the stack itself and at our code, and
 * random registers: every walk bounded, no crash. */
static void test_hostile(struct cfi_proc *p)
{
	static uint64_t stk[4096];
	uint64_t base = (uint64_t)(uintptr_t)stk, text = (uint64_t)(uintptr_t)&test_self;
	struct nativewalk w;
	uint64_t out[UNWIND_MAX_FRAMES + 8];
	size_t worst = 0, rooted = 0;
	nativewalk_init(&w, p);
	srandom(17);
	for (int round = 0; round < 2000; round++) {
		for (size_t i = 0; i < 4096; i++) {
			uint64_t r = (uint64_t)random();
			stk[i] = r % 3 == 0   ? base + (r % 4096) * 8
				 : r % 3 == 1 ? text + (r % 8192)
					      : r << 17 ^ (uint64_t)random();
		}
		struct unwind_regs r = {.ip = text + (uint64_t)random() % 65536,
					.sp = base + (uint64_t)(random() % 64) * 8,
					.bp = base + (uint64_t)(random() % 4096) * 8};
		struct unwind_stack st = {.sp = r.sp,
					  .data = (const uint8_t *)stk + (r.sp - base),
					  .size = sizeof(stk) - (r.sp - base)};
		struct unwind_result res;
		size_t n = nativewalk_run(&w, &r, &st, out, sizeof(out) / sizeof(out[0]), &res);
		if (n > worst)
			worst = n;
		rooted += res.end == UNWIND_END_ROOT;
	}
	ok(worst <= UNWIND_MAX_FRAMES,
	   "garbage stacks: at most %d frames (worst %zu, %zu ended "
	   "at a \"base\")",
	   UNWIND_MAX_FRAMES, worst, rooted);
	/* a cycle: every frame pointer points at itself, every return address
	 * at the same pc: sp does not grow, the walk stops */
	for (size_t i = 0; i < 4096; i += 2) {
		stk[i] = base + i * 8;
		stk[i + 1] = text + 1;
	}
	uint64_t anon_like = 0x10; /* no mapping: the walk stops at once */
	struct unwind_regs r = {.ip = text + 1, .sp = base, .bp = base};
	struct unwind_stack st = {.sp = base, .data = (const uint8_t *)stk, .size = sizeof(stk)};
	struct unwind_result res;
	size_t n = nativewalk_run(&w, &r, &st, out, sizeof(out) / sizeof(out[0]), &res);
	ok(n <= UNWIND_MAX_FRAMES && res.end != UNWIND_END_ROOT,
	   "a cyclic stack ends (%zu words, %s)", n, unwind_end_name(res.end));
	r = (struct unwind_regs){.ip = anon_like, .sp = base, .bp = base};
	n = nativewalk_run(&w, &r, &st, out, 8, &res);
	ok(n == 1 && res.end == UNWIND_END_UNKNOWN, "a pc in no mapping: the pc alone");
}

int main(void)
{
	tap_plan(9);
	struct cfi *c = NULL;
	struct cfi_proc *p = NULL;
	void *code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cfi_new(NULL, &c) < 0 || cfi_proc_open(c, getpid(), &p, NULL) < 0) {
		tap_ok(0, "open self");
		cfi_free(c);
		return tap_done();
	}
	test_self(p);
	if (code != MAP_FAILED)
		test_anon(c, code);
	test_hostile(p);
	cfi_proc_free(p);
	cfi_free(c);
	return tap_done();
}

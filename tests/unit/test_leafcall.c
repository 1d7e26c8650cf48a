/* test_leafcall.c - the caller a frame-pointer walk skips in a prologue or
 * epilogue (sidecar/profile/leafcall.h). The code bytes are those of a
 * JDK 17 JVM running H2 with -XX:+PreserveFramePointer: C1's
 * ValueDouble.getValueType (at 0x7fc368ef0920) and C2's Cursor.hasNext (at
 * 0x7fc368f9df80, its exit at 0x7fc368f9e27d), where perf's callchains
 * showed gatherGroup -> hasNext without TableFilter.next in between. */
#include <linux/perf_event.h>
#include <string.h>

#include "leafcall.h"
#include "tap.h"

/* ValueDouble.getValueType, C1 (level 1), whole: inline-cache check,
 * nops, stack bang, push/mov rbp, sub rsp, body, add rsp, pop rbp, poll,
 * ret, the poll's slow path. */
static const uint8_t get_value_type[] = {
    0x44, 0x8b, 0x56, 0x08,					/* 920 mov 0x8(%rsi),%r10d */
    0x49, 0xbb, 0x00, 0x00, 0x00, 0xfb, 0xc2, 0x7f, 0x00, 0x00, /* 924 movabs */
    0x4d, 0x03, 0xd3,						/* 92e add %r11,%r10 */
    0x4c, 0x3b, 0xd0,						/* 931 cmp %rax,%r10 */
    0x0f, 0x85, 0x46, 0x88, 0xa9, 0xff,				/* 934 jne ic miss */
    0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00,				/* 93a nopw */
    0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff,			/* 940 stack bang */
    0x55,							/* 947 push %rbp */
    0x48, 0x8b, 0xec,						/* 948 mov %rsp,%rbp */
    0x48, 0x83, 0xec, 0x30,					/* 94b sub $0x30,%rsp */
    0xb8, 0x0f, 0x00, 0x00, 0x00,				/* 94f mov $0xf,%eax */
    0x48, 0x83, 0xc4, 0x30,					/* 954 add $0x30,%rsp */
    0x5d,							/* 958 pop %rbp */
    0x49, 0x3b, 0xa7, 0x40, 0x03, 0x00, 0x00,			/* 959 cmp 0x340(%r15),%rsp */
    0x0f, 0x87, 0x01, 0x00, 0x00, 0x00,				/* 960 ja slow path */
    0xc3,							/* 966 ret */
    0x49, 0xba, 0x59, 0x09, 0xef, 0x68, 0xc3, 0x7f, 0x00, 0x00, /* 967 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
#define GVT 0x7fc368ef0920ull

/* Cursor.hasNext, C2: its entry (same shape, other cmp form, other nops)
 * and its body right after the frame is built. */
static const uint8_t has_next_entry[] = {
    0x44, 0x8b, 0x56, 0x08, 0x49, 0xbb, 0x00, 0x00, 0x00, 0xfb, 0xc2, 0x7f, 0x00, 0x00, 0x4d,
    0x03, 0xd3, 0x49, 0x3b, 0xc2,					    /* cmp %r10,%rax */
    0x0f, 0x85, 0xe6, 0xb1, 0x9e, 0xff, 0x66, 0x90, 0x0f, 0x1f, 0x40, 0x00, /* nops */
    0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff, 0x55, 0x48, 0x8b, 0xec, 0x48, 0x83, 0xec, 0x40,
    0x4c, 0x8b, 0xf6, 0x44, 0x8b, 0x5e, 0x14, 0x44, 0x89, 0x5c, 0x24, 0x10, 0x45, 0x85, 0xdb,
    0x0f, 0x84, 0,    0,    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0,
    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0,
    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0,    0,
};
#define HNE 0x7fc368f9df80ull

static const uint8_t has_next_exit[] = {
    0x8b, 0xc3,				      /* 27b mov %ebx,%eax */
    0x48, 0x83, 0xc4, 0x40,		      /* 27d add $0x40,%rsp */
    0x5d,				      /* 281 pop %rbp */
    0x49, 0x3b, 0xa7, 0x40, 0x03, 0x00, 0x00, /* 282 poll */
    0x0f, 0x87, 0xf2, 0x0e, 0x00, 0x00,	      /* 289 ja */
    0xc3,				      /* 28f ret */
    0x45, 0x33, 0xed, 0x44, 0x8b, 0x14, 0x24, 0x41, 0x81, 0xfa, 0x80, 0x89, 0x02, 0x01, 0, 0, 0, 0,
    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0, 0, 0, 0,
    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0, 0, 0, 0,
    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	0, 0,
};
#define HNX 0x7fc368f9e27bull

/* The caller: TableFilter.next's call of hasNext ends at TFN_RA; its own
 * caller (what the frame-pointer walk finds) is gatherGroup at GG_RA. */
#define TFN_RA 0x7fc369001234ull
#define GG_RA  0x7fc368f46500ull
static const uint8_t call_site[LEAFCALL_CALL_BYTES] = {0x90, 0x90, 0x90, 0xe8, 1, 2, 3, 4};
static const uint8_t no_call[LEAFCALL_CALL_BYTES] = {0x48, 0x8b, 0x45, 0x10,
						     0x48, 0x89, 0xc7, 0x90};

static int at(const uint8_t *code, size_t len, uint64_t base, uint64_t pc)
{
	return leafcall_locate(code + (pc - base), len - (size_t)(pc - base));
}

/* The fake process: code at GVT and HNE/HNX, a call before TFN_RA, none
 * before GG_RA + 0x100. */
static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	static const struct {
		uint64_t base;
		const uint8_t *bytes;
		size_t len;
	} mem[] = {
	    {GVT, get_value_type, sizeof(get_value_type)},
	    {HNE, has_next_entry, sizeof(has_next_entry)},
	    {HNX, has_next_exit, sizeof(has_next_exit)},
	    {TFN_RA - LEAFCALL_CALL_BYTES, call_site, sizeof(call_site)},
	    {GG_RA + 0x100 - LEAFCALL_CALL_BYTES, no_call, sizeof(no_call)},
	};
	for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++)
		if (addr >= mem[i].base && addr + len <= mem[i].base + mem[i].len) {
			memcpy(buf, mem[i].bytes + (addr - mem[i].base), len);
			return 0;
		}
	return -14;
}

static size_t repair(uint64_t leaf, const uint64_t *words, size_t nwords, uint64_t *out)
{
	uint64_t ips[] = {(uint64_t)PERF_CONTEXT_USER, leaf, GG_RA, 0x7fc369095d80ull};
	return leafcall_repair(ips, 4, (const uint8_t *)words, nwords * 8, fake_read, NULL, out, 8);
}

int main(void)
{
	tap_plan(58);
	const size_t gl = sizeof(get_value_type), hl = sizeof(has_next_entry);
	/* where the return address is, pc by pc (perf's samples fell on
	 * 920, 924, 931, 940, 948, 959, 960 and dfa0, dfa7, e282, e289) */
	ok(at(get_value_type, gl, GVT, GVT) == 0, "inline-cache check: return address at sp");
	ok(at(get_value_type, gl, GVT, GVT + 0x4) == 0, "movabs: at sp");
	ok(at(get_value_type, gl, GVT, GVT + 0x11) == 0, "cmp: at sp");
	ok(at(get_value_type, gl, GVT, GVT + 0x20) == 0, "stack bang: at sp");
	ok(at(get_value_type, gl, GVT, GVT + 0x27) == 0, "push %%rbp: at sp");
	ok(at(get_value_type, gl, GVT, GVT + 0x28) == 8, "mov %%rsp,%%rbp: at sp + 8");
	ok(at(get_value_type, gl, GVT, GVT + 0x2b) == -1, "sub %%rsp: frame built");
	ok(at(get_value_type, gl, GVT, GVT + 0x2f) == -1, "body: frame built");
	ok(at(get_value_type, gl, GVT, GVT + 0x34) == -1, "add %%rsp: rbp still ours");
	ok(at(get_value_type, gl, GVT, GVT + 0x38) == -1, "pop %%rbp: rbp still ours");
	ok(at(get_value_type, gl, GVT, GVT + 0x39) == 0, "poll after pop: at sp");
	ok(at(get_value_type, gl, GVT, GVT + 0x40) == 0, "ja after pop: at sp");
	ok(at(get_value_type, gl, GVT, GVT + 0x46) == 0, "ret: at sp");
	ok(at(has_next_entry, hl, HNE, HNE + 0x20) == 0, "C2 entry, stack bang: at sp");
	ok(at(has_next_entry, hl, HNE, HNE + 0x27) == 0, "C2 entry, push: at sp");
	ok(at(has_next_entry, hl, HNE, HNE + 0x2b) == -1, "C2 body: frame built");
	ok(at(has_next_exit, sizeof(has_next_exit), HNX, HNX + 0x7) == 0, "C2 exit poll: at sp");
	ok(at(has_next_exit, sizeof(has_next_exit), HNX, HNX) == -1, "C2 before exit: built");

	/* leafcall_exit, for the HotSpot unwinder: where the frame stands in
	 * the exit, which frame sizes no longer describe */
#define EXIT_AT(code, base, pc)                                                                    \
	leafcall_exit((code) + ((pc) - (base)), sizeof(code) - ((pc) - (base)))
	ok(EXIT_AT(get_value_type, GVT, GVT + 0x2f) == -1, "exit: C1 body is not the exit");
	ok(EXIT_AT(get_value_type, GVT, GVT + 0x34) == -1, "exit: add %%rsp, frame still whole");
	ok(EXIT_AT(get_value_type, GVT, GVT + 0x38) == 8, "exit: C1 pop %%rbp, at sp + 8");
	ok(EXIT_AT(get_value_type, GVT, GVT + 0x39) == 0, "exit: C1 poll after pop, at sp");
	ok(EXIT_AT(get_value_type, GVT, GVT + 0x40) == 0, "exit: C1 ja, at sp");
	ok(EXIT_AT(get_value_type, GVT, GVT + 0x46) == 0, "exit: C1 ret, at sp");
	ok(EXIT_AT(has_next_exit, HNX, HNX) == -1 && EXIT_AT(has_next_exit, HNX, HNX + 0x2) == -1,
	   "exit: C2 mov, add %%rsp: whole");
	ok(EXIT_AT(has_next_exit, HNX, HNX + 0x6) == 8, "exit: C2 pop %%rbp, at sp + 8");
	ok(EXIT_AT(has_next_exit, HNX, HNX + 0x7) == 0 &&
	       EXIT_AT(has_next_exit, HNX, HNX + 0xe) == 0 &&
	       EXIT_AT(has_next_exit, HNX, HNX + 0x14) == 0,
	   "exit: C2 poll, ja, ret: at sp");
	ok(EXIT_AT(get_value_type, GVT, GVT) == -1, "exit: the entry is not the exit");
	/* the poll's slow path: lea poll_pc(%rip),%r10; mov %r10,0x3a0(%r15); jmp */
	static const uint8_t poll_stub[] = {0x4c, 0x8d, 0x15, 0xd9, 0xff, 0xff, 0xff,
					    0x4d, 0x89, 0x97, 0xa0, 0x03, 0x00, 0x00,
					    0xe9, 0x10, 0x20, 0x30, 0xf0, 0xf4, 0xf4};
	ok(leafcall_exit(poll_stub, sizeof(poll_stub)) == 0 &&
	       leafcall_exit(poll_stub + 7, sizeof(poll_stub) - 7) == 0,
	   "exit: the poll's slow-path stub, at sp");
	ok(leafcall_exit(poll_stub, 10) == -1 && leafcall_exit(poll_stub + 14, 7) == -1,
	   "exit: a cut stub, or its jmp alone: whole");
	/* JDK 25's C2 leaf: sub $0x18,%rsp; mov %rbp,0x10(%rsp); the entry
	 * barrier (cmpl $0x1,0x20(%r15); jne) before frame_complete; body;
	 * add $0x10,%rsp; pop %rbp; poll; ja; ret; the poll stub (movabs) */
	static const uint8_t leaf25[] = {
	    0x48, 0x81, 0xec, 0x18, 0x00, 0x00, 0x00, 0x48, 0x89, 0x6c, 0x24, 0x10, 0x41, 0x81,
	    0x7f, 0x20, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x85, 0x32, 0x00, 0x00, 0x00, 0x8b, 0xc6,
	    0xc1, 0xe0, 0x05, 0x2b, 0xc6, 0xc1, 0xee, 0x07, 0x33, 0xc6, 0x48, 0x83, 0xc4, 0x10,
	    0x5d, 0x49, 0x3b, 0x67, 0x28, 0x0f, 0x87, 0x01, 0x00, 0x00, 0x00, 0xc3, 0x49, 0xba,
	    0xab, 0x7c, 0xec, 0x2f, 0x0c, 0x7f, 0x00, 0x00, 0x4d, 0x89, 0x97, 0x38, 0x05, 0x00,
	    0x00, 0xe9, 0x94, 0x1e, 0xac, 0xff, 0xe8, 0xef, 0x88, 0xaa, 0xff};
#define L25(o) (leaf25 + (o)), (sizeof(leaf25) - (o))
	ok(leafcall_locate(L25(0)) == 0 && leafcall_locate(L25(0x7)) == 0x18,
	   "JDK 25 C2 entry: sub, then save rbp: at sp, sp + 0x18");
	ok(leafcall_locate(L25(0xc)) == -1 && leafcall_entry_barrier(L25(0xc)) &&
	       leafcall_entry_barrier(L25(0x14)),
	   "JDK 25 entry barrier (cmpl, jne): the frame is built");
	ok(!leafcall_entry_barrier(L25(0x1a)) && !leafcall_entry_barrier(L25(0)),
	   "the body and the entry are no barrier");
	ok(leafcall_exit(L25(0x26)) == -1 && leafcall_exit(L25(0x2a)) == 8 &&
	       leafcall_exit(L25(0x2b)) == 0 && leafcall_exit(L25(0x2f)) == 0 &&
	       leafcall_exit(L25(0x35)) == 0,
	   "JDK 25 C2 exit: add, pop, poll, ja, ret");
	ok(leafcall_exit(L25(0x36)) == 0 && leafcall_exit(L25(0x40)) == 0,
	   "JDK 25 poll stub (movabs, mov): at sp");
	static const uint8_t pop_mov[] = {0x5d, 0x8b, 0xc3, 0xc3};
	ok(leafcall_exit(pop_mov, sizeof(pop_mov)) == -1 && leafcall_exit(NULL, 4) == -1,
	   "exit: pop %%rbp not followed by the exit, no bytes: whole");

	/* C2 without stack bang: sub; mov %rbp,N-8(%rsp); mov %rsp,%rbp; add */
	static const uint8_t nobang[] = {0x48, 0x83, 0xec, 0x18, 0x48, 0x89, 0x6c,
					 0x24, 0x10, 0x48, 0x8b, 0xec, 0x48, 0x83,
					 0xc5, 0x10, 0xb8, 0x0f, 0x00, 0x00, 0x00};
	ok(leafcall_locate(nobang, sizeof(nobang)) == 0, "no bang, sub: at sp");
	ok(leafcall_locate(nobang + 4, sizeof(nobang) - 4) == 0x18,
	   "no bang, save rbp: at sp + 0x18");
	ok(leafcall_locate(nobang + 9, sizeof(nobang) - 9) == 0x18,
	   "no bang, mov rbp: at sp + 0x18");
	ok(leafcall_locate(nobang + 12, sizeof(nobang) - 12) == 0x18,
	   "no bang, add rbp: at sp + 0x18");
	/* the same after an inline-cache check (JDK 25's: mov, cmp r10d,
	 * 0x8(%rax), jne) */
	static const uint8_t ic_nobang[] = {0x44, 0x8b, 0x56, 0x08, 0x44, 0x3b, 0x50, 0x08,
					    0x0f, 0x85, 0x00, 0x00, 0x00, 0x00, 0x48, 0x83,
					    0xec, 0x18, 0x48, 0x89, 0x6c, 0x24, 0x10, 0x90};
	ok(leafcall_locate(ic_nobang, sizeof(ic_nobang)) == 0, "JDK 25 check, then no bang: at sp");
	/* JDK 25's exit: the polling word at 0x28(%r15), a disp8 */
	static const uint8_t exit25[] = {0x49, 0x3b, 0x67, 0x28, 0x0f, 0x87,
					 0x10, 0x00, 0x00, 0x00, 0xc3};
	ok(leafcall_locate(exit25, sizeof(exit25)) == 0, "JDK 25 exit poll: at sp");
	static const uint8_t plain_sub[] = {0x48, 0x83, 0xec, 0x18, 0x8b, 0xc3, 0xc3};
	ok(leafcall_locate(plain_sub, sizeof(plain_sub)) == -1,
	   "a sub not followed by the save: built");
	ok(leafcall_locate(NULL, 0) == -1 && leafcall_locate(get_value_type, 0) == -1,
	   "no bytes: built");
	ok(leafcall_locate(get_value_type + 0x21, 3) == -1, "stack bang cut short: built");

	ok(leafcall_is_return_site(call_site, sizeof(call_site)), "call rel32 is a return site");
	static const uint8_t reg_call[] = {0, 0, 0, 0, 0, 0x41, 0xff, 0xd2};
	static const uint8_t mem_call[] = {0, 0, 0, 0, 0, 0xff, 0x53, 0x10};
	ok(leafcall_is_return_site(reg_call, 8) && leafcall_is_return_site(mem_call, 8),
	   "indirect calls are return sites");
	ok(!leafcall_is_return_site(no_call, sizeof(no_call)), "a mov is not a return site");

	/* The whole repair, with the stack words of the samples */
	uint64_t out[8];
	uint64_t at_sp[] = {TFN_RA, 0x7ffd0000};
	size_t n = repair(GVT + 0x27, at_sp, 2, out);
	ok(n == 5 && out[1] == GVT + 0x27 && out[2] == TFN_RA && out[3] == GG_RA,
	   "push: TableFilter.next put back between the leaf and gatherGroup");
	uint64_t at_sp8[] = {0x7ffd1000, TFN_RA};
	n = repair(GVT + 0x28, at_sp8, 2, out);
	ok(n == 5 && out[2] == TFN_RA, "after push: from sp + 8");
	n = repair(HNX + 0xe, at_sp, 2, out);
	ok(n == 5 && out[2] == TFN_RA && out[4] == 0x7fc369095d80ull, "C2 exit: put back");
	ok(repair(GVT + 0x2f, at_sp, 2, out) == 0, "frame built: unchanged");
	uint64_t already[] = {GG_RA};
	ok(repair(GVT, already, 1, out) == 0, "the walk has that caller already: unchanged");
	uint64_t junk[] = {GG_RA + 0x100};
	ok(repair(GVT, junk, 1, out) == 0, "a word after no call: unchanged");
	ok(repair(GVT + 0x28, at_sp, 1, out) == 0, "word beyond the copy: unchanged");
	uint64_t unmapped[] = {0x1000};
	ok(repair(GVT, unmapped, 1, out) == 0, "a word with no code before it: unchanged");
	uint64_t kips[] = {(uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000000ull};
	ok(leafcall_repair(kips, 2, (const uint8_t *)at_sp, 16, fake_read, NULL, out, 8) == 0,
	   "no user part: unchanged");
	uint64_t full[] = {(uint64_t)PERF_CONTEXT_USER, GVT, GG_RA};
	ok(leafcall_repair(full, 3, (const uint8_t *)at_sp, 16, fake_read, NULL, out, 3) == 0,
	   "no room for one more: unchanged");
	return tap_done();
}

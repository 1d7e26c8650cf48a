/* leafcall.c - see leafcall.h. Instruction forms are those HotSpot's
 * x86-64 C1 and C2 emit at a compiled method's entry (inline-cache check,
 * alignment nops, stack bang, frame setup) and exit (frame teardown,
 * safepoint poll, ret), as seen in a JDK 17 code cache and described in
 * docs/testing.md. */
#include "leafcall.h"

#include <linux/perf_event.h>
#include <string.h>

/* Length of a multi-byte nop at c (0x66 prefixes, 0x90 or 0f 1f /0), 0 if
 * it is not one. */
static size_t leafcall_nop(const uint8_t *c, size_t n)
{
	size_t i = 0;
	while (i < n && i < 4 && c[i] == 0x66)
		i++;
	if (i < n && c[i] == 0x90)
		return i + 1;
	if (i + 2 >= n || c[i] != 0x0f || c[i + 1] != 0x1f)
		return 0;
	uint8_t modrm = c[i + 2];
	size_t len = i + 3;
	unsigned mod = modrm >> 6, rm = modrm & 7;
	if ((modrm & 0x38) != 0 || mod == 3)
		return 0;
	if (rm == 4)
		len++; /* SIB byte */
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	else if (rm == 5)
		return 0; /* rip-relative: not a padding nop */
	return len <= n ? len : 0;
}

/* Length of one instruction of a compiled method's entry before the frame
 * is set up (the inline-cache check and the stack bang), 0 if it is not
 * one of those. None of them moves rsp. */
static size_t leafcall_entry_insn(const uint8_t *c, size_t n)
{
	size_t nop = leafcall_nop(c, n);
	if (nop)
		return nop;
	if (n < 3)
		return 0;
	int rex = c[0] >= 0x40 && c[0] <= 0x4f;
	/* mov/cmp reg, [reg + disp8]: the receiver's klass word, compared */
	if (rex && n >= 4 && (c[1] == 0x8b || c[1] == 0x3b) && (c[2] >> 6) == 1 && (c[2] & 7) != 4)
		return 4;
	/* cmp/add reg, reg: the klass against the expected one */
	if (rex && (c[1] == 0x3b || c[1] == 0x39 || c[1] == 0x03) && c[2] >= 0xc0)
		return 3;
	/* movabs r10/r11, imm64: the compressed-klass base */
	if ((c[0] == 0x49) && (c[1] == 0xba || c[1] == 0xbb))
		return n >= 10 ? 10 : 0;
	/* shl r10, imm8: the compressed-klass shift */
	if (c[0] == 0x49 && c[1] == 0xc1 && c[2] == 0xe2)
		return n >= 4 ? 4 : 0;
	/* jne rel32: to the inline-cache miss stub */
	if (c[0] == 0x0f && c[1] == 0x85)
		return n >= 6 ? 6 : 0;
	/* mov %eax, -N(%rsp): the stack bang */
	if (c[0] == 0x89 && c[1] == 0x84 && c[2] == 0x24)
		return n >= 7 ? 7 : 0;
	return 0;
}

/* Length of one instruction of a compiled method's exit after `pop %rbp`
 * and before `ret` (the return safepoint poll, vzeroupper), 0 if not one. */
static size_t leafcall_exit_insn(const uint8_t *c, size_t n)
{
	if (n < 3)
		return 0;
	/* cmp 0xNN(%r15), %rsp: the thread's polling word (JDK 17+; disp8
	 * when it is near the thread's start, as in JDK 25) */
	if (c[0] == 0x49 && c[1] == 0x3b && c[2] == 0xa7)
		return n >= 7 ? 7 : 0;
	if (c[0] == 0x49 && c[1] == 0x3b && c[2] == 0x67)
		return n >= 4 ? 4 : 0;
	/* mov 0xNN(%r15), %r10: the thread's polling page (JDK 11) */
	if (c[0] == 0x4d && c[1] == 0x8b && c[2] == 0x97)
		return n >= 7 ? 7 : 0;
	/* test %eax, (%r10): the poll itself */
	if (c[0] == 0x41 && c[1] == 0x85 && c[2] == 0x02)
		return 3;
	/* ja rel32: to the poll's slow path */
	if (c[0] == 0x0f && c[1] == 0x87)
		return n >= 6 ? 6 : 0;
	/* vzeroupper */
	if (c[0] == 0xc5 && c[1] == 0xf8 && c[2] == 0x77)
		return 3;
	return 0;
}

/* The frame-size immediate of `add %rbp, imm` / `sub %rsp, imm` (op is
 * 0xc5 or 0xec, the ModRM of the register), -1 if c is not that. *len gets
 * the instruction's length. */
static long leafcall_imm_op(const uint8_t *c, size_t n, uint8_t modrm, size_t *len)
{
	if (n >= 4 && c[0] == 0x48 && c[1] == 0x83 && c[2] == modrm) {
		*len = 4;
		return (long)(int8_t)c[3];
	}
	if (n >= 7 && c[0] == 0x48 && c[1] == 0x81 && c[2] == modrm) {
		*len = 7;
		return (long)(int32_t)((uint32_t)c[3] | (uint32_t)c[4] << 8 | (uint32_t)c[5] << 16 |
				       (uint32_t)c[6] << 24);
	}
	return -1;
}

/* The displacement of `mov %rbp, disp(%rsp)`, -1 if c is not that. */
static long leafcall_save_rbp(const uint8_t *c, size_t n)
{
	if (n >= 5 && c[0] == 0x48 && c[1] == 0x89 && c[2] == 0x6c && c[3] == 0x24)
		return (long)(int8_t)c[4];
	if (n >= 8 && c[0] == 0x48 && c[1] == 0x89 && c[2] == 0xac && c[3] == 0x24)
		return (long)(int32_t)((uint32_t)c[4] | (uint32_t)c[5] << 8 | (uint32_t)c[6] << 16 |
				       (uint32_t)c[7] << 24);
	return -1;
}

static int leafcall_is_mov_rbp_rsp(const uint8_t *c, size_t n)
{
	return n >= 3 && c[0] == 0x48 &&
	       ((c[1] == 0x8b && c[2] == 0xec) || (c[1] == 0x89 && c[2] == 0xe5));
}

/* The frame is half built, at pc: rbp pushed but not yet the frame
 * pointer, or C2's frame of a method without stack bang (sub rsp, N; mov
 * %rbp, N-8(%rsp); mov %rsp, %rbp; add %rbp, N-8). */
static int leafcall_half_built(const uint8_t *c, size_t n)
{
	size_t len = 0;
	long d;
	if (leafcall_is_mov_rbp_rsp(c, n)) {
		d = leafcall_imm_op(c + 3, n - 3, 0xc5, &len);
		if (d < 0)
			return 8; /* after push %rbp */
		return d % 8 == 0 && d < 4096 ? (int)d + 8 : -1;
	}
	d = leafcall_imm_op(c, n, 0xc5, &len);
	if (d >= 0 && d % 8 == 0 && d < 4096)
		return (int)d + 8; /* rbp == rsp, about to point at the saved rbp */
	d = leafcall_save_rbp(c, n);
	if (d >= 0 && d % 8 == 0 && d < 4096)
		return (int)d + 8; /* rsp lowered by d + 8, rbp not saved yet */
	d = leafcall_imm_op(c, n, 0xec, &len);
	if (d > 0 && leafcall_save_rbp(c + len, n - len) == d - 8)
		return 0; /* about to lower rsp: nothing pushed yet */
	return -1;
}

int leafcall_locate(const uint8_t *code, size_t n)
{
	size_t off = 0, len;
	if (!code)
		return -1;
	if (n > LEAFCALL_CODE_BYTES)
		n = LEAFCALL_CODE_BYTES;
	/* The exit: only poll instructions up to the ret. */
	for (int i = 0; i < 8 && off < n; i++) {
		if (code[off] == 0xc3)
			return 0;
		if (!(len = leafcall_exit_insn(code + off, n - off)))
			break;
		off += len;
	}
	/* The entry: the inline-cache check and the stack bang, then push. */
	off = 0;
	for (int i = 0; i < 16 && off < n; i++) {
		if (code[off] == 0x55)
			return 0; /* push %rbp is next: the return address is at sp */
		if (!(len = leafcall_entry_insn(code + off, n - off)))
			break;
		off += len;
	}
	if (off > 0) /* C2's frame without stack bang after the check, or
		      * entry instructions that lead nowhere we know */
		return leafcall_half_built(code + off, n - off) == 0 ? 0 : -1;
	return leafcall_half_built(code, n);
}

/* The return poll's slow path (C1/C2 safepoint poll stub, after the
 * method's code): `lea disp32(%rip),%r10` (or `movabs $pc,%r10`);
 * `mov %r10,disp32(%r15); jmp`,
 * which stores the poll's pc in the thread and jumps to the VM. The frame
 * was popped before the poll. 1 when code is at its lea or its mov. */
static int leafcall_poll_stub(const uint8_t *c, size_t n)
{
	static const uint8_t lea[] = {0x4c, 0x8d, 0x15}, mov[] = {0x4d, 0x89, 0x97};
	if (n >= 7 + 8 && memcmp(c, lea, 3) == 0)
		c += 7, n -= 7;
	else if (n >= 10 + 8 && c[0] == 0x49 && c[1] == 0xba)
		c += 10, n -= 10; /* movabs $poll_pc, %r10 (JDK 25) */
	return n >= 7 + 1 && memcmp(c, mov, 3) == 0 && (c[7] == 0xe9 || c[7] == 0x49);
}

int leafcall_exit(const uint8_t *code, size_t n)
{
	size_t off = 0, len;
	int at_pop = 0;
	if (!code || n == 0)
		return -1;
	if (n > LEAFCALL_CODE_BYTES)
		n = LEAFCALL_CODE_BYTES;
	if (leafcall_poll_stub(code, n))
		return 0;
	if (code[0] == 0x5d) { /* pop %rbp, then only the exit's instructions */
		at_pop = 1;
		off = 1;
	}
	for (int i = 0; i < 8 && off < n; i++) {
		if (code[off] == 0xc3)
			return at_pop ? 8 : 0;
		if (!(len = leafcall_exit_insn(code + off, n - off)))
			break;
		off += len;
	}
	return -1;
}

int leafcall_entry_barrier(const uint8_t *c, size_t n)
{
	size_t len = 0;
	if (!c)
		return 0;
	if (n >= 8 && c[0] == 0x41 && c[1] == 0x81 && c[2] == 0x7f)
		len = 8; /* cmpl $imm32, disp8(%r15) */
	else if (n >= 11 && c[0] == 0x41 && c[1] == 0x81 && c[2] == 0xbf)
		len = 11; /* cmpl $imm32, disp32(%r15) */
	if (len)
		c += len, n -= len;
	/* then (or at) the branch to the barrier's slow path */
	return (n >= 6 && c[0] == 0x0f && (c[1] == 0x85 || c[1] == 0x84)) ||
	       (n >= 2 && (c[0] == 0x75 || c[0] == 0x74));
}

int leafcall_is_return_site(const uint8_t *b, size_t n)
{
	if (!b)
		return 0;
	/* call rel32 */
	if (n >= 5 && b[n - 5] == 0xe8)
		return 1;
	/* call *%reg (ff d0+r, with or without REX) */
	if (n >= 2 && b[n - 2] == 0xff && (b[n - 1] & 0xf8) == 0xd0)
		return 1;
	/* call *(%reg) */
	if (n >= 2 && b[n - 2] == 0xff && (b[n - 1] & 0xf8) == 0x10 && (b[n - 1] & 7) != 4 &&
	    (b[n - 1] & 7) != 5)
		return 1;
	/* call *disp8(%reg) */
	if (n >= 3 && b[n - 3] == 0xff && (b[n - 2] & 0xf8) == 0x50 && (b[n - 2] & 7) != 4)
		return 1;
	/* call *disp32(%rip) or *disp32(%reg) */
	if (n >= 6 && b[n - 6] == 0xff &&
	    (b[n - 5] == 0x15 || ((b[n - 5] & 0xf8) == 0x90 && (b[n - 5] & 7) != 4)))
		return 1;
	return 0;
}

size_t leafcall_repair(const uint64_t *ips, size_t nr, const uint8_t *stack, size_t stack_size,
		       leafcall_read_fn rd, void *ctx, uint64_t *out, size_t max)
{
	size_t u = 0;
	while (u < nr && ips[u] != (uint64_t)PERF_CONTEXT_USER)
		u++;
	if (u + 1 >= nr || nr + 1 > max || !stack || !rd)
		return 0;
	uint64_t leaf = ips[u + 1];
	uint8_t code[LEAFCALL_CODE_BYTES], before[LEAFCALL_CALL_BYTES];
	if (leaf >= (uint64_t)PERF_CONTEXT_MAX || rd(ctx, leaf, code, sizeof(code)) < 0)
		return 0;
	int off = leafcall_locate(code, sizeof(code));
	if (off < 0 || (size_t)off + 8 > stack_size)
		return 0;
	uint64_t ra;
	memcpy(&ra, stack + off, sizeof(ra));
	if (ra < LEAFCALL_CALL_BYTES || ra >= (uint64_t)PERF_CONTEXT_MAX ||
	    (u + 2 < nr && ips[u + 2] == ra))
		return 0; /* not code, or the walk has it already */
	if (rd(ctx, ra - LEAFCALL_CALL_BYTES, before, sizeof(before)) < 0 ||
	    !leafcall_is_return_site(before, sizeof(before)))
		return 0;
	memcpy(out, ips, (u + 2) * sizeof(*ips));
	out[u + 2] = ra;
	memcpy(out + u + 3, ips + u + 2, (nr - u - 2) * sizeof(*ips));
	return nr + 1;
}

/* leafcall.h - the caller a frame-pointer walk skips when the sampled pc
 * is in a function's prologue or epilogue (x86-64).
 *
 * The kernel's frame-pointer callchain reads the caller of the leaf from
 * [rbp + 8]. Between a function's entry and `mov %rsp,%rbp`, and again
 * after `pop %rbp` until `ret`, rbp still (or again) holds the CALLER's
 * frame, so [rbp + 8] is the caller's caller: the real caller is missing
 * and its callee is shown called by its grand-caller. HotSpot's compiled
 * methods are entered and left this way (inline-cache check, stack bang,
 * push rbp; pop rbp, safepoint poll, ret), and small hot methods spend a
 * large share of their samples there: a JVM with -XX:+PreserveFramePointer
 * got edges like `Select.gatherGroup -> Cursor.hasNext` (skipping
 * TableFilter.next) that the JVM itself never reports (docs/testing.md).
 *
 * leafcall_locate decodes, from the instruction bytes at the sampled pc,
 * whether the return address is still on top of the stack and where: a
 * small set of instruction forms only (those of HotSpot's C1/C2 entries and
 * exits, and plain `push %rbp` / `ret`); anything else answers "the frame is
 * built". leafcall_is_return_site says whether the bytes just before an
 * address end with a call instruction, the plausibility check for a word
 * read from the stack. Pure functions over bytes the caller copied: no
 * process memory is read here. The bytes come from a process we do not
 * trust: a lie costs at most one wrong frame, every read is bounded by n.
 */
#ifndef FS_LEAFCALL_H
#define FS_LEAFCALL_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of user stack a sample needs for the repair: the return address
 * of a leaf whose frame is not built lies within the first few words (or
 * N bytes up in C2's frame without stack bang, N small for such methods). */
#define LEAFCALL_STACK_COPY 256

/* Bytes of code leafcall_locate looks at, from the sampled pc on. */
#define LEAFCALL_CODE_BYTES 48
/* Bytes before a return address leafcall_is_return_site looks at. */
#define LEAFCALL_CALL_BYTES 8

/* From code[0..n) (the bytes at the sampled pc): -1 when the frame is
 * built (or the bytes are not recognised), else the offset from sp of the
 * word that holds the return address to the caller. */
int leafcall_locate(const uint8_t *code, size_t n);

/* For the HotSpot unwinder, whose leaf frame is found by its frame size:
 * from code[0..n) (the bytes at a sampled pc in a compiled method), where
 * the exit of the method stands. -1 the frame is whole (or the bytes are not
 * an exit); 8 at `pop %rbp` (sp points at the saved rbp, the return address
 * is at sp + 8); 0 after it, at the return poll or `ret`, or in the poll's
 * slow-path stub before it jumps to the VM (the return address is at sp). In both cases sp no
 * longer lies frame-size bytes below the caller's sp: `add $N, %rsp` already released the frame. */
int leafcall_exit(const uint8_t *code, size_t n);

/* 1 when code[0..n) is the nmethod entry barrier (JDK 21+: `cmpl $imm,
 * disp(%r15)` and its `jne`/`je`), which runs after the frame was built
 * but before frame_complete: the frame size is right there. */
int leafcall_entry_barrier(const uint8_t *code, size_t n);

/* 1 when before[0..n) (the n bytes ending at a return address) ends with a
 * call: `call rel32` or an indirect `call` through a register or memory. */
int leafcall_is_return_site(const uint8_t *before, size_t n);

/* Reads len bytes of the sampled process at addr into buf: 0 or -errno. */
typedef int (*leafcall_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The whole repair of one sample: ips[0..nr) is the kernel's callchain
 * (PERF_CONTEXT_* markers, leaf first), stack[0..stack_size) the bytes
 * copied from the user sp up. When the user leaf's code says the
 * return address is on the stack and that word is a return site other than
 * the next frame, writes the callchain with it inserted after the leaf to
 * out (room for max) and returns its length; else returns 0 (keep ips). */
size_t leafcall_repair(const uint64_t *ips, size_t nr, const uint8_t *stack, size_t stack_size,
		       leafcall_read_fn rd, void *ctx, uint64_t *out, size_t max);

#endif

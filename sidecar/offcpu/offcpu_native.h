/* offcpu_native.h - the user stack of a blocked thread of a process that
 * is not a JVM: .eh_frame CFI (cfi.h, the same tables the HotSpot unwinder
 * uses for native frames), else frame pointers, over the copy taken from
 * the thread's sp (unwind.h's walk without a code cache). A small
 * interface so that a better native unwinder can take its place.
 *
 * Only pc and sp are known (/proc/<tid>/syscall): a frame whose CFA is
 * rbp-based before any callee saved rbp ends the walk. */
#ifndef FS_OFFCPU_NATIVE_H
#define FS_OFFCPU_NATIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cleanup.h"

struct cfi;
struct offcpu_native;

/* pid's walker over the shared CFI cache c; NULL when its maps cannot be
 * read (then offcpu_native_walk gives pc alone). */
struct offcpu_native *offcpu_native_new(struct cfi *c, pid_t pid);
void offcpu_native_free(struct offcpu_native *n);
FS_DEFINE_CLEANUP(struct offcpu_native, offcpu_native_free)
#define cleanup_offcpu_native __attribute__((cleanup(offcpu_native_free_cleanup)))

/* The chain from pc (bp: a guess of rbp, 0 unknown) (leaf first, return addresses after it) into
 * out (at most max words). Returns the number of words (1 at least when pc is a user address). */
size_t offcpu_native_walk(struct offcpu_native *n, uint64_t pc, uint64_t sp, uint64_t bp,
			  const uint8_t *stack, size_t size, uint64_t *out, size_t max);

#endif

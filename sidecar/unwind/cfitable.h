/* cfitable.h - the unwinder's side of the CFI sandbox: validate the flat
 * CFI table the sandboxed ELF child sends for one container file
 * (symbolize/cfiflat.h has the format), look rows up by pc and step a
 * frame by a row's rule.
 *
 * Decoding treats the bytes as hostile (the child may be compromised by the
 * file it parsed), exactly like elfflat: the sizes must add up, every count
 * is capped, loads must not wrap, rows must be sorted, non-overlapping,
 * non-empty and name an existing rule, every rule must be in its one
 * canonical form with offsets within CFIFLAT_MAX_OFF. Nothing else of the
 * child's answer is used. Lookups are a binary search over the rows. */
#ifndef FS_CFITABLE_H
#define FS_CFITABLE_H

#include <stddef.h>
#include <stdint.h>

#include "cfiflat.h"
#include "error.h"
#include "unwind.h"
#include "cleanup.h"

struct cfitable;

/* 0, -EBADMSG (the reason in err) or -ENOMEM. buf is not kept. */
int cfitable_decode(const void *buf, size_t len, struct cfitable **out, struct fs_error *err);
void cfitable_free(struct cfitable *t);
FS_DEFINE_CLEANUP(struct cfitable, cfitable_free)
#define cleanup_cfitable __attribute__((cleanup(cfitable_free_cleanup)))

size_t cfitable_rows(const struct cfitable *t);

/* Of the code bytes where the table's stepping rows say a frame is built
 * (CFA rbp-based, or rsp-based past the return address), the share (per
 * mille) whose CFA is rbp-based: code built with frame pointers has its
 * bodies there (after `mov %rsp,%rbp`), code built without them almost
 * none (functions with a variable frame only). Frameless leaves (CFA =
 * rsp + 8) count for neither: -momit-leaf-frame-pointer builds have them
 * too. 0 for a table without such rows. What cfi_proc_fp_missing decides by. */
unsigned cfitable_fp_permille(const struct cfitable *t);

/* The link-time vaddr of file offset off (the PT_LOAD that holds it). 0 or
 * -1. */
int cfitable_vaddr(const struct cfitable *t, uint64_t off, uint64_t *vaddr);

/* The rule of the row holding vaddr, or NULL. */
const struct cfiflat_rule *cfitable_lookup(const struct cfitable *t, uint64_t vaddr);

/* Step r to its caller by rule u, reading the stack copy: 1 stepped, 2 the
 * outermost frame, -1 the rule cannot be followed (unsupported, a read
 * outside the copy). A saved rbp whose slot lies below r->sp was popped
 * already (an epilogue after `pop %rbp`): r->bp is kept as the caller's. */
int cfitable_step(const struct cfiflat_rule *u, struct unwind_regs *r,
		  const struct unwind_stack *st);

#endif

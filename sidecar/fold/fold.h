/* fold.h - the folded-stack table: "frame;frame;frame" -> count.
 *
 * The one aggregation of stacks used everywhere (collapse, run, top):
 * samples are added as already-joined stack strings, equal stacks are
 * summed, and iteration is in byte-wise sorted stack order (the order
 * stackcollapse-perf.pl prints, `sort { $a cmp $b }`).
 *
 * Memory: each distinct stack costs its length plus a fixed 32-byte slot
 * (and the table's spare slots, at most 2x); there is no per-entry malloc,
 * keys live in large arena chunks. A stack is at most FOLD_STACK_MAX bytes.
 * A stack should not contain '\n' (it would break the "stack count" lines).
 *
 * Budget: fold_set_budget caps that memory (slots and key chunks, counted
 * by fold_memory); past it a NEW stack is refused with -ENOSPC while stacks
 * already in the table keep counting. The caller decides where the refused
 * samples go (run/top/collapse add them to one "[dropped: stack table
 * full]" stack per process with fold_add_over, lib/budget.h), so totals
 * stay right. fold_foreach needs 8 more bytes per stack while it runs.
 */
#ifndef FS_FOLD_H
#define FS_FOLD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "budget.h"
#include "error.h"
#include "cleanup.h"

#define FOLD_STACK_MAX BUDGET_STACK_BYTES /* bytes in one folded stack */

struct fold;

/* An empty table, or NULL when out of memory. */
struct fold *fold_new(void);
void fold_free(struct fold *f);
FS_DEFINE_CLEANUP(struct fold, fold_free)
#define cleanup_fold __attribute__((cleanup(fold_free_cleanup)))

/* Cap the table's memory at bytes (0: no cap, the default). A budget
 * below what is held already refuses every new stack. */
void fold_set_budget(struct fold *f, size_t bytes);

/* Bytes held by the table (slots and key chunks). */
size_t fold_memory(const struct fold *f);

/* Add count to stack (len bytes, need not be NUL-terminated); a new stack
 * is created even when count is 0. Counts saturate at UINT64_MAX.
 * 0, -E2BIG (len > FOLD_STACK_MAX), -ENOSPC (a new stack past the budget;
 * nothing was added) or -ENOMEM. */
int fold_add(struct fold *f, const char *stack, size_t len, uint64_t count);

/* fold_add ignoring the budget: for the few stacks that stand for what
 * was refused (the caller bounds how many). 0, -E2BIG or -ENOMEM. */
int fold_add_over(struct fold *f, const char *stack, size_t len, uint64_t count);

/* Number of distinct stacks. */
size_t fold_count(const struct fold *f);

/* Sum of all counts (saturating). */
uint64_t fold_total(const struct fold *f);

/* The count of one stack, 0 when absent. */
uint64_t fold_get(const struct fold *f, const char *stack, size_t len);

typedef int (*fold_fn)(const char *stack, size_t len, uint64_t count, void *arg);

/* Call fn for every stack in byte-wise sorted order (memcmp, shorter
 * prefix first). Stops at and returns the first non-zero value fn returns;
 * 0 when all were visited, -ENOMEM if the sort index cannot be allocated.
 * The stack pointer is not NUL-terminated. */
int fold_foreach(const struct fold *f, fold_fn fn, void *arg);

/* Write "stack count\n" for each stack in sorted order. 0 or -errno
 * (-EIO when the stream reports an error without errno). */
int fold_write(const struct fold *f, FILE *out);

/* Add folded text ("stack count" lines, the format fold_write writes and
 * flamegraph.pl reads; the count is the last space-separated field) to f.
 * Empty lines are skipped; a line without a count is an error naming its
 * line number. 0 or -errno. */
int fold_parse(struct fold *f, const char *buf, size_t len, struct fs_error *err);

/* One line of folded text (len bytes, without its '\n'): *stack and
 * *stack_len the stack (trailing blanks and '\r' dropped), *count its
 * count. 1 for a stack, 0 for a blank line, -EINVAL when the line does not
 * end in a count. What fold_parse does per line, for streaming readers. */
int fold_parse_line(const char *line, size_t len, const char **stack, size_t *stack_len,
		    uint64_t *count);

#endif

/* flame.h - the frame tree behind a flame graph.
 *
 * Stacks are added root first ("main;run;work" plus a sample count) and
 * merged into a tree of frames: one node per distinct call path. Frame names
 * are interned, so a name that occurs on a million paths is stored once.
 *
 * A tree is plain (one count per stack) or differential (two counts per
 * stack, "A" = before and "B" = after, as written by difffolded.pl). Plain
 * counts are stored as B, so a differential tree draws its widths from B
 * just like a plain one, and A only colours it.
 *
 * Usage:
 *	struct flame *f = flame_new();
 *	flame_add(f, "main;work", 9, 42);
 *	render_svg(f, stdout, &opts, &err);
 *	flame_free(f);
 */
#ifndef FS_FLAME_H
#define FS_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "cleanup.h"

/* Bounds on input: longer lines are skipped (and counted as malformed),
 * deeper stacks keep their FLAME_DEPTH_MAX outermost frames. */
#define FLAME_LINE_MAX	(1u << 20)
#define FLAME_DEPTH_MAX 2048

/* Node 0 is the root ("all"); FLAME_NONE ends child and sibling lists. */
#define FLAME_ROOT 0u
#define FLAME_NONE UINT32_MAX

struct flame;

/* Counts reported by flame_parse_folded (cumulative over calls). */
struct flame_stats {
	uint64_t lines;	    /* non-empty lines read */
	uint64_t malformed; /* lines skipped: no count, bad count, too long */
	uint64_t truncated; /* stacks cut to FLAME_DEPTH_MAX frames */
};

/* Which count a plain "stack count" line feeds (flame_parse_folded_as). */
enum flame_column {
	FLAME_COLUMN_B = 0, /* the default: the drawn count */
	FLAME_COLUMN_A,	    /* the "before" count of a differential tree */
};

/* NULL when out of memory. */
struct flame *flame_new(void);
void flame_free(struct flame *f);
FS_DEFINE_CLEANUP(struct flame, flame_free)
#define cleanup_flame __attribute__((cleanup(flame_free_cleanup)))

/* Add count samples of stack (len bytes, frames separated by ';', root
 * first, no trailing count). An empty stack adds to the root only.
 * 0, -ENOMEM, or -E2BIG when the tree would exceed 2^32 - 2 nodes. */
int flame_add(struct flame *f, const char *stack, size_t len, uint64_t count);

/* The same with a "before" (count_a) and "after" (count_b) count; makes the
 * tree differential. */
int flame_add2(struct flame *f, const char *stack, size_t len, uint64_t count_a, uint64_t count_b);

/* Read folded lines "stack count" (flamegraph.pl input) or "stack countA
 * countB" (difffolded.pl output) until EOF. Malformed lines are skipped and
 * counted in the stats. 0 or -errno (read error, out of memory). */
int flame_parse_folded(struct flame *f, FILE *in, struct fs_error *err);

/* As flame_parse_folded, but single-count lines feed the given column
 * (two-count lines always feed both). Used by `diff` to load A and B. */
int flame_parse_folded_as(struct flame *f, FILE *in, enum flame_column col, struct fs_error *err);

/* A new tree with every stack reversed (leaf first) and merged, as
 * flamegraph.pl --reverse draws it. NULL with err set on failure. */
struct flame *flame_reverse(const struct flame *f, struct fs_error *err);

/* The counters themselves, for the folded reader (flame_folded.c) only. */
struct flame_stats *flame_stats_rw(struct flame *f);
const struct flame_stats *flame_stats(const struct flame *f);
int flame_is_diff(const struct flame *f);

/* ---- read access (the renderer and tests) ---- */

/* Number of nodes including the root. */
uint32_t flame_node_count(const struct flame *f);
/* The node's frame name (not NUL-terminated) and its length. The root is "all". */
const char *flame_node_name(const struct flame *f, uint32_t node, size_t *len);
uint32_t flame_node_parent(const struct flame *f, uint32_t node);
uint32_t flame_node_child(const struct flame *f, uint32_t node);   /* first child */
uint32_t flame_node_sibling(const struct flame *f, uint32_t node); /* next sibling */
/* Inclusive (total) and exclusive (self) counts of column B / column A. */
uint64_t flame_node_total(const struct flame *f, uint32_t node);
uint64_t flame_node_self(const struct flame *f, uint32_t node);
uint64_t flame_node_total_a(const struct flame *f, uint32_t node);
uint64_t flame_node_self_a(const struct flame *f, uint32_t node);

/* The child of parent named name, or FLAME_NONE. */
uint32_t flame_find_child(const struct flame *f, uint32_t parent, const char *name, size_t len);
/* The node at the end of stack ("a;b;c"), or FLAME_NONE. */
uint32_t flame_find(const struct flame *f, const char *stack, size_t len);

/* The children of node sorted by name (bytewise), malloc'd into *out (NULL
 * when there are none); free() it. 0 or -ENOMEM. */
int flame_children(const struct flame *f, uint32_t node, uint32_t **out, size_t *n);

/* Call fn for every node that ends a stack (self count in A or B non-zero),
 * with the stack as "a;b;c" text. Stops at and returns fn's first non-zero
 * return. Used to write folded output (diff --folded) and to reverse. */
int flame_foreach_stack(const struct flame *f,
			int (*fn)(void *ctx, const char *stack, size_t len, uint64_t a, uint64_t b),
			void *ctx);

#endif

/* collapse.h - `perf script` text -> folded stacks, line for line what
 * FlameGraph's stackcollapse-perf.pl prints for the same input and options
 * (see docs/collapse.md for the rules and the few documented limits).
 *
 * Streaming: feed lines (or whole buffers) to one struct collapse; its state
 * (the sample being read, the event filter) carries across calls and files,
 * as perl's `<>` does. A sample is added to the fold table at the empty line
 * that ends it; a sample still open at the end of input is dropped, as in
 * the perl script.
 */
#ifndef FS_COLLAPSE_H
#define FS_COLLAPSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "fold.h"
#include "cleanup.h"

#define COLLAPSE_LINE_MAX (64u << 20) /* longest line read from a stream */

struct collapse_opts {
	bool include_pid;	  /* "comm-PID" (PID "?" when perf printed only a TID) */
	bool include_tid;	  /* "comm-PID/TID" */
	bool annotate_kernel;	  /* "_[k]" on kernel frames */
	bool annotate_jit;	  /* "_[j]" on frames from /tmp/perf-PID.map */
	bool include_addrs;	  /* "[module <addr>]" for unknown symbols */
	const char *event_filter; /* NULL or "": the first event type seen */
};

struct collapse_stats {
	uint64_t lines;		     /* lines read */
	uint64_t samples;	     /* samples added to the table */
	uint64_t filtered;	     /* event lines skipped by the event filter */
	uint64_t unrecognized;	     /* lines that are neither event, frame nor blank */
	uint64_t oversized;	     /* samples whose stack was over FOLD_STACK_MAX: cut at
				      * the root end, "[truncated: deeper stack]" there */
	uint64_t dropped;	     /* samples counted as "[dropped: stack table full]" */
	uint64_t first_unrecognized; /* line number of the first one, 0 if none */
	const char *event;	     /* the event kept (NUL-terminated), or NULL */
	const char *first_filtered;  /* first event type filtered out, or NULL */
	bool event_defaulted;	     /* event came from the input, not the options */
};

struct collapse;

/* A collapser adding to out (which must outlive it). NULL on ENOMEM. */
struct collapse *collapse_new(const struct collapse_opts *opts, struct fold *out);
void collapse_free(struct collapse *c);
FS_DEFINE_CLEANUP(struct collapse, collapse_free)
#define cleanup_collapse __attribute__((cleanup(collapse_free_cleanup)))

/* One line without its '\n' (may contain any other byte). 0 or -errno
 * (-ENOMEM). */
int collapse_line(struct collapse *c, const char *line, size_t len, struct fs_error *err);

/* Every line of buf; a last line without '\n' counts as a line, as perl
 * reads it. 0 or -errno. */
int collapse_feed(struct collapse *c, const char *buf, size_t len, struct fs_error *err);

/* Read fd to its end (mmap for regular files, a large buffer otherwise;
 * name is used in messages). 0 or -errno. */
int collapse_fd(struct collapse *c, int fd, const char *name, struct fs_error *err);

/* Counters and the event filter state (pointers valid until the next call
 * on c or collapse_free). */
void collapse_get_stats(const struct collapse *c, struct collapse_stats *st);

/* One-shot: collapse buf with opts into out. 0 or -errno. */
int collapse_buffer(const char *buf, size_t len, const struct collapse_opts *opts, struct fold *out,
		    struct fs_error *err);

#endif

/* hot.h - the hottest frames of a fold table, for the `top` view and the
 * `run` summary: every frame name with its self and total samples. */
#ifndef FS_HOT_H
#define FS_HOT_H

#include <stddef.h>
#include <stdint.h>

#include "fold.h"

struct hot_frame {
	const char *name; /* NUL-terminated; owned by the array */
	uint64_t self;	  /* samples with this frame as the leaf */
	uint64_t total;	  /* samples with this frame anywhere in the stack */
};

/* Every frame of f except the first of each stack (the process name),
 * sorted by self (by_total: total) samples, descending, ties by name;
 * frames whose sort key is 0 are left out (nothing is listed with 0
 * samples). At most max entries (0 = all). *out is freed with hot_frames_free.
 * 0 or -ENOMEM. */
int hot_frames(const struct fold *f, int by_total, size_t max, struct hot_frame **out, size_t *n);
void hot_frames_free(struct hot_frame *fr, size_t n);

#endif

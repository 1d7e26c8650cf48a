/* perfmap_tail.h - a perf map that grows while it is read: what a runtime
 * other than HotSpot (node --perf-basic-prof, python3.12 -X perf, .NET with
 * DOTNET_PerfMapEnabled=1, LuaJIT) appends to /tmp/perf-<pid>.map, read in
 * increments over a window (docs/runtimes.md).
 *
 * Each increment's complete lines are parsed (perfmap_parse: the same
 * bounds) and merged into the map read so far, where an entry of the
 * increment replaces every older entry it overlaps (the perfmap.h rule:
 * the newer line describes what is at an address now). Only the unfinished
 * last line is kept as text, so what is held is the parsed map plus at most
 * PERFMAP_MAX_LINE bytes. Names are kept with C0 controls, DEL and C1
 * controls (as UTF-8) replaced by '?': no control character of the
 * container's reaches a frame name.
 *
 * A file that was replaced (another inode) or truncated (shorter than what
 * was read) is read again from its start: what was read of it is dropped. */
#ifndef FS_PERFMAP_TAIL_H
#define FS_PERFMAP_TAIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "perfmap.h"

#define PERFMAP_TAIL_CHUNK (16UL << 20) /* bytes parsed at a time */

struct perfmap_tail {
	struct perfmap *map; /* entries so far; NULL until one line parsed */
	uint64_t offset;     /* bytes of the file consumed */
	uint64_t dev, ino;   /* the file read (perfmap_tail_check) */
	int have_id;
	int skipping;	   /* inside a line longer than PERFMAP_MAX_LINE */
	int capped;	   /* the file is larger than the max_file of the last check */
	int full;	   /* PERFMAP_MAX_ENTRIES reached: later lines dropped */
	unsigned restarts; /* times the file was replaced or truncated */
	size_t lines;	   /* complete lines seen */
	size_t skipped;	   /* malformed, too long or dropped lines */
	size_t npartial;
	char partial[PERFMAP_MAX_LINE + 1]; /* the unfinished last line */
};

/* An empty tail (t is zeroed). */
void perfmap_tail_init(struct perfmap_tail *t);

/* Drop what was read (the map too): the tail is as after init, but keeps
 * its restart count. */
void perfmap_tail_reset(struct perfmap_tail *t);

/* Add the next len bytes of the file: the lines they complete are parsed
 * and merged. 0, or -ENOMEM (the tail is unchanged then). */
int perfmap_tail_feed(struct perfmap_tail *t, const char *buf, size_t len, struct fs_error *err);

/* Look at the open file fd before reading it: when it is not the file read
 * so far or is shorter than what was read, reset (restarts + 1). *pending:
 * the bytes to read next, of at most max_file bytes of the file (capped is
 * set when the file is larger). 0 or -errno. */
int perfmap_tail_check(struct perfmap_tail *t, int fd, size_t max_file, size_t *pending,
		       struct fs_error *err);

/* Read up to want bytes at the tail's offset from fd and feed them. The
 * bytes read (fewer when the file shrank meanwhile) or -errno. */
ssize_t perfmap_tail_read(struct perfmap_tail *t, int fd, size_t want, struct fs_error *err);

/* Bytes held (the map and the unfinished line), for the JIT budget. */
size_t perfmap_tail_memory(const struct perfmap_tail *t);

/* Entries in the map now. */
size_t perfmap_tail_count(const struct perfmap_tail *t);

#endif

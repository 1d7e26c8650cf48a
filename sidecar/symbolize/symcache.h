/* symcache.h - the symbolizer's frame cache: the name (and module, build
 * id) of a kernel or native frame of one process, kept from
 * its first lookup during the window so that the end of the window (and
 * every later lookup) costs a hash probe, not a search of an ELF table,
 * a copy of its module and a build id printed in hex.
 *
 * Keyed by (process serial, address, flags): a serial is given to each
 * process the symbolizer caches, anew when it is forgotten (exec, a pid
 * reused), so nothing of an old process is found for a new one. A native
 * frame also keeps the mapping it was found in (start, file): the caller
 * checks it against the process's maps of now (a library unmapped and
 * another mapped there is looked up again). JIT frames are not kept here:
 * their names depend on the sample's time (jitlog.h has its own cache);
 * nor are interpreted frames (a Method* freed when its class unloads may
 * be reused by another method; hotspot.h's reader keeps its own cache).
 *
 * Bounded: SYMCACHE_SLOTS frames and SYMCACHE_BYTES of text (budget.h);
 * full, it starts over empty. Not thread-safe. */
#ifndef FS_SYMCACHE_H
#define FS_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "budget.h"

#define SYMCACHE_SLOTS BUDGET_SYM_CACHE_SLOTS /* power of two */
#define SYMCACHE_BYTES BUDGET_SYM_CACHE_BYTES

struct symcache;

/* One cached frame. The strings are the cache's (valid until the next
 * symcache_put or symcache_free); module and build_id may be NULL. */
struct symcache_frame {
	const char *name, *module, *build_id;
	int kind, resolved;
	uint64_t map_start; /* native: the mapping's start */
	const void *file;   /* native: its file (the symbolizer's), or NULL */
};

/* NULL on ENOMEM (the symbolizer then goes without). */
struct symcache *symcache_new(void);
void symcache_free(struct symcache *c);

/* 1 and *f when (serial, addr, flags) is cached, else 0. */
int symcache_get(struct symcache *c, uint32_t serial, uint64_t addr, unsigned flags,
		 struct symcache_frame *f);

/* Keep *f for (serial, addr, flags) (its strings are copied). */
void symcache_put(struct symcache *c, uint32_t serial, uint64_t addr, unsigned flags,
		  const struct symcache_frame *f);

/* Hits, misses, frames kept, times it started over, bytes held. */
struct symcache_stats {
	uint64_t hits, misses, flushes;
	size_t used, memory;
};
void symcache_stats(const struct symcache *c, struct symcache_stats *st);

#endif

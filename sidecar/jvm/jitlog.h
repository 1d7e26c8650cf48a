/* jitlog.h - the JIT code of one JVM over a whole profiling window, by
 * address AND time: what the agent's timed log (agent/agentmap.h,
 * AGENTMAP_TIMED_NAME) says was loaded and unloaded, fed in chunks as it is
 * read during the window, looked up by (address, sample time).
 *
 * Every entry is one perf-map line of one code load, valid from its load
 * time (0: it existed when the window opened) until the first of: its
 * unload event, or the load of newer code that overlaps it (HotSpot posts
 * unloads late, from its service thread; an address reused by newer code
 * belongs to the newer code from its load on). A lookup takes the entry
 * containing the address that is valid at the time; when none is (a clock
 * step, an event not read yet) the one nearest in time.
 *
 * The log comes from inside a container (any process of the JVM's uid can
 * rewrite it, and a fake JVM writes what it likes): lines are bounded
 * (PERFMAP_MAX_LINE), entries, loads, bytes and the memory held are capped
 * (jitlog_set_limit: what the caller's budget leaves), malformed lines are
 * counted and skipped, and what does not fit is counted as dropped, never
 * silently lost. The work is linear in the input plus n log n for the
 * index: an unload is one hash look-up (its entries' ends are read through
 * their load), overlaps are settled by one sweep over the entries in load
 * order against the set of newest code (each entry is inserted into and
 * removed from it at most once), and every step is counted against
 * JITLOG_MAX_WORK; a caller's stop flag interrupts parsing and indexing.
 * Every lookup walk has a step limit. Times are
 * the JVM's CLOCK_MONOTONIC; clock_offset (its time namespace's offset)
 * is subtracted to compare them with perf's. */
#ifndef FS_JITLOG_H
#define FS_JITLOG_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "error.h"
#include "cleanup.h"

#define JITLOG_MAX_BYTES   BUDGET_JIT_FILE_BYTES /* log text accepted per JVM (budget.h) */
#define JITLOG_MAX_ENTRIES BUDGET_JIT_ENTRIES
#define JITLOG_MAX_STEPS   4096 /* entries looked at per lookup at most */
/* Entries looked at by all lookups of one log (a fold symbolizes each
 * distinct stack once, but a fake JVM chooses its stacks): past it, each
 * lookup looks at JITLOG_LATE_LOOKUP_STEPS at most. */
#define JITLOG_MAX_LOOKUP_WORK	 (1ull << 30)
#define JITLOG_LATE_LOOKUP_STEPS 64
#define JITLOG_MAX_LOADS	 BUDGET_JIT_ENTRIES /* load events kept */
/* Steps (lines, hash probes, sort and merge moves, sweep moves) one log may
 * cost in all: far above a real log's (a few per line), so only a hostile
 * one stops there, with what was done so far kept. */
#define JITLOG_MAX_WORK (1ull << 30)
/* Bytes one entry costs with its share of the index (accounted at
 * capacity, so the index built later never passes the limit). */
#define JITLOG_ENTRY_BYTES (sizeof(struct jitlog_entry) + 4 + 8 + 16 + 1)
/* The address cache (jitlog_lookup_entry): per address looked up, the
 * entries that contain it, so that the next lookups of that address (any
 * time) cost a hash probe instead of a search of the whole index. A slot
 * per JITLOG_CACHE_PER_SLOTS entries, JITLOG_CACHE_SLOTS_MAX at most,
 * counted in jitlog_memory (within the log's limit); an address with more
 * than JITLOG_CACHE_CANDS entries over time is not cached. */
#define JITLOG_CACHE_SLOTS_MAX (1u << 16)
#define JITLOG_CACHE_PER_SLOTS 2u
#define JITLOG_CACHE_CANDS     6u

/* One cached address: its entries in the order a lookup walks them. */
struct jitlog_cached {
	uint64_t addr; /* 0: free */
	uint32_t cand[JITLOG_CACHE_CANDS];
	uint32_t n;
};

struct jitlog_entry {
	uint64_t start, size;
	uint64_t t_load, t_end; /* valid in [t_load, t_end): t_end as ended by newer
				   overlapping code; its load's unload may end it
				   earlier (jitlog_entry_end) */
	uint32_t name;		/* offset in the name arena */
	uint32_t load;		/* 1 + index of its load event, 0 = none */
	uint8_t sp_only;	/* its debug info is safepoint-only (agentmap.h "!s") */
};

struct jitlog {
	struct jitlog_entry *e;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	/* the load event whose lines are being read */
	uint64_t cur_t, cur_start, cur_end;
	int cur_open;
	int cur_drop;	 /* the current load was dropped: so are its lines */
	int cur_sp_only; /* the current load was marked "!s" */
	/* the agent's "!nonsafepoints" status: -XX:+DebugNonSafepoints */
	char nonsafepoints[160];
	uint32_t methods; /* load events seen */
	/* (start, method id) of every load event -> its entries */
	struct jitlog_load *loads;
	size_t nloads, loads_cap;
	uint32_t *slots; /* open addressing: load index + 1, 0 = empty */
	size_t slots_cap;
	/* the unfinished last line of the previous chunk */
	char *carry;
	size_t carry_len;
	/* lookup index: entry numbers sorted by (start, t_load), with the
	 * running maximum of their ends */
	uint32_t *order;
	uint64_t *maxend;
	size_t indexed; /* entries [0, indexed) are in order */
	/* the overlap sweep: entries still the newest code somewhere (bit per
	 * entry), the same by position in order (3 levels), and the (t_load,
	 * entry) of the newest entry swept */
	uint64_t *open, *pos_bits[3];
	size_t pos_n[3]; /* bits at each level */
	int sweep_off;	 /* the work budget ran out: no more sweeps */
	uint64_t front_t;
	uint32_t front_i;
	int swept_any;
	int64_t clock_offset;
	uint64_t seed; /* of the load hash: not guessable by the container */
	/* budgets */
	size_t limit;			   /* bytes held at most (jitlog_memory) */
	uint64_t steps;			   /* work done, against JITLOG_MAX_WORK */
	const volatile sig_atomic_t *stop; /* set: stop parsing and indexing */
	/* counts */
	size_t bytes, lines, skipped, unloads, unmatched;
	size_t dropped;	      /* entry lines not kept: entry cap or memory budget */
	size_t dropped_loads; /* load events not kept (their lines are dropped too) */
	size_t dropped_bytes; /* log text not parsed: byte cap, work budget, stop */
	size_t late;	      /* entries older than code indexed before them: settled
				 against the newest code only */
	size_t unsettled;     /* entries whose overlaps were not settled (work budget) */
	int interrupted;      /* the stop flag was seen */
	/* the address cache: entries containing an address depend only on
	 * the entries indexed (their ends are read at each lookup), so a slot
	 * stays true until an entry containing its address is indexed, when
	 * jitlog_index empties it */
	struct jitlog_cached *cache;
	size_t cache_slots; /* power of two, 0: none */
	int cache_off;	    /* jitlog_set_cache(l, 0) */
	size_t cache_used, cache_hits, cache_misses, cache_dropped;
	/* lookups: steps so far (counted through a const log: the log itself
	 * is never const), their budget, lookups cut short by it */
	uint64_t lookup_steps, lookup_budget;
	size_t lookups_cut;
};

/* An empty log; clock_offset as above. Its memory limit is BUDGET_JIT_BYTES
 * until jitlog_set_limit. */
void jitlog_init(struct jitlog *l, int64_t clock_offset);
void jitlog_release(struct jitlog *l);
FS_DEFINE_CLEANUP_VALUE(struct jitlog, jitlog_release)
#define cleanup_jitlog __attribute__((cleanup(jitlog_release_cleanup)))

/* The bytes the log may hold (jitlog_memory) from now on: past it, new
 * entries and loads are dropped and counted. */
void jitlog_set_limit(struct jitlog *l, size_t bytes);
/* The address cache on (the default) or off (every lookup searches the
 * index: the reference the tests compare the cache with). */
void jitlog_set_cache(struct jitlog *l, int on);
/* A flag (e.g. set by a signal handler) that, once nonzero, stops parsing
 * (the rest of the chunk is dropped, -EINTR) and indexing (what is left
 * unsettled is counted); NULL for none. */
void jitlog_set_stop(struct jitlog *l, const volatile sig_atomic_t *stop);

/* The end of entry x's validity: its own end, or its load's unload. */
uint64_t jitlog_entry_end(const struct jitlog *l, const struct jitlog_entry *x);

/* Lines, loads and bytes dropped so far (the sum of the counts above). */
size_t jitlog_dropped(const struct jitlog *l);

/* Parse the next len bytes of the log (an unfinished last line is kept for
 * the next call). 0, or -E2BIG past JITLOG_MAX_BYTES or JITLOG_MAX_WORK,
 * -EINTR when stopped, -ENOMEM, with err filled; what was parsed before
 * stays usable. Entries and loads past their caps or the memory limit are
 * dropped and counted, not errors. */
int jitlog_feed(struct jitlog *l, const char *buf, size_t len, struct fs_error *err);

/* Bring the lookup index up to date with what was fed: the new entries are
 * sorted and merged (k log k + n), then swept in load order (k log n at
 * most). 0 or -ENOMEM; past JITLOG_MAX_WORK or when stopped the entries are
 * indexed and the overlaps left are counted as unsettled. */
int jitlog_index(struct jitlog *l);

/* The name of the code at addr at time t (perf clock, ns), or NULL. A
 * lookup of an address looked up before (at any time) whose entries did
 * not change since is answered from the address cache, with the same
 * answer as a search of the index would give (code unloaded and the
 * same range reused by newer code: the newer entries are indexed, which
 * empties the cached addresses they contain). Only
 * indexed entries are looked at, JITLOG_MAX_STEPS of them at most, fewer
 * once all lookups together passed lookup_budget (JITLOG_MAX_LOOKUP_WORK).
 * l must not be an object defined const: the steps are counted in it. */
const char *jitlog_lookup(const struct jitlog *l, uint64_t addr, uint64_t t);

/* The entry (perf map line) jitlog_lookup names, or NULL (same budget). */
const struct jitlog_entry *jitlog_lookup_entry(const struct jitlog *l, uint64_t addr, uint64_t t);

/* Bytes held (approximately: the arrays' capacities), for budgets. */
size_t jitlog_memory(const struct jitlog *l);

/* Entries (perf map lines) and load events so far. */
size_t jitlog_entries(const struct jitlog *l);
size_t jitlog_loads(const struct jitlog *l);

/* The perf map text of the code present at the end (entries never ended),
 * for perf users (--perf-map). *out malloc'd. 0 or -ENOMEM. */
int jitlog_perfmap_text(const struct jitlog *l, char **out, size_t *len);

#endif

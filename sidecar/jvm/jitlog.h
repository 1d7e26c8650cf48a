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
 * The log comes from inside a container: lines are bounded
 * (PERFMAP_MAX_LINE), entries and bytes are capped, malformed lines are
 * counted and skipped, and every lookup walk has a step limit. Times are
 * the JVM's CLOCK_MONOTONIC; clock_offset (its time namespace's offset)
 * is subtracted to compare them with perf's. */
#ifndef FS_JITLOG_H
#define FS_JITLOG_H

#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "error.h"

#define JITLOG_MAX_BYTES   BUDGET_JIT_FILE_BYTES /* log text accepted per JVM (budget.h) */
#define JITLOG_MAX_ENTRIES BUDGET_JIT_ENTRIES
#define JITLOG_MAX_STEPS   4096 /* entries looked at per lookup at most */

struct jitlog_entry {
	uint64_t start, size;
	uint64_t t_load, t_end; /* valid in [t_load, t_end) */
	uint32_t name;		/* offset in the name arena */
	uint32_t method;	/* index of its load event */
	uint8_t sp_only;	/* its debug info is safepoint-only (agentmap.h "!s") */
};

struct jitlog {
	struct jitlog_entry *e;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	/* the load event whose lines are being read */
	uint64_t cur_t, cur_start, cur_end;
	uint32_t cur_method;
	int cur_open;
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
	int64_t clock_offset;
	/* counts */
	size_t bytes, lines, skipped, unloads, unmatched;
};

/* An empty log; clock_offset as above. */
void jitlog_init(struct jitlog *l, int64_t clock_offset);
void jitlog_release(struct jitlog *l);

/* Parse the next len bytes of the log (an unfinished last line is kept for
 * the next call). 0, or -E2BIG past JITLOG_MAX_BYTES / -ENOMEM with err
 * filled; what was parsed before stays usable. */
int jitlog_feed(struct jitlog *l, const char *buf, size_t len, struct fs_error *err);

/* Bring the lookup index up to date with what was fed (cheap when little
 * was added: the new entries are sorted and merged). 0 or -ENOMEM. */
int jitlog_index(struct jitlog *l);

/* The name of the code at addr at time t (perf clock, ns), or NULL. Only
 * indexed entries are looked at. */
const char *jitlog_lookup(const struct jitlog *l, uint64_t addr, uint64_t t);

/* The entry (perf map line) jitlog_lookup names, or NULL. */
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

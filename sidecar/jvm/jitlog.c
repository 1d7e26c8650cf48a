/* jitlog.c - see jitlog.h */
#include "jitlog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cleanup.h"
#include "perfmap.h"

/* One load event: its code's start, the method id the agent gave it (the
 * unload event names both), its load time, its unload time (UINT64_MAX:
 * none yet) and its entries [first, first + count). */
struct jitlog_load {
	uint64_t start, mid;
	uint64_t t, t_unload;
	uint32_t first, count;
};

#define JITLOG_NONE	   SIZE_MAX
#define JITLOG_CHECK_EVERY 1024 /* lines or entries between two looks at stop */
#define JITLOG_CARRY_BYTES (PERFMAP_MAX_LINE + 1)
#define JITLOG_NAMES_MIN   (1u << 16)
#define JITLOG_ENTRIES_MIN 4096u
#define JITLOG_LOADS_MIN   1024u
#define JITLOG_LATE_STEPS  64u /* newest code an entry that came late is compared with */

void jitlog_init(struct jitlog *l, int64_t clock_offset)
{
	memset(l, 0, sizeof(*l));
	l->clock_offset = clock_offset;
	l->limit = BUDGET_JIT_BYTES;
	l->lookup_budget = JITLOG_MAX_LOOKUP_WORK;
	if (getrandom(&l->seed, sizeof(l->seed), GRND_NONBLOCK) != sizeof(l->seed)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		l->seed = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)l;
	}
}

void jitlog_release(struct jitlog *l)
{
	size_t limit = l->limit;
	const volatile sig_atomic_t *stop = l->stop;
	free(l->e);
	free(l->names);
	free(l->loads);
	free(l->slots);
	free(l->carry);
	free(l->order);
	free(l->maxend);
	free(l->open);
	for (int i = 0; i < 3; i++)
		free(l->pos_bits[i]);
	free(l->cache);
	int cache_off = l->cache_off;
	jitlog_init(l, l->clock_offset);
	l->cache_off = cache_off;
	l->limit = limit;
	l->stop = stop;
}

void jitlog_set_limit(struct jitlog *l, size_t bytes)
{
	l->limit = bytes;
}

void jitlog_set_cache(struct jitlog *l, int on)
{
	l->cache_off = !on;
	if (!on) {
		free(l->cache);
		l->cache = NULL;
		l->cache_slots = l->cache_used = 0;
	}
}

void jitlog_set_stop(struct jitlog *l, const volatile sig_atomic_t *stop)
{
	l->stop = stop;
}

size_t jitlog_memory(const struct jitlog *l)
{
	return l->cap * JITLOG_ENTRY_BYTES + l->names_cap + l->loads_cap * sizeof(*l->loads) +
	       l->slots_cap * sizeof(*l->slots) + (l->carry ? JITLOG_CARRY_BYTES : 0) +
	       l->cache_slots * sizeof(*l->cache);
}

size_t jitlog_entries(const struct jitlog *l)
{
	return l->n;
}

size_t jitlog_loads(const struct jitlog *l)
{
	return l->nloads;
}

size_t jitlog_dropped(const struct jitlog *l)
{
	return l->dropped + l->dropped_loads + l->dropped_bytes + l->unsettled;
}

uint64_t jitlog_entry_end(const struct jitlog *l, const struct jitlog_entry *x)
{
	uint64_t end = x->t_end;
	if (x->load && x->load <= l->nloads && l->loads[x->load - 1].t_unload < end)
		end = l->loads[x->load - 1].t_unload;
	return end;
}

static int jitlog_stopped(struct jitlog *l)
{
	if (l->stop && *l->stop)
		l->interrupted = 1;
	return l->interrupted;
}

/* Bytes the limit still allows. */
static size_t jitlog_room(const struct jitlog *l)
{
	size_t m = jitlog_memory(l);
	return m < l->limit ? l->limit - m : 0;
}

/* The new capacity of an array of cap elements of each bytes that must
 * hold need: doubled (at least min) up to max and the memory limit; 0 when
 * even need does not fit. */
static size_t jitlog_grow(const struct jitlog *l, size_t cap, size_t need, size_t min, size_t max,
			  size_t each)
{
	size_t want = cap ? cap * 2 : min;
	if (want < need)
		want = need;
	if (want > max)
		want = max;
	size_t room = jitlog_room(l) / each;
	if (want - cap > room)
		want = cap + room;
	return want >= need ? want : 0;
}

/* ---- parsing ------------------------------------------------------------- */

/* The value of hex digit c, or -1 when c is not one. */
static int jitlog_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A number at *p (base 16 or 10, 1..20 digits, no overflow), then one
 * space or the end of the line: 0, *v set and *p past the space; or -1
 * (nothing moved) when there is no such number. */
static int jitlog_num(const char **p, const char *end, int base, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int digits = 0;
	if (base == 16 && end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++) {
		int d = jitlog_hexval(*s);
		if (d < 0 || d >= base)
			break;
		if (x > (UINT64_MAX - (uint64_t)d) / (uint64_t)base || ++digits > 20)
			return -1;
		x = x * (uint64_t)base + (uint64_t)d;
	}
	if (!digits || (s < end && *s != ' '))
		return -1;
	*p = s < end ? s + 1 : s;
	*v = x;
	return 0;
}

static uint64_t jitlog_time(const struct jitlog *l, uint64_t t)
{
	if (t == 0)
		return 0; /* existed before the window */
	int64_t off = l->clock_offset;
	if (off > 0 && t <= (uint64_t)off)
		return 1;
	return t - (uint64_t)off; /* off < 0 wraps to the right addition */
}

/* A seeded mix of (start, method id): the container cannot aim its loads
 * at one slot. */
static size_t jitlog_slot(const struct jitlog *l, uint64_t start, uint64_t mid)
{
	uint64_t h = (start ^ l->seed) * 0xbf58476d1ce4e5b9ull;
	h ^= h >> 31;
	h = (h ^ mid ^ (l->seed >> 17)) * 0x94d049bb133111ebull;
	h ^= h >> 29;
	return (size_t)h & (l->slots_cap - 1);
}

/* Twice the slots (the memory limit allows it: 0; else -ENOSPC). */
static int jitlog_rehash(struct jitlog *l)
{
	size_t cap = l->slots_cap ? l->slots_cap * 2 : 2 * JITLOG_LOADS_MIN;
	if ((cap - l->slots_cap) * sizeof(*l->slots) > jitlog_room(l))
		return -ENOSPC;
	uint32_t *s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOSPC;
	free(l->slots);
	l->slots = s;
	l->slots_cap = cap;
	for (size_t i = 0; i < l->nloads; i++) {
		size_t j = jitlog_slot(l, l->loads[i].start, l->loads[i].mid);
		for (; l->slots[j]; j = (j + 1) & (cap - 1))
			l->steps++;
		l->slots[j] = (uint32_t)i + 1;
	}
	l->steps += l->nloads;
	return 0;
}

/* The slot of (start, mid): its newest load's, or the empty one where it
 * goes. Every probe is a step. */
static size_t jitlog_probe(struct jitlog *l, uint64_t start, uint64_t mid)
{
	size_t j = jitlog_slot(l, start, mid);
	for (; l->slots[j]; j = (j + 1) & (l->slots_cap - 1)) {
		const struct jitlog_load *ld = &l->loads[l->slots[j] - 1];
		l->steps++;
		if (ld->start == start && ld->mid == mid)
			break;
	}
	return j;
}

/* A new load event: 0, or -ENOSPC when it is dropped (cap or memory). */
static int jitlog_add_load(struct jitlog *l, uint64_t t, uint64_t start, uint64_t mid)
{
	if (l->nloads >= JITLOG_MAX_LOADS)
		return -ENOSPC;
	if (l->nloads == l->loads_cap) {
		size_t cap = jitlog_grow(l, l->loads_cap, l->nloads + 1, JITLOG_LOADS_MIN,
					 JITLOG_MAX_LOADS, sizeof(*l->loads));
		struct jitlog_load *p = cap ? reallocarray(l->loads, cap, sizeof(*p)) : NULL;
		if (!p)
			return -ENOSPC;
		l->loads = p;
		l->loads_cap = cap;
	}
	if ((l->nloads + 1) * 2 > l->slots_cap && jitlog_rehash(l) < 0)
		return -ENOSPC;
	l->loads[l->nloads] = (struct jitlog_load){start, mid, t, UINT64_MAX, (uint32_t)l->n, 0};
	/* the same code again: the newest one answers */
	l->slots[jitlog_probe(l, start, mid)] = (uint32_t)l->nloads + 1;
	l->nloads++;
	return 0;
}

/* A new entry: 0, or -ENOSPC when it is dropped (cap or memory). */
static int jitlog_add_entry(struct jitlog *l, uint64_t start, uint64_t size, const char *name,
			    size_t name_len)
{
	if (l->n >= JITLOG_MAX_ENTRIES)
		return -ENOSPC;
	if (l->n == l->cap) {
		size_t cap = jitlog_grow(l, l->cap, l->n + 1, JITLOG_ENTRIES_MIN,
					 JITLOG_MAX_ENTRIES, JITLOG_ENTRY_BYTES);
		struct jitlog_entry *p = cap ? reallocarray(l->e, cap, sizeof(*p)) : NULL;
		if (!p)
			return -ENOSPC;
		l->e = p;
		l->cap = cap;
	}
	if (l->names_len + name_len + 1 > l->names_cap) {
		size_t cap = jitlog_grow(l, l->names_cap, l->names_len + name_len + 1,
					 JITLOG_NAMES_MIN, UINT32_MAX, 1);
		char *p = cap ? realloc(l->names, cap) : NULL;
		if (!p)
			return -ENOSPC;
		l->names = p;
		l->names_cap = cap;
	}
	memcpy(l->names + l->names_len, name, name_len);
	l->names[l->names_len + name_len] = '\0';
	l->e[l->n] = (struct jitlog_entry){.start = start,
					   .size = size,
					   .t_load = l->cur_open ? l->cur_t : 0,
					   .t_end = UINT64_MAX,
					   .name = (uint32_t)l->names_len,
					   .load = l->cur_open ? (uint32_t)l->nloads : 0,
					   .sp_only = (uint8_t)(l->cur_open && l->cur_sp_only)};
	l->names_len += name_len + 1;
	if (l->cur_open)
		l->loads[l->nloads - 1].count++;
	l->n++;
	return 0;
}

/* "-T START MID": end that load (the newest of that code) at T. One look-up:
 * its entries read the end through it (jitlog_entry_end). */
static void jitlog_unload(struct jitlog *l, uint64_t t, uint64_t start, uint64_t mid)
{
	l->unloads++;
	uint32_t s = l->slots_cap ? l->slots[jitlog_probe(l, start, mid)] : 0;
	if (!s) {
		l->unmatched++;
		return;
	}
	struct jitlog_load *ld = &l->loads[s - 1];
	if (t >= ld->t && t < ld->t_unload)
		ld->t_unload = t;
}

/* "!s" (the current load's debug info is safepoint-only) or
 * "!nonsafepoints TEXT" (the flag's state, kept in printable ASCII). */
static void jitlog_mark(struct jitlog *l, const char *s, const char *end)
{
	static const char status[] = "nonsafepoints ";
	size_t n = (size_t)(end - s);
	if (n == 1 && *s == 's') {
		if (l->cur_open)
			l->cur_sp_only = 1;
		return;
	}
	if (n > sizeof(status) - 1 && memcmp(s, status, sizeof(status) - 1) == 0) {
		s += sizeof(status) - 1;
		n = (size_t)(end - s);
		if (n >= sizeof(l->nonsafepoints))
			n = sizeof(l->nonsafepoints) - 1;
		for (size_t i = 0; i < n; i++)
			l->nonsafepoints[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
		l->nonsafepoints[n] = '\0';
		return;
	}
	l->skipped++;
}

/* One complete line without its '\n'. Never fails: what does not fit is
 * counted. */
static void jitlog_line(struct jitlog *l, const char *s, size_t len)
{
	const char *end = s + len;
	uint64_t t, start, size, mid;
	l->lines++;
	l->steps++;
	if (len && end[-1] == '\r')
		end--;
	if (len > PERFMAP_MAX_LINE || memchr(s, '\0', (size_t)(end - s)))
		goto skip;
	if (s < end && *s == '!') {
		jitlog_mark(l, s + 1, end);
		return;
	}
	if (s < end && (*s == '@' || *s == '-')) {
		char kind = *s++;
		if (jitlog_num(&s, end, 10, &t) < 0 || jitlog_num(&s, end, 16, &start) < 0)
			goto skip;
		if (kind == '-') {
			if (jitlog_num(&s, end, 16, &mid) < 0 || s != end)
				goto skip;
			jitlog_unload(l, jitlog_time(l, t), start, mid);
			return;
		}
		if (jitlog_num(&s, end, 16, &size) < 0 || jitlog_num(&s, end, 16, &mid) < 0 ||
		    s != end || size == 0 || start > UINT64_MAX - size)
			goto skip;
		l->cur_open = 0;
		l->cur_t = jitlog_time(l, t);
		l->cur_start = start;
		l->cur_end = start + size;
		if (jitlog_add_load(l, l->cur_t, start, mid) < 0) {
			l->dropped_loads++;
			l->cur_drop = 1; /* and its lines with it */
			return;
		}
		l->cur_open = 1;
		l->cur_drop = 0;
		l->cur_sp_only = 0;
		return;
	}
	if (jitlog_num(&s, end, 16, &start) < 0 || jitlog_num(&s, end, 16, &size) < 0 || s == end ||
	    size == 0 || start > UINT64_MAX - size)
		goto skip;
	/* A line of the current load lies inside its code; anything else is a
	 * plain perf map line, valid for the whole window. */
	if ((l->cur_open || l->cur_drop) && (start < l->cur_start || start + size > l->cur_end))
		l->cur_open = l->cur_drop = 0;
	if (l->cur_drop || jitlog_add_entry(l, start, size, s, (size_t)(end - s)) < 0)
		l->dropped++;
	return;
skip:
	l->skipped++;
}

/* Keep the unfinished last line p[0, n) (or only its length, when it is
 * too long to be parsed). */
static void jitlog_carry(struct jitlog *l, const char *p, size_t n, int append)
{
	size_t at = append ? l->carry_len : 0;
	if (at + n <= PERFMAP_MAX_LINE)
		memcpy(l->carry + at, p, n);
	l->carry_len = at + n;
}

int jitlog_feed(struct jitlog *l, const char *buf, size_t len, struct fs_error *err)
{
	if (len > JITLOG_MAX_BYTES - l->bytes) {
		l->dropped_bytes += len;
		return fs_error_set(err, E2BIG, "JIT log over the %lu MiB limit",
				    JITLOG_MAX_BYTES >> 20);
	}
	l->bytes += len;
	/* before any entry: the limit counts it */
	if (!l->carry && !(l->carry = malloc(JITLOG_CARRY_BYTES)))
		return fs_error_set(err, ENOMEM, "reading the JIT log");
	const char *p = buf, *end = buf + len;
	if (l->carry_len) {
		/* finish the line the last chunk ended in */
		const char *nl = memchr(p, '\n', len);
		size_t take = nl ? (size_t)(nl - p) : len;
		jitlog_carry(l, p, take, 1);
		if (!nl)
			return 0;
		if (l->carry_len <= PERFMAP_MAX_LINE) {
			jitlog_line(l, l->carry, l->carry_len);
		} else {
			l->lines++;
			l->skipped++;
		}
		l->carry_len = 0;
		p = nl + 1;
	}
	for (size_t k = 0; p < end; k++) {
		if (k % JITLOG_CHECK_EVERY == 0 &&
		    (jitlog_stopped(l) || l->steps > JITLOG_MAX_WORK)) {
			l->dropped_bytes += (size_t)(end - p);
			if (l->interrupted)
				return fs_error_set(err, EINTR, "reading the JIT log: interrupted");
			return fs_error_set(err, E2BIG, "JIT log over its work budget (%llu steps)",
					    (unsigned long long)JITLOG_MAX_WORK);
		}
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			jitlog_carry(l, p, (size_t)(end - p), 0);
			break;
		}
		jitlog_line(l, p, (size_t)(nl - p));
		p = nl + 1;
	}
	return 0;
}

/* ---- the index ----------------------------------------------------------- */

static int jitlog_cmp(const void *a, const void *b, void *arg)
{
	const struct jitlog_entry *e = arg;
	const struct jitlog_entry *x = &e[*(const uint32_t *)a], *y = &e[*(const uint32_t *)b];
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->t_load != y->t_load)
		return x->t_load < y->t_load ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* By load time, then log order (fresh: entry numbers). */
struct jitlog_bytime {
	const struct jitlog_entry *e;
	const uint32_t *fresh;
};

static int jitlog_cmp_time(const void *a, const void *b, void *arg)
{
	const struct jitlog_bytime *c = arg;
	uint32_t i = c->fresh[*(const uint32_t *)a], j = c->fresh[*(const uint32_t *)b];
	if (c->e[i].t_load != c->e[j].t_load)
		return c->e[i].t_load < c->e[j].t_load ? -1 : 1;
	return i < j ? -1 : 1;
}

/* Entry a loaded before entry b (load time, then log order). */
static int jitlog_older(const struct jitlog *l, uint32_t a, uint32_t b)
{
	if (l->e[a].t_load != l->e[b].t_load)
		return l->e[a].t_load < l->e[b].t_load;
	return a < b;
}

static uint64_t jitlog_log2(size_t k)
{
	uint64_t r = 1;
	while (k >>= 1)
		r++;
	return r;
}

/* The set of sweep positions, three levels of 64-bit words: a bit of level
 * v + 1 is set when that word of level v is not zero. */
static size_t jitlog_bits_next(const struct jitlog *l, int v, size_t x)
{
	if (x >= l->pos_n[v])
		return JITLOG_NONE;
	const uint64_t *b = l->pos_bits[v];
	size_t w = x >> 6;
	uint64_t m = b[w] & (~0ull << (x & 63));
	if (m)
		return (w << 6) + (size_t)__builtin_ctzll(m);
	if (v == 2) {
		for (w++; w < (l->pos_n[2] + 63) / 64; w++)
			if (b[w])
				return (w << 6) + (size_t)__builtin_ctzll(b[w]);
		return JITLOG_NONE;
	}
	size_t up = jitlog_bits_next(l, v + 1, w + 1);
	return up == JITLOG_NONE ? up : (up << 6) + (size_t)__builtin_ctzll(b[up]);
}

static size_t jitlog_bits_prev(const struct jitlog *l, int v, size_t x)
{
	if (x == JITLOG_NONE)
		return JITLOG_NONE;
	const uint64_t *b = l->pos_bits[v];
	size_t w = x >> 6;
	uint64_t m = b[w] & (~0ull >> (63 - (x & 63)));
	if (m)
		return (w << 6) + 63 - (size_t)__builtin_clzll(m);
	if (w == 0)
		return JITLOG_NONE;
	if (v == 2) {
		while (w-- > 0)
			if (b[w])
				return (w << 6) + 63 - (size_t)__builtin_clzll(b[w]);
		return JITLOG_NONE;
	}
	size_t up = jitlog_bits_prev(l, v + 1, w - 1);
	return up == JITLOG_NONE ? up : (up << 6) + 63 - (size_t)__builtin_clzll(b[up]);
}

static void jitlog_bits_set(struct jitlog *l, size_t p)
{
	for (int v = 0; v < 3; v++, p >>= 6)
		l->pos_bits[v][p >> 6] |= 1ull << (p & 63);
}

static void jitlog_bits_clear(struct jitlog *l, size_t p)
{
	for (int v = 0; v < 3; v++, p >>= 6) {
		l->pos_bits[v][p >> 6] &= ~(1ull << (p & 63));
		if (l->pos_bits[v][p >> 6])
			break;
	}
}

static int jitlog_is_open(const struct jitlog *l, uint32_t i)
{
	return (int)(l->open[i >> 6] >> (i & 63)) & 1;
}

/* The sweep set by position in order, from the entries still open. */
static int jitlog_bits_build(struct jitlog *l)
{
	size_t n = l->n;
	for (int v = 0; v < 3; v++) {
		free(l->pos_bits[v]);
		l->pos_n[v] = n;
		l->pos_bits[v] = calloc((n + 63) / 64, sizeof(uint64_t));
		if (!l->pos_bits[v])
			return -ENOMEM;
		n = (n + 63) / 64;
	}
	for (size_t q = 0; q < l->n; q++)
		if (jitlog_is_open(l, l->order[q]))
			jitlog_bits_set(l, q);
	l->steps += l->n;
	return 0;
}

/* Entry i, at position p, against the newest code it overlaps: code older
 * than it ends where it was loaded and leaves the set; code newer than it
 * (i came late) ends it. Then i joins the set unless ended. */
static void jitlog_sweep(struct jitlog *l, uint32_t i, size_t p)
{
	struct jitlog_entry *b = &l->e[i];
	int ended = 0;
	size_t budget = SIZE_MAX; /* in load order each step removes an entry */
	if (l->swept_any &&
	    (b->t_load < l->front_t || (b->t_load == l->front_t && i < l->front_i))) {
		l->late++;
		budget = JITLOG_LATE_STEPS; /* newer code is not removed: a bounded look */
	}
	size_t q = p ? jitlog_bits_prev(l, 0, p - 1) : JITLOG_NONE;
	if (q != JITLOG_NONE) {
		const struct jitlog_entry *a = &l->e[l->order[q]];
		if (a->start + a->size <= b->start)
			q = JITLOG_NONE;
	}
	if (q == JITLOG_NONE)
		q = jitlog_bits_next(l, 0, p + 1);
	while (q != JITLOG_NONE && l->e[l->order[q]].start < b->start + b->size && budget--) {
		uint32_t a = l->order[q];
		l->steps++;
		if (jitlog_older(l, a, i)) {
			if (b->t_load < l->e[a].t_end)
				l->e[a].t_end = b->t_load;
			jitlog_bits_clear(l, q);
			l->open[a >> 6] &= ~(1ull << (a & 63));
		} else {
			if (l->e[a].t_load < b->t_end)
				b->t_end = l->e[a].t_load;
			ended = 1;
		}
		q = jitlog_bits_next(l, 0, q + 1);
	}
	if (!ended) {
		jitlog_bits_set(l, p);
		l->open[i >> 6] |= 1ull << (i & 63);
	}
	if (!l->swept_any || jitlog_older(l, l->front_i, i)) {
		l->front_t = b->t_load;
		l->front_i = i;
		l->swept_any = 1;
	}
}

/* ---- the address cache --------------------------------------------------- */

static size_t jitlog_cache_slot(const struct jitlog *l, uint64_t addr)
{
	uint64_t h = (addr ^ l->seed) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32) & (l->cache_slots - 1);
}

/* Does one of the k new entries fresh (sorted by start) contain addr? */
static int jitlog_fresh_has(const struct jitlog *l, const uint32_t *fresh, const uint64_t *fmax,
			    size_t k, uint64_t addr)
{
	size_t lo = 0, hi = k; /* the first new entry starting after addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->e[fresh[mid]].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && fmax[lo - 1] > addr;
}

/* After k entries fresh (sorted by start) were indexed: empty the slots
 * of the addresses they contain (their lookups may name them now), and
 * size the cache to the log (a resize starts it empty). */
static void jitlog_cache_update(struct jitlog *l, const uint32_t *fresh, size_t k)
{
	size_t want = l->cache_off ? 0 : JITLOG_CACHE_SLOTS_MAX;
	while (want > 1024 && want / 2 >= l->n / JITLOG_CACHE_PER_SLOTS)
		want /= 2;
	if (want != l->cache_slots) {
		size_t had = l->cache_slots * sizeof(*l->cache), need = want * sizeof(*l->cache);
		size_t m = jitlog_memory(l) - had;
		free(l->cache);
		l->cache = NULL;
		l->cache_slots = 0;
		l->cache_used = 0;
		if (m < l->limit && l->limit - m >= need &&
		    (l->cache = calloc(want, sizeof(*l->cache))))
			l->cache_slots = want;
		return;
	}
	if (!l->cache_used)
		return;
	cleanup_free uint64_t *fmax = malloc(k * sizeof(*fmax));
	if (!fmax) { /* cannot tell which: forget them all */
		memset(l->cache, 0, l->cache_slots * sizeof(*l->cache));
		l->cache_used = 0;
		return;
	}
	uint64_t m = 0;
	for (size_t i = 0; i < k; i++) {
		const struct jitlog_entry *x = &l->e[fresh[i]];
		if (x->start + x->size > m)
			m = x->start + x->size;
		fmax[i] = m;
	}
	for (size_t s = 0; s < l->cache_slots; s++) {
		struct jitlog_cached *c = &l->cache[s];
		if (c->addr && jitlog_fresh_has(l, fresh, fmax, k, c->addr)) {
			c->addr = 0;
			l->cache_used--;
			l->cache_dropped++;
		}
	}
	l->steps += l->cache_slots + k;
}

int jitlog_index(struct jitlog *l)
{
	size_t old = l->indexed, k = l->n - old;
	if (k == 0)
		return 0;
	uint32_t *order = reallocarray(l->order, l->n, sizeof(*order));
	if (!order)
		return -ENOMEM;
	l->order = order;
	uint64_t *maxend = reallocarray(l->maxend, l->n, sizeof(*maxend));
	if (!maxend)
		return -ENOMEM;
	l->maxend = maxend;
	size_t words = (l->n + 63) / 64, had = (old + 63) / 64;
	uint64_t *open = reallocarray(l->open, words, sizeof(*open));
	if (!open)
		return -ENOMEM;
	memset(open + had, 0, (words - had) * sizeof(*open));
	l->open = open;
	cleanup_free uint32_t *fresh = malloc(k * sizeof(*fresh));
	cleanup_free uint32_t *bytime = malloc(k * sizeof(*bytime));
	cleanup_free size_t *pos = malloc(k * sizeof(*pos));
	if (!fresh || !pos || !bytime)
		return -ENOMEM;
	for (size_t i = 0; i < k; i++) {
		fresh[i] = (uint32_t)(old + i);
		bytime[i] = (uint32_t)i;
	}
	qsort_r(fresh, k, sizeof(*fresh), jitlog_cmp, l->e);
	l->steps += k * jitlog_log2(k);
	/* merge from the back, in place: order[0, old) and fresh */
	size_t a = old, b = k, w = l->n;
	while (b > 0) {
		if (a > 0 && jitlog_cmp(&order[a - 1], &fresh[b - 1], l->e) > 0) {
			order[--w] = order[--a];
		} else {
			order[--w] = fresh[--b];
			pos[b] = w;
		}
	}
	uint64_t m = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct jitlog_entry *x = &l->e[order[i]];
		if (x->start + x->size > m)
			m = x->start + x->size;
		maxend[i] = m;
	}
	l->steps += 2 * l->n;
	l->indexed = l->n;
	jitlog_cache_update(l, fresh, k);
	/* the overlaps, in load order */
	if (l->sweep_off || jitlog_stopped(l) || l->steps > JITLOG_MAX_WORK) {
		l->sweep_off = 1;
		l->unsettled += k;
		return 0;
	}
	struct jitlog_bytime c = {l->e, fresh};
	qsort_r(bytime, k, sizeof(*bytime), jitlog_cmp_time, &c);
	l->steps += k * jitlog_log2(k);
	if (jitlog_bits_build(l) < 0)
		return -ENOMEM;
	for (size_t j = 0; j < k; j++) {
		if (j % JITLOG_CHECK_EVERY == 0 &&
		    (jitlog_stopped(l) || l->steps > JITLOG_MAX_WORK)) {
			l->sweep_off = 1;
			l->unsettled += k - j;
			break;
		}
		jitlog_sweep(l, fresh[bytime[j]], pos[bytime[j]]);
	}
	return 0;
}

const char *jitlog_lookup(const struct jitlog *l, uint64_t addr, uint64_t t)
{
	const struct jitlog_entry *e = jitlog_lookup_entry(l, addr, t);
	return e ? l->names + e->name : NULL;
}

/* Of x (met in the walk after best), the better answer at time t: the
 * nearest in time (0: valid at t), the newer on a tie. */
static int jitlog_better(const struct jitlog *l, const struct jitlog_entry *x, uint64_t t,
			 const struct jitlog_entry *best, uint64_t *best_dist)
{
	uint64_t dist, t_end = jitlog_entry_end(l, x);
	if (t < x->t_load)
		dist = x->t_load - t;
	else if (t >= t_end)
		dist = t - t_end + 1;
	else
		dist = 0;
	if (dist < *best_dist || (dist == *best_dist && best && x->t_load > best->t_load)) {
		*best_dist = dist;
		return 1;
	}
	return 0;
}

const struct jitlog_entry *jitlog_lookup_entry(const struct jitlog *l, uint64_t addr, uint64_t t)
{
	size_t n = l->indexed;
	if (!n || addr < l->e[l->order[0]].start)
		return NULL;
	struct jitlog *count = (struct jitlog *)l; /* never a const object */
	const struct jitlog_entry *best = NULL;
	uint64_t best_dist = UINT64_MAX;
	/* address 0 marks a free slot: never cached */
	struct jitlog_cached *c =
	    l->cache_slots && addr ? &l->cache[jitlog_cache_slot(l, addr)] : NULL;
	if (c && c->addr == addr) {
		for (uint32_t i = 0; i < c->n; i++) {
			const struct jitlog_entry *x = &l->e[c->cand[i]];
			if (jitlog_better(l, x, t, best, &best_dist))
				best = x;
		}
		count->lookup_steps += c->n + 1;
		count->cache_hits++;
		return best;
	}
	size_t lo = 0, hi = n; /* the last entry starting at or before addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->e[l->order[mid]].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	size_t steps = 0, max = JITLOG_MAX_STEPS, nc = 0;
	uint32_t cand[JITLOG_CACHE_CANDS];
	int whole = 1; /* every entry containing addr was met */
	if (l->lookup_steps >= l->lookup_budget)
		max = JITLOG_LATE_LOOKUP_STEPS;
	size_t q = lo + 1;
	for (; q-- > 0; steps++) {
		if (steps == max) {
			whole = 0;
			break;
		}
		if (l->maxend[q] <= addr)
			break; /* nothing at or before q reaches addr */
		const struct jitlog_entry *x = &l->e[l->order[q]];
		if (addr - x->start >= x->size)
			continue;
		if (nc < JITLOG_CACHE_CANDS)
			cand[nc] = l->order[q];
		nc++;
		if (jitlog_better(l, x, t, best, &best_dist))
			best = x;
	}
	count->lookup_steps += steps;
	count->cache_misses++;
	if (!whole && max == JITLOG_LATE_LOOKUP_STEPS)
		count->lookups_cut++;
	if (c && whole && nc <= JITLOG_CACHE_CANDS) {
		if (!c->addr)
			count->cache_used++;
		c->addr = addr;
		c->n = (uint32_t)nc;
		memcpy(c->cand, cand, nc * sizeof(*cand));
	}
	return best;
}

int jitlog_perfmap_text(const struct jitlog *l, char **out, size_t *len)
{
	size_t cap = l->names_len + l->n * 36 + 1, used = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		const struct jitlog_entry *x = &l->e[i];
		if (jitlog_entry_end(l, x) != UINT64_MAX)
			continue;
		used += (size_t)snprintf(buf + used, cap - used, "%" PRIx64 " %" PRIx64 " %s\n",
					 x->start, x->size, l->names + x->name);
	}
	*out = buf;
	*len = used;
	return 0;
}

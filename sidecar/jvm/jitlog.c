/* jitlog.c - see jitlog.h */
#include "jitlog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap.h"

/* One load event: its code's start, the method id the agent gave it (the
 * unload event names both) and its entries [first, first + count). */
struct jitlog_load {
	uint64_t start, mid;
	uint32_t first, count;
};

void jitlog_init(struct jitlog *l, int64_t clock_offset)
{
	memset(l, 0, sizeof(*l));
	l->clock_offset = clock_offset;
}

void jitlog_release(struct jitlog *l)
{
	free(l->e);
	free(l->names);
	free(l->loads);
	free(l->slots);
	free(l->carry);
	free(l->order);
	free(l->maxend);
	jitlog_init(l, l->clock_offset);
}

size_t jitlog_memory(const struct jitlog *l)
{
	return l->cap * sizeof(*l->e) + l->names_cap + l->loads_cap * sizeof(*l->loads) +
	       l->slots_cap * sizeof(*l->slots) + l->carry_len +
	       l->indexed * (sizeof(*l->order) + sizeof(*l->maxend));
}

size_t jitlog_entries(const struct jitlog *l)
{
	return l->n;
}

size_t jitlog_loads(const struct jitlog *l)
{
	return l->nloads;
}

/* ---- parsing ------------------------------------------------------------- */

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
 * space or the end of the line. */
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

static size_t jitlog_slot(const struct jitlog *l, uint64_t start, uint64_t mid)
{
	uint64_t h = (start ^ (mid * 0x9E3779B97F4A7C15ull)) * 0xff51afd7ed558ccdull;
	return (size_t)(h >> 17) & (l->slots_cap - 1);
}

static int jitlog_rehash(struct jitlog *l)
{
	size_t cap = l->slots_cap ? l->slots_cap * 2 : 1024;
	uint32_t *s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	free(l->slots);
	l->slots = s;
	l->slots_cap = cap;
	for (size_t i = 0; i < l->nloads; i++) {
		size_t j = jitlog_slot(l, l->loads[i].start, l->loads[i].mid);
		while (l->slots[j])
			j = (j + 1) & (cap - 1);
		l->slots[j] = (uint32_t)i + 1;
	}
	return 0;
}

/* The newest load of (start, mid), or NULL. */
static struct jitlog_load *jitlog_find_load(struct jitlog *l, uint64_t start, uint64_t mid)
{
	if (!l->slots_cap)
		return NULL;
	for (size_t j = jitlog_slot(l, start, mid); l->slots[j]; j = (j + 1) & (l->slots_cap - 1)) {
		struct jitlog_load *ld = &l->loads[l->slots[j] - 1];
		if (ld->start == start && ld->mid == mid)
			return ld;
	}
	return NULL;
}

static int jitlog_add_load(struct jitlog *l, uint64_t start, uint64_t mid)
{
	if (l->nloads == l->loads_cap) {
		size_t cap = l->loads_cap ? l->loads_cap * 2 : 1024;
		struct jitlog_load *p = reallocarray(l->loads, cap, sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->loads = p;
		l->loads_cap = cap;
	}
	if ((l->nloads + 1) * 2 > l->slots_cap && jitlog_rehash(l) < 0)
		return -ENOMEM;
	l->loads[l->nloads] = (struct jitlog_load){start, mid, (uint32_t)l->n, 0};
	size_t j = jitlog_slot(l, start, mid);
	for (; l->slots[j]; j = (j + 1) & (l->slots_cap - 1)) {
		struct jitlog_load *ld = &l->loads[l->slots[j] - 1];
		if (ld->start == start && ld->mid == mid)
			break; /* the same code again: the newest one answers */
	}
	l->slots[j] = (uint32_t)l->nloads + 1;
	l->nloads++;
	return 0;
}

static int jitlog_add_entry(struct jitlog *l, uint64_t start, uint64_t size, const char *name,
			    size_t name_len)
{
	if (l->n >= JITLOG_MAX_ENTRIES)
		return -E2BIG;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4096;
		struct jitlog_entry *p = reallocarray(l->e, cap, sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->e = p;
		l->cap = cap;
	}
	if (l->names_len + name_len + 1 > l->names_cap) {
		size_t cap = l->names_cap ? l->names_cap * 2 : 1u << 16;
		while (cap < l->names_len + name_len + 1)
			cap *= 2;
		char *p = realloc(l->names, cap);
		if (!p)
			return -ENOMEM;
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
					   .sp_only = (uint8_t)(l->cur_open && l->cur_sp_only)};
	l->names_len += name_len + 1;
	if (l->cur_open)
		l->loads[l->nloads - 1].count++;
	l->n++;
	return 0;
}

/* "-T START MID": end every entry of that load at T. */
static void jitlog_unload(struct jitlog *l, uint64_t t, uint64_t start, uint64_t mid)
{
	struct jitlog_load *ld = jitlog_find_load(l, start, mid);
	l->unloads++;
	if (!ld) {
		l->unmatched++;
		return;
	}
	for (uint32_t i = ld->first; i < ld->first + ld->count && i < l->n; i++)
		if (t < l->e[i].t_end && t >= l->e[i].t_load)
			l->e[i].t_end = t;
}

/* "!s" (the current load's debug info is safepoint-only) or
 * "!nonsafepoints TEXT" (the flag's state, kept in printable ASCII). */
static int jitlog_mark(struct jitlog *l, const char *s, const char *end)
{
	static const char status[] = "nonsafepoints ";
	size_t n = (size_t)(end - s);
	if (n == 1 && *s == 's') {
		if (l->cur_open)
			l->cur_sp_only = 1;
		return 0;
	}
	if (n > sizeof(status) - 1 && memcmp(s, status, sizeof(status) - 1) == 0) {
		s += sizeof(status) - 1;
		n = (size_t)(end - s);
		if (n >= sizeof(l->nonsafepoints))
			n = sizeof(l->nonsafepoints) - 1;
		for (size_t i = 0; i < n; i++)
			l->nonsafepoints[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
		l->nonsafepoints[n] = '\0';
		return 0;
	}
	l->skipped++;
	return 0;
}

/* One complete line without its '\n'. 0, or -ENOMEM / -E2BIG. */
static int jitlog_line(struct jitlog *l, const char *s, size_t len)
{
	const char *end = s + len;
	uint64_t t, start, size, mid;
	l->lines++;
	if (len && end[-1] == '\r')
		end--;
	if (len > PERFMAP_MAX_LINE || memchr(s, '\0', (size_t)(end - s)))
		goto skip;
	if (s < end && *s == '!')
		return jitlog_mark(l, s + 1, end);
	if (s < end && (*s == '@' || *s == '-')) {
		char kind = *s++;
		if (jitlog_num(&s, end, 10, &t) < 0 || jitlog_num(&s, end, 16, &start) < 0)
			goto skip;
		if (kind == '-') {
			if (jitlog_num(&s, end, 16, &mid) < 0 || s != end)
				goto skip;
			jitlog_unload(l, jitlog_time(l, t), start, mid);
			return 0;
		}
		if (jitlog_num(&s, end, 16, &size) < 0 || jitlog_num(&s, end, 16, &mid) < 0 ||
		    s != end || size == 0 || start > UINT64_MAX - size)
			goto skip;
		l->cur_open = 0;
		int r = jitlog_add_load(l, start, mid);
		if (r < 0)
			return r;
		l->cur_open = 1;
		l->cur_sp_only = 0;
		l->cur_t = jitlog_time(l, t);
		l->cur_start = start;
		l->cur_end = start + size;
		return 0;
	}
	if (jitlog_num(&s, end, 16, &start) < 0 || jitlog_num(&s, end, 16, &size) < 0 || s == end ||
	    size == 0 || start > UINT64_MAX - size)
		goto skip;
	/* A line of the current load lies inside its code; anything else is a
	 * plain perf map line, valid for the whole window. */
	if (l->cur_open && (start < l->cur_start || start + size > l->cur_end))
		l->cur_open = 0;
	return jitlog_add_entry(l, start, size, s, (size_t)(end - s));
skip:
	l->skipped++;
	return 0;
}

int jitlog_feed(struct jitlog *l, const char *buf, size_t len, struct fs_error *err)
{
	if (len > JITLOG_MAX_BYTES - l->bytes)
		return fs_error_set(err, E2BIG, "JIT log over the %lu MiB limit",
				    JITLOG_MAX_BYTES >> 20);
	l->bytes += len;
	const char *p = buf, *end = buf + len;
	int r = 0;
	if (l->carry_len) {
		/* finish the line the last chunk ended in; carry holds it only
		 * while it is short enough to be parsed (carry_len is its length) */
		const char *nl = memchr(p, '\n', len);
		size_t take = nl ? (size_t)(nl - p) : len;
		size_t total = l->carry_len + take;
		if (total <= PERFMAP_MAX_LINE) {
			char *c = realloc(l->carry, total + 1);
			if (!c)
				return fs_error_set(err, ENOMEM, "reading the JIT log");
			l->carry = c;
			memcpy(l->carry + l->carry_len, p, take);
		}
		l->carry_len = total;
		if (!nl)
			return 0;
		if (total <= PERFMAP_MAX_LINE) {
			r = jitlog_line(l, l->carry, total);
		} else {
			l->lines++;
			l->skipped++;
		}
		l->carry_len = 0;
		p = nl + 1;
	}
	while (r == 0 && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			size_t rest = (size_t)(end - p);
			if (rest <= PERFMAP_MAX_LINE) {
				char *c = realloc(l->carry, rest + 1);
				if (!c)
					return fs_error_set(err, ENOMEM, "reading the JIT log");
				l->carry = c;
				memcpy(c, p, rest);
			}
			l->carry_len = rest;
			break;
		}
		r = jitlog_line(l, p, (size_t)(nl - p));
		p = nl + 1;
	}
	if (r == -E2BIG)
		return fs_error_set(err, E2BIG, "JIT log over %lu entries", JITLOG_MAX_ENTRIES);
	if (r < 0)
		return fs_error_set(err, -r, "reading the JIT log");
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

/* Entry a loaded before entry b (load time, then log order). */
static int jitlog_older(const struct jitlog *l, uint32_t a, uint32_t b)
{
	if (l->e[a].t_load != l->e[b].t_load)
		return l->e[a].t_load < l->e[b].t_load;
	return a < b;
}

/* Newer code over older code: the older ends where the newer was loaded. */
static void jitlog_overlap(struct jitlog *l, uint32_t a, uint32_t b)
{
	struct jitlog_entry *x = &l->e[a], *y = &l->e[b];
	if (a == b || x->start >= y->start + y->size || y->start >= x->start + x->size)
		return;
	if (!jitlog_older(l, a, b)) {
		uint32_t t = a;
		a = b;
		b = t;
	}
	if (l->e[b].t_load < l->e[a].t_end)
		l->e[a].t_end = l->e[b].t_load;
}

/* New entry at sorted position p: end whatever it overlaps. */
static void jitlog_settle(struct jitlog *l, size_t p)
{
	uint32_t i = l->order[p];
	const struct jitlog_entry *x = &l->e[i];
	size_t steps = 0;
	for (size_t q = p; q-- > 0 && steps < JITLOG_MAX_STEPS; steps++) {
		if (l->maxend[q] <= x->start)
			break;
		jitlog_overlap(l, l->order[q], i);
	}
	for (size_t q = p + 1; q < l->n && steps < 2 * JITLOG_MAX_STEPS; q++, steps++) {
		if (l->e[l->order[q]].start >= x->start + x->size)
			break;
		jitlog_overlap(l, l->order[q], i);
	}
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
	uint32_t *fresh = malloc(k * sizeof(*fresh));
	size_t *pos = malloc(k * sizeof(*pos));
	if (!fresh || !pos) {
		free(fresh);
		free(pos);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k; i++)
		fresh[i] = (uint32_t)(old + i);
	qsort_r(fresh, k, sizeof(*fresh), jitlog_cmp, l->e);
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
	for (size_t i = 0; i < k; i++)
		jitlog_settle(l, pos[i]);
	free(fresh);
	free(pos);
	l->indexed = l->n;
	return 0;
}

const char *jitlog_lookup(const struct jitlog *l, uint64_t addr, uint64_t t)
{
	const struct jitlog_entry *e = jitlog_lookup_entry(l, addr, t);
	return e ? l->names + e->name : NULL;
}

const struct jitlog_entry *jitlog_lookup_entry(const struct jitlog *l, uint64_t addr, uint64_t t)
{
	size_t n = l->indexed;
	if (!n || addr < l->e[l->order[0]].start)
		return NULL;
	size_t lo = 0, hi = n; /* the last entry starting at or before addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->e[l->order[mid]].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	const struct jitlog_entry *best = NULL;
	uint64_t best_dist = UINT64_MAX;
	size_t steps = 0;
	for (size_t q = lo + 1; q-- > 0 && steps < JITLOG_MAX_STEPS; steps++) {
		if (l->maxend[q] <= addr)
			break; /* nothing at or before q reaches addr */
		const struct jitlog_entry *x = &l->e[l->order[q]];
		if (addr - x->start >= x->size)
			continue;
		uint64_t dist;
		if (t < x->t_load)
			dist = x->t_load - t;
		else if (t >= x->t_end)
			dist = t - x->t_end + 1;
		else
			dist = 0;
		if (dist < best_dist || (dist == best_dist && best && x->t_load > best->t_load)) {
			best = x;
			best_dist = dist;
		}
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
		if (x->t_end != UINT64_MAX)
			continue;
		used += (size_t)snprintf(buf + used, cap - used, "%" PRIx64 " %" PRIx64 " %s\n",
					 x->start, x->size, l->names + x->name);
	}
	*out = buf;
	*len = used;
	return 0;
}

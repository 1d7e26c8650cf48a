/* hot.c - the hottest frames of a fold table: see hot.h */
#include "hot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct hot_table {
	struct hot_frame *v; /* open addressing by name */
	uint64_t *stamp;     /* last stack that counted this frame's total */
	size_t cap, n;
	uint64_t stack;
};

static uint64_t hot_name_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int hot_grow(struct hot_table *h)
{
	size_t ncap = h->cap ? h->cap * 2 : 1024;
	struct hot_frame *nv = calloc(ncap, sizeof(*nv));
	uint64_t *ns = calloc(ncap, sizeof(*ns));
	if (!nv || !ns) {
		free(nv);
		free(ns);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->cap; i++) {
		if (!h->v[i].name)
			continue;
		size_t j = hot_name_hash(h->v[i].name, strlen(h->v[i].name)) & (ncap - 1);
		while (nv[j].name)
			j = (j + 1) & (ncap - 1);
		nv[j] = h->v[i];
		ns[j] = h->stamp[i];
	}
	free(h->v);
	free(h->stamp);
	h->v = nv;
	h->stamp = ns;
	h->cap = ncap;
	return 0;
}

static int hot_add(struct hot_table *h, const char *name, size_t len, uint64_t count, int leaf)
{
	if ((h->n + 1) * 2 > h->cap && hot_grow(h) < 0)
		return -ENOMEM;
	size_t mask = h->cap - 1, i = hot_name_hash(name, len) & mask;
	for (; h->v[i].name; i = (i + 1) & mask)
		if (!strncmp(h->v[i].name, name, len) && h->v[i].name[len] == '\0')
			break;
	struct hot_frame *f = &h->v[i];
	if (!f->name) {
		char *s = strndup(name, len);
		if (!s)
			return -ENOMEM;
		f->name = s;
		h->n++;
	}
	if (h->stamp[i] != h->stack) { /* recursion counts once per stack */
		h->stamp[i] = h->stack;
		f->total += count;
	}
	if (leaf)
		f->self += count;
	return 0;
}

static int hot_stack(const char *stack, size_t len, uint64_t count, void *arg)
{
	struct hot_table *h = arg;
	h->stack++;
	const char *end = stack + len, *s = memchr(stack, ';', len);
	if (!s)
		return 0; /* only the process name */
	for (s++; s <= end;) {
		const char *e = memchr(s, ';', (size_t)(end - s));
		if (!e)
			e = end;
		if (e > s && hot_add(h, s, (size_t)(e - s), count, e == end) < 0)
			return -ENOMEM;
		s = e + 1;
	}
	return 0;
}

static int hot_by_self(const void *a, const void *b)
{
	const struct hot_frame *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int hot_by_total(const void *a, const void *b)
{
	const struct hot_frame *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return strcmp(x->name, y->name);
}

int hot_frames(const struct fold *f, int by_total, size_t max, struct hot_frame **out, size_t *n)
{
	struct hot_table h = {0};
	*out = NULL;
	*n = 0;
	int r = fold_foreach(f, hot_stack, &h);
	size_t k = 0;
	for (size_t i = 0; i < h.cap; i++)
		if (h.v[i].name)
			h.v[k++] = h.v[i];
	free(h.stamp);
	if (r < 0) {
		hot_frames_free(h.v, k);
		return -ENOMEM;
	}
	if (k > 1)
		qsort(h.v, k, sizeof(*h.v), by_total ? hot_by_total : hot_by_self);
	/* Sorted descending: cut where the sort key reaches 0. A frame that was
	 * never a leaf (self 0), or a stack added with count 0, is not a hot
	 * frame and is never listed with 0 samples. */
	size_t keep = 0;
	while (keep < k && (by_total ? h.v[keep].total : h.v[keep].self) > 0)
		keep++;
	if (!max || max > keep)
		max = keep;
	if (k > max) {
		for (size_t i = max; i < k; i++)
			free((char *)h.v[i].name);
		k = max;
	}
	*out = h.v;
	*n = k;
	return 0;
}

void hot_frames_free(struct hot_frame *fr, size_t n)
{
	if (!fr)
		return;
	for (size_t i = 0; i < n; i++)
		free((char *)fr[i].name);
	free(fr);
}

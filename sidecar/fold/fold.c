/* fold.c - see fold.h.
 *
 * Open addressing with linear probing over 32-byte slots that keep the
 * full 64-bit hash (so a probe rarely touches a key), keys copied once
 * into arena chunks. The table doubles at 5/8 load.
 */
#include "fold.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

#define FOLD_INITIAL_SLOTS 1024u
#define FOLD_CHUNK_SIZE	   (1u << 20)
#define FOLD_MIN_CHUNK	   (16u << 10)

struct fold_slot {
	uint64_t hash; /* 0 = empty (real hashes are forced non-zero) */
	const char *key;
	uint64_t count;
	uint32_t len;
	uint32_t pad;
};

struct fold_chunk {
	struct fold_chunk *next;
	size_t used, size;
	char data[];
};

struct fold {
	struct fold_slot *slots;
	size_t mask; /* slots - 1, slots a power of two */
	size_t used;
	uint64_t total;
	struct fold_chunk *chunks;
	size_t memory; /* bytes of slots and chunks */
	size_t budget; /* 0: none */
	size_t chunk;  /* arena chunk size (smaller under a small budget) */
};

static inline uint64_t fold_load64(const char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t fold_mix(uint64_t a, uint64_t b)
{
	unsigned __int128 r = (unsigned __int128)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* A multiply-fold hash, 16 bytes per step. Not cryptographic: the table
 * degrades gracefully (longer probes) on adversarial keys, it never fails. */
static uint64_t fold_hash_bytes(const char *p, size_t n)
{
	const uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL;
	const uint64_t k2 = 0x8ebc6af09c88c6e3ULL;
	uint64_t h = k2 ^ (n * k0);
	size_t i = 0;

	for (; i + 16 <= n; i += 16)
		h = fold_mix(fold_load64(p + i) ^ k0 ^ h, fold_load64(p + i + 8) ^ k1);
	if (n - i >= 8) {
		h = fold_mix(fold_load64(p + i) ^ k0 ^ h, fold_load64(p + n - 8) ^ k1);
	} else if (n - i > 0) {
		uint64_t a = 0, b = 0;
		size_t r = n - i;
		for (size_t j = 0; j < r; j++)
			a |= (uint64_t)(unsigned char)p[i + j] << (8 * j);
		b = (uint64_t)(unsigned char)p[i] << 56 | r;
		h = fold_mix(a ^ k0 ^ h, b ^ k1);
	}
	h = fold_mix(h ^ k2, n ^ k1);
	return h ? h : 1;
}

struct fold *fold_new(void)
{
	struct fold *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->slots = calloc(FOLD_INITIAL_SLOTS, sizeof(*f->slots));
	if (!f->slots) {
		free(f);
		return NULL;
	}
	f->mask = FOLD_INITIAL_SLOTS - 1;
	f->memory = FOLD_INITIAL_SLOTS * sizeof(*f->slots);
	f->chunk = FOLD_CHUNK_SIZE;
	return f;
}

void fold_set_budget(struct fold *f, size_t bytes)
{
	f->budget = bytes;
	f->chunk = FOLD_CHUNK_SIZE;
	/* a chunk is at most an eighth of the budget, so a small budget is
	 * mostly keys, not one half-empty chunk */
	while (bytes && f->chunk > FOLD_MIN_CHUNK && f->chunk > bytes / 8)
		f->chunk /= 2;
}

size_t fold_memory(const struct fold *f)
{
	return f->memory;
}

/* Would n more bytes go past the budget? (force: the caller bounds it) */
static int fold_over(const struct fold *f, size_t n, int force)
{
	return !force && f->budget && (f->memory > f->budget || n > f->budget - f->memory);
}

void fold_free(struct fold *f)
{
	if (!f)
		return;
	struct fold_chunk *c = f->chunks;
	while (c) {
		struct fold_chunk *next = c->next;
		free(c);
		c = next;
	}
	free(f->slots);
	free(f);
}

/* NULL and *e (-ENOMEM, or -ENOSPC past the budget) when it cannot. */
static char *fold_store_key(struct fold *f, const char *key, size_t len, int force, int *e)
{
	struct fold_chunk *c = f->chunks;
	if (!c || c->size - c->used < len) {
		size_t size = len > f->chunk / 4 ? len : f->chunk;
		*e = -ENOSPC;
		if (fold_over(f, sizeof(*c) + size, force))
			return NULL;
		*e = -ENOMEM;
		struct fold_chunk *n = malloc(sizeof(*n) + size);
		if (!n)
			return NULL;
		f->memory += sizeof(*n) + size;
		n->size = size;
		n->used = 0;
		if (c && size == len) {
			/* a big key gets its own chunk; keep filling the current one */
			n->next = c->next;
			c->next = n;
		} else {
			n->next = c;
			f->chunks = n;
		}
		c = n;
	}
	char *dst = c->data + c->used;
	memcpy(dst, key, len);
	c->used += len;
	return dst;
}

static int fold_grow(struct fold *f, int force)
{
	size_t nslots = (f->mask + 1) * 2;
	/* both arrays live while rehashing */
	if (fold_over(f, nslots * sizeof(struct fold_slot), force))
		return -ENOSPC;
	struct fold_slot *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i <= f->mask; i++) {
		struct fold_slot *s = &f->slots[i];
		if (!s->hash)
			continue;
		size_t j = s->hash & (nslots - 1);
		while (slots[j].hash)
			j = (j + 1) & (nslots - 1);
		slots[j] = *s;
	}
	free(f->slots);
	f->memory += (nslots - (f->mask + 1)) * sizeof(*slots);
	f->slots = slots;
	f->mask = nslots - 1;
	return 0;
}

static struct fold_slot *fold_lookup(const struct fold *f, const char *stack, size_t len,
				     uint64_t h)
{
	size_t i = h & f->mask;
	for (;;) {
		struct fold_slot *s = &f->slots[i];
		if (!s->hash || (s->hash == h && s->len == len && !memcmp(s->key, stack, len)))
			return s;
		i = (i + 1) & f->mask;
	}
}

static inline uint64_t fold_sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static int fold_add_one(struct fold *f, const char *stack, size_t len, uint64_t count, int force)
{
	if (len > FOLD_STACK_MAX)
		return -E2BIG;
	uint64_t h = fold_hash_bytes(stack, len);
	struct fold_slot *s = fold_lookup(f, stack, len, h);
	if (s->hash) {
		s->count = fold_sat_add(s->count, count);
		f->total = fold_sat_add(f->total, count);
		return 0;
	}
	if ((f->used + 1) * 8 > (f->mask + 1) * 5) {
		/* A forced add (the few stacks standing for the refused ones)
		 * fills the table past its load factor rather than doubling it
		 * past the budget; it grows only when no slot would be left. */
		int r = fold_grow(f, 0);
		if (r == -ENOSPC && force)
			r = f->used + 2 > f->mask + 1 ? fold_grow(f, 1) : 1;
		if (r < 0)
			return r;
		if (r == 0)
			s = fold_lookup(f, stack, len, h);
	}
	int e = 0;
	const char *key = fold_store_key(f, stack, len, force, &e);
	if (!key)
		return e;
	s->hash = h;
	s->key = key;
	s->len = (uint32_t)len;
	s->count = count;
	f->used++;
	f->total = fold_sat_add(f->total, count);
	return 0;
}

int fold_add(struct fold *f, const char *stack, size_t len, uint64_t count)
{
	return fold_add_one(f, stack, len, count, 0);
}

int fold_add_over(struct fold *f, const char *stack, size_t len, uint64_t count)
{
	return fold_add_one(f, stack, len, count, 1);
}

size_t fold_count(const struct fold *f)
{
	return f->used;
}

uint64_t fold_total(const struct fold *f)
{
	return f->total;
}

uint64_t fold_get(const struct fold *f, const char *stack, size_t len)
{
	if (len > FOLD_STACK_MAX)
		return 0;
	const struct fold_slot *s = fold_lookup(f, stack, len, fold_hash_bytes(stack, len));
	return s->hash ? s->count : 0;
}

static int fold_cmp(const void *a, const void *b)
{
	const struct fold_slot *x = *(const struct fold_slot *const *)a;
	const struct fold_slot *y = *(const struct fold_slot *const *)b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->key, y->key, n);
	if (c)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

int fold_foreach(const struct fold *f, fold_fn fn, void *arg)
{
	if (!f->used)
		return 0;
	cleanup_free const struct fold_slot **idx = malloc(f->used * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i <= f->mask; i++)
		if (f->slots[i].hash)
			idx[n++] = &f->slots[i];
	qsort(idx, n, sizeof(*idx), fold_cmp);
	for (size_t i = 0; i < n; i++) {
		int r = fn(idx[i]->key, idx[i]->len, idx[i]->count, arg);
		if (r)
			return r;
	}
	return 0;
}

/* Decimal digits of v into the end of buf; returns the first digit. */
static char *fold_u64(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

static int fold_write_one(const char *stack, size_t len, uint64_t count, void *arg)
{
	FILE *out = arg;
	char num[24];
	char *end = num + sizeof(num);
	char *p = fold_u64(end - 1, count);
	end[-1] = '\n';
	*--p = ' ';
	if (fwrite_unlocked(stack, 1, len, out) != len ||
	    fwrite_unlocked(p, 1, (size_t)(end - p), out) != (size_t)(end - p))
		return errno ? -errno : -EIO;
	return 0;
}

int fold_write(const struct fold *f, FILE *out)
{
	int r = fold_foreach(f, fold_write_one, out);
	if (r)
		return r;
	if (fflush(out) == EOF || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

int fold_parse_line(const char *p, size_t len, const char **stack, size_t *stack_len,
		    uint64_t *count)
{
	const char *le = p + len;
	while (le > p && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t'))
		le--;
	if (le == p)
		return 0;
	const char *d = le;
	while (d > p && d[-1] >= '0' && d[-1] <= '9')
		d--;
	if (d == le || d == p || (d[-1] != ' ' && d[-1] != '\t'))
		return -EINVAL;
	uint64_t c = 0;
	for (const char *q = d; q < le; q++) {
		uint64_t next;
		if (__builtin_mul_overflow(c, 10, &next) ||
		    __builtin_add_overflow(next, (uint64_t)(*q - '0'), &next))
			next = UINT64_MAX;
		c = next;
	}
	const char *se = d - 1;
	while (se > p && (se[-1] == ' ' || se[-1] == '\t'))
		se--;
	*stack = p;
	*stack_len = (size_t)(se - p);
	*count = c;
	return 1;
}

int fold_parse(struct fold *f, const char *buf, size_t len, struct fs_error *err)
{
	size_t lineno = 0;
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *stack;
		size_t slen;
		uint64_t count;
		lineno++;
		int r = fold_parse_line(p, (size_t)(le - p), &stack, &slen, &count);
		if (r < 0)
			return fs_error_set(err, EINVAL,
					    "folded line %zu: no count at the end of the line",
					    lineno);
		if (r > 0 && (r = fold_add(f, stack, slen, count)) < 0)
			return fs_error_set(err, -r, "folded line %zu: adding stack", lineno);
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* symcache.c - see symcache.h */
#include "symcache.h"

#include <stdlib.h>
#include <string.h>

struct symcache_slot {
	uint64_t addr;
	uint64_t map_start;
	const void *file;
	uint32_t serial;
	uint32_t flags;			 /* the caller's flags, | SLOT_USED */
	uint32_t name, module, build_id; /* offsets in text, 0 = none */
	int32_t kind;
	int32_t resolved;
};

#define SLOT_USED 0x80000000u

struct symcache {
	struct symcache_slot *slots;
	char *text; /* text[0] == '\0': offset 0 is "none" */
	size_t text_len, used;
	struct symcache_stats st;
};

struct symcache *symcache_new(void)
{
	struct symcache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->slots = calloc(SYMCACHE_SLOTS, sizeof(*c->slots));
	c->text = malloc(SYMCACHE_BYTES);
	if (!c->slots || !c->text) {
		symcache_free(c);
		return NULL;
	}
	c->text[0] = '\0';
	c->text_len = 1;
	return c;
}

void symcache_free(struct symcache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c->text);
	free(c);
}

static size_t symcache_hash(uint32_t serial, uint64_t addr, unsigned flags)
{
	uint64_t h =
	    (addr ^ ((uint64_t)serial << 40) ^ ((uint64_t)flags << 36)) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32) & (SYMCACHE_SLOTS - 1);
}

/* Linear probing; a table at most 3/4 full always has a free slot. */
static struct symcache_slot *symcache_find(struct symcache *c, uint32_t serial, uint64_t addr,
					   unsigned flags)
{
	size_t i = symcache_hash(serial, addr, flags);
	for (;; i = (i + 1) & (SYMCACHE_SLOTS - 1)) {
		struct symcache_slot *s = &c->slots[i];
		if (!(s->flags & SLOT_USED) ||
		    (s->addr == addr && s->serial == serial && s->flags == (flags | SLOT_USED)))
			return s;
	}
}

int symcache_get(struct symcache *c, uint32_t serial, uint64_t addr, unsigned flags,
		 struct symcache_frame *f)
{
	const struct symcache_slot *s = symcache_find(c, serial, addr, flags);
	if (!(s->flags & SLOT_USED)) {
		c->st.misses++;
		return 0;
	}
	c->st.hits++;
	f->name = c->text + s->name;
	f->module = s->module ? c->text + s->module : NULL;
	f->build_id = s->build_id ? c->text + s->build_id : NULL;
	f->kind = s->kind;
	f->resolved = s->resolved;
	f->map_start = s->map_start;
	f->file = s->file;
	return 1;
}

static void symcache_flush(struct symcache *c)
{
	memset(c->slots, 0, SYMCACHE_SLOTS * sizeof(*c->slots));
	c->text_len = 1;
	c->used = 0;
	c->st.flushes++;
}

static uint32_t symcache_text(struct symcache *c, const char *s)
{
	if (!s)
		return 0;
	size_t n = strlen(s) + 1;
	if (c->text_len + n > SYMCACHE_BYTES)
		return UINT32_MAX;
	memcpy(c->text + c->text_len, s, n);
	c->text_len += n;
	return (uint32_t)(c->text_len - n);
}

void symcache_put(struct symcache *c, uint32_t serial, uint64_t addr, unsigned flags,
		  const struct symcache_frame *f)
{
	size_t need = strlen(f->name) + 3 + (f->module ? strlen(f->module) : 0) +
		      (f->build_id ? strlen(f->build_id) : 0);
	if (need > SYMCACHE_BYTES / 16)
		return; /* never worth a flush */
	if (c->used + 1 > SYMCACHE_SLOTS / 4 * 3 || c->text_len + need > SYMCACHE_BYTES)
		symcache_flush(c);
	struct symcache_slot *s = symcache_find(c, serial, addr, flags);
	if (!(s->flags & SLOT_USED))
		c->used++; /* else the same frame looked up again: replaced */
	uint32_t name = symcache_text(c, f->name), module = symcache_text(c, f->module),
		 build_id = symcache_text(c, f->build_id);
	*s = (struct symcache_slot){.addr = addr,
				    .map_start = f->map_start,
				    .file = f->file,
				    .serial = serial,
				    .flags = flags | SLOT_USED,
				    .name = name,
				    .module = module,
				    .build_id = build_id,
				    .kind = f->kind,
				    .resolved = f->resolved};
}

void symcache_stats(const struct symcache *c, struct symcache_stats *st)
{
	*st = c->st;
	st->used = c->used;
	st->memory = SYMCACHE_SLOTS * sizeof(*c->slots) + SYMCACHE_BYTES;
}

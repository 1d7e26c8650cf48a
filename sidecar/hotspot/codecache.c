/* codecache.c - the code heaps of a HotSpot JVM and the blob at a pc.
 *
 * CodeCache::_heaps is a GrowableArray<CodeHeap*>; each CodeHeap has its
 * memory (_memory, a VirtualSpace) cut into segments of
 * 1 << _log2_segment_size bytes, and a segment map (_segmap) with one byte
 * per segment: 0xFF for a free segment, else how many segments to step back
 * towards the start of the block it belongs to (0 at the start). A block
 * starts with a HeapBlock header (its length in segments and a used flag)
 * and the CodeBlob follows it. This is how the serviceability agent finds a
 * blob (CodeHeap::find_start in HotSpot); every step here is bounded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hotspot_int.h"

#define CC_FREE_SEGMENT 0xFF
#define CC_MAX_LOG2	20 /* segments of at most 1 MiB */
#define CC_MAX_BLOB	(1u << 30)
#define CC_MAX_FRAME	(1u << 16) /* words */

static int cc_read_int(struct hotspot *hs, uint64_t addr, int width, int64_t *v)
{
	uint64_t u;
	int rc = hsmem_read_uint(&hs->r, addr, width, &u);
	if (rc < 0)
		return rc;
	if (width == 1)
		*v = (int8_t)u;
	else if (width == 2)
		*v = (int16_t)u;
	else if (width == 4)
		*v = (int32_t)u;
	else
		*v = (int64_t)u;
	return 0;
}

static int cc_read_heap(struct hotspot *hs, uint64_t heap, struct hs_heap *h)
{
	const struct hs_layout *l = &hs->l;
	uint64_t mem = heap + l->heap_memory_off, seg = heap + l->heap_segmap_off;
	uint64_t lowb, highb, low, high, slow, shigh;
	int64_t log2;
	int rc;
	if ((rc = hsmem_read_u64(&hs->r, mem + l->vs_low_off, &low)) < 0 ||
	    (rc = hsmem_read_u64(&hs->r, mem + l->vs_high_off, &high)) < 0 ||
	    (rc = hsmem_read_u64(&hs->r, mem + l->vs_low_bnd_off, &lowb)) < 0 ||
	    (rc = hsmem_read_u64(&hs->r, mem + l->vs_high_bnd_off, &highb)) < 0 ||
	    (rc = hsmem_read_u64(&hs->r, seg + l->vs_low_off, &slow)) < 0 ||
	    (rc = hsmem_read_u64(&hs->r, seg + l->vs_high_bnd_off, &shigh)) < 0 ||
	    (rc = cc_read_int(hs, heap + l->heap_log2_off, 4, &log2)) < 0)
		return rc;
	if (log2 < 4 || log2 > CC_MAX_LOG2 || !hsmem_ptr_ok(low, 8) || !hsmem_ptr_ok(slow, 1) ||
	    lowb > low || low > high || high > highb || highb >= HS_USER_TOP || shigh <= slow ||
	    shigh >= HS_USER_TOP)
		return -EINVAL;
	/* the segment map must cover every segment of the reserved range */
	if (((highb - low) >> log2) > shigh - slow)
		return -EINVAL;
	h->low = low;
	h->high = highb;
	h->committed = high;
	h->segmap_low = slow;
	h->segmap_high = shigh;
	h->log2_segment = (int)log2;
	return 0;
}

int codecache_read_heaps(struct hotspot *hs)
{
	const struct hs_layout *l = &hs->l;
	uint64_t ga, data, heap[HS_MAX_HEAPS];
	int64_t len;
	int rc = hsmem_read_u64(&hs->r, l->heaps_var, &ga);
	if (rc < 0)
		return rc;
	if (!hsmem_ptr_ok(ga, 8))
		return -EINVAL;
	if ((rc = cc_read_int(hs, ga + l->ga_len_off, 4, &len)) < 0 ||
	    (rc = hsmem_read_u64(&hs->r, ga + l->ga_data_off, &data)) < 0)
		return rc;
	if (len < 1 || len > HS_MAX_HEAPS || !hsmem_ptr_ok(data, 8))
		return -EINVAL;
	if ((rc = hsmem_read(&hs->r, data, heap, (size_t)len * sizeof(heap[0]))) < 0)
		return rc;
	size_t n = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int64_t i = 0; i < len; i++) {
		if (!hsmem_ptr_ok(heap[i], 8) || cc_read_heap(hs, heap[i], &hs->heaps[n]) < 0)
			continue; /* a heap that does not look right is left out */
		if (hs->heaps[n].low < lo)
			lo = hs->heaps[n].low;
		if (hs->heaps[n].high > hi)
			hi = hs->heaps[n].high;
		n++;
	}
	if (n == 0)
		return -EINVAL;
	hs->nheaps = n;
	hs->cc_low = lo;
	hs->cc_high = hi;
	return 0;
}

static const struct hs_heap *cc_heap_of(const struct hotspot *hs, uint64_t pc)
{
	if (pc < hs->cc_low || pc >= hs->cc_high)
		return NULL;
	for (size_t i = 0; i < hs->nheaps; i++)
		if (pc >= hs->heaps[i].low && pc < hs->heaps[i].high)
			return &hs->heaps[i];
	return NULL;
}

int hotspot_in_code_cache(const struct hotspot *hs, uint64_t pc)
{
	return cc_heap_of(hs, pc) != NULL;
}

/* Byte s of h's segment map, through the page cache: a page read in this
 * lookup pass (hs->segmap_seq), or within blob_ttl_ms unless fresh. 0,
 * -EFAULT (not committed), -errno. */
static int cc_segmap_byte(struct hotspot *hs, const struct hs_heap *h, uint64_t s, int fresh,
			  uint64_t now, uint8_t *out)
{
	uint64_t a = h->segmap_low + s, page = a & ~(uint64_t)(HS_SEGMAP_PAGE - 1);
	if (!hs->scache && !(hs->scache = calloc(HS_SEGMAP_CACHE, sizeof(*hs->scache))))
		return -ENOMEM;
	struct hs_segmap_slot *p = &hs->scache[(page / HS_SEGMAP_PAGE) % HS_SEGMAP_CACHE];
	int held = p->hi && a >= p->lo && a < p->hi;
	if (held && p->seq == hs->segmap_seq) {
		*out = p->data[a - p->lo];
		return 0;
	}
	if (held && !fresh && hs->blob_ttl_ms && now - p->stamp_ms < hs->blob_ttl_ms) {
		hs->segmap_cached_used = 1;
		*out = p->data[a - p->lo];
		return 0;
	}
	uint64_t lo = page > h->segmap_low ? page : h->segmap_low;
	uint64_t hi =
	    page + HS_SEGMAP_PAGE < h->segmap_high ? page + HS_SEGMAP_PAGE : h->segmap_high;
	p->hi = 0;
	int rc = hsmem_read(&hs->r, lo, p->data, (size_t)(hi - lo));
	if (rc < 0)
		return rc;
	p->lo = lo;
	p->hi = hi;
	p->stamp_ms = now;
	p->seq = hs->segmap_seq;
	*out = p->data[a - lo];
	return 0;
}

/* The segment at which the block holding segment seg starts: walk the
 * segment map back. 1 found, 0 free or not a block, -errno. */
static int cc_block_start(struct hotspot *hs, const struct hs_heap *h, uint64_t *seg, int fresh,
			  uint64_t now)
{
	uint64_t s = *seg;
	for (int hops = 0; hops < HS_MAX_SEGMAP_HOPS; hops++) {
		uint8_t b;
		int rc = cc_segmap_byte(hs, h, s, fresh, now, &b);
		if (rc == -EFAULT)
			return 0; /* not committed: no block there */
		if (rc < 0)
			return rc;
		if (b == CC_FREE_SEGMENT)
			return 0;
		if (b == 0) {
			*seg = s;
			return 1;
		}
		if (b > s)
			return 0;
		s -= b;
	}
	return 0;
}

static void cc_blob_kind(struct hotspot *hs, const uint8_t *hdr, const char *name,
			 struct hotspot_blob *out)
{
	const struct hs_layout *l = &hs->l;
	int nm;
	if (l->cb_kind_width) {
		uint64_t k = 0;
		memcpy(&k, hdr + l->cb_kind_off, (size_t)l->cb_kind_width);
		nm = (int64_t)k == l->kind_nmethod;
	} else {
		nm = strcmp(name, "nmethod") == 0 || strcmp(name, "native nmethod") == 0;
	}
	if (nm) {
		uint64_t m;
		memcpy(&m, hdr + l->nm_method_off, sizeof(m));
		out->kind = HOTSPOT_BLOB_NMETHOD;
		out->method = hsmem_ptr_ok(m, 8) ? m : 0;
		if (l->nm_comp_level_width == 1)
			out->comp_level = (int8_t)hdr[l->nm_comp_level_off];
		else {
			int32_t c;
			memcpy(&c, hdr + l->nm_comp_level_off, sizeof(c));
			out->comp_level = c;
		}
		if (out->comp_level < 0 || out->comp_level > 4)
			out->comp_level = 0;
		if (l->nm_compile_id_off) {
			int32_t id;
			memcpy(&id, hdr + l->nm_compile_id_off, sizeof(id));
			out->compile_id = id >= 0 ? id : -1;
		}
		return;
	}
	if (hs->interp_end == 0)
		return; /* kind set by the caller */
	if (out->code_begin < hs->interp_end && out->code_end > hs->interp_begin)
		out->kind = HOTSPOT_BLOB_INTERPRETER;
}

/* The code range: pointers (JDK 11-21) or offsets from the blob (23+). */
static int cc_code_range(const struct hs_layout *l, uint64_t blob, const uint8_t *hdr, int32_t size,
			 struct hotspot_blob *out)
{
	if (l->code_is_offset) {
		int32_t b, e;
		memcpy(&b, hdr + l->cb_code_begin_off, sizeof(b));
		memcpy(&e, hdr + l->cb_code_end_off, sizeof(e));
		if (b < 0 || e < b || e > size)
			return 0;
		out->code_begin = blob + (uint64_t)b;
		out->code_end = blob + (uint64_t)e;
	} else {
		memcpy(&out->code_begin, hdr + l->cb_code_begin_off, sizeof(out->code_begin));
		memcpy(&out->code_end, hdr + l->cb_code_end_off, sizeof(out->code_end));
		if (out->code_begin < blob || out->code_end < out->code_begin ||
		    out->code_end > blob + (uint64_t)size)
			return 0;
	}
	return 1;
}

/* A blob's name from its (libjvm read-only) name pointer, through a small
 * cache: a JVM has a few dozen distinct blob names. */
static void cc_blob_name(struct hotspot *hs, uint64_t ptr, char *out, size_t len)
{
	size_t slot = (size_t)(ptr >> 3) % HS_NAME_CACHE_SIZE;
	struct hs_name_slot *s = &hs->ncache[slot];
	out[0] = '\0';
	if (!hsmem_ptr_ok(ptr, 1))
		return;
	if (s->ptr != ptr) {
		char buf[sizeof(s->name)];
		int rc = hsmem_read_cstr(&hs->r, ptr, buf, sizeof(buf));
		if (rc < 0 && rc != -ENAMETOOLONG)
			return;
		memcpy(s->name, buf, sizeof(s->name));
		s->ptr = ptr;
	}
	snprintf(out, len, "%s", s->name);
}

/* Fill out from a copy of a blob's header (hs->l.blob_read bytes). */
static int cc_parse_blob(struct hotspot *hs, uint64_t blob, const uint8_t *hdr,
			 struct hotspot_blob *out)
{
	const struct hs_layout *l = &hs->l;
	int32_t size, fsz;
	uint64_t name;
	memcpy(&size, hdr + l->cb_size_off, sizeof(size));
	memcpy(&fsz, hdr + l->cb_frame_size_off, sizeof(fsz));
	memcpy(&name, hdr + l->cb_name_off, sizeof(name));
	if (size < 16 || (uint32_t)size > CC_MAX_BLOB)
		return 0;
	if (!cc_code_range(l, blob, hdr, size, out))
		return 0;
	out->blob = blob;
	if (fsz > 0 && (uint32_t)fsz <= CC_MAX_FRAME)
		out->frame_size = (uint32_t)fsz * 8;
	int64_t fco = -1;
	if (l->cb_fco_width == 2) {
		int16_t v;
		memcpy(&v, hdr + l->cb_fco_off, sizeof(v));
		fco = v;
	} else {
		int32_t v;
		memcpy(&v, hdr + l->cb_fco_off, sizeof(v));
		fco = v;
	}
	out->frame_complete =
	    fco >= 0 && (uint64_t)fco <= out->code_end - out->code_begin ? (int32_t)fco : -1;
	char nbuf[sizeof(out->name)];
	cc_blob_name(hs, name, nbuf, sizeof(nbuf));
	out->kind = HOTSPOT_BLOB_STUB;
	cc_blob_kind(hs, hdr, nbuf, out);
	if (out->kind == HOTSPOT_BLOB_STUB)
		memcpy(out->name, nbuf, sizeof(out->name));
	return 1;
}

static void cc_blob_none(struct hotspot_blob *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = HOTSPOT_BLOB_NONE;
	out->frame_complete = -1;
	out->compile_id = -1;
}

int codecache_read_blob(struct hotspot *hs, uint64_t blob, struct hotspot_blob *out)
{
	uint8_t hdr[HS_MAX_BLOB_HEADER];
	cc_blob_none(out);
	if (!hsmem_ptr_ok(blob, 8))
		return 0;
	int rc = hsmem_read(&hs->r, blob, hdr, hs->l.blob_read);
	if (rc < 0)
		return rc == -EFAULT ? 0 : rc;
	return cc_parse_blob(hs, blob, hdr, out);
}

static uint64_t cc_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The blob cache: two-way sets chosen by a hash of the block's start; an
 * entry covers its whole block and is trusted for hs->blob_ttl_ms (code
 * is flushed and its memory reused, so a stale entry could name the wrong
 * method). A new entry goes in way 0, the previous one moves to way 1. */
static struct hs_blob_slot *cc_set(struct hotspot *hs, uint64_t block)
{
	uint64_t h = (block >> 4) * 0x9E3779B97F4A7C15ull;
	return &hs->bcache[(size_t)(h >> 40) % (HS_BLOB_CACHE_SIZE / 2) * 2];
}

/* The fresh entry of the block at block, when it holds pc. */
static const struct hs_blob_slot *cc_cached(struct hotspot *hs, uint64_t block, uint64_t pc,
					    uint64_t now)
{
	const struct hs_blob_slot *set = cc_set(hs, block);
	for (int w = 0; w < 2; w++) {
		const struct hs_blob_slot *e = &set[w];
		if (e->hi && e->lo == block && pc < e->hi && now - e->stamp_ms < hs->blob_ttl_ms)
			return e;
	}
	return NULL;
}

static void cc_remember(struct hotspot *hs, uint64_t block, uint64_t end, uint64_t now,
			const struct hotspot_blob *b)
{
	struct hs_blob_slot *set = cc_set(hs, block);
	if (set[1].lo == block)
		set[1] = set[0]; /* renewed: the other way stays */
	else if (set[0].lo != block)
		set[1] = set[0];
	set[0].lo = block;
	set[0].hi = end;
	set[0].stamp_ms = now;
	set[0].b = *b;
}

/* Read the block holding segment seg of h and its blob: 1, 0, -errno. */
static int cc_read_block(struct hotspot *hs, const struct hs_heap *h, uint64_t seg, uint64_t pc,
			 struct hotspot_blob *out, uint64_t *block_end)
{
	const struct hs_layout *l = &hs->l;
	uint8_t buf[64 + HS_MAX_BLOB_HEADER];
	uint64_t block = h->low + (seg << h->log2_segment), len = 0;
	if (l->hb_size > 64)
		return 0;
	/* header and blob in one read; near the end of the heap, the header
	 * alone first tells whether the rest is there */
	int rc = hsmem_read(&hs->r, block, buf, l->hb_size + l->blob_read);
	if (rc == -EFAULT)
		return 0;
	if (rc < 0)
		return rc;
	memcpy(&len, buf + l->hb_len_off, (size_t)l->hb_len_width);
	if (!buf[l->hb_used_off] || len == 0 || len > (h->high - block) >> h->log2_segment)
		return 0;
	*block_end = block + (len << h->log2_segment);
	if (pc >= *block_end) /* the block must hold pc */
		return 0;
	int32_t size;
	memcpy(&size, buf + l->hb_size + l->cb_size_off, sizeof(size));
	if (size < 0 || (uint64_t)size > (len << h->log2_segment) - l->hb_size)
		return 0; /* the blob must fit in its block */
	return cc_parse_blob(hs, block + l->hb_size, buf + l->hb_size, out);
}

/* One pass of a lookup: the block's start from the segment map (cached
 * pages unless fresh), its blob from the cache or one read. 1, 0, -errno. */
static int cc_find_pass(struct hotspot *hs, const struct hs_heap *h, uint64_t pc, int fresh,
			uint64_t now, struct hotspot_blob *out)
{
	uint64_t seg = (pc - h->low) >> h->log2_segment, end = 0;
	hs->segmap_seq++;
	hs->segmap_cached_used = 0;
	int rc = cc_block_start(hs, h, &seg, fresh, now);
	if (rc <= 0)
		return rc;
	uint64_t block = h->low + (seg << h->log2_segment);
	const struct hs_blob_slot *hit = hs->blob_ttl_ms ? cc_cached(hs, block, pc, now) : NULL;
	if (hit) {
		*out = hit->b;
		return 1;
	}
	struct hotspot_blob b;
	cc_blob_none(&b);
	rc = cc_read_block(hs, h, seg, pc, &b, &end);
	if (rc <= 0)
		return rc;
	*out = b;
	if (hs->blob_ttl_ms)
		cc_remember(hs, block, end, now, &b);
	return 1;
}

int hotspot_find_blob(struct hotspot *hs, uint64_t pc, struct hotspot_blob *out)
{
	cc_blob_none(out);
	const struct hs_heap *h = cc_heap_of(hs, pc);
	if (!h)
		return 0;
	if ((pc - h->low) >> h->log2_segment >= h->segmap_high - h->segmap_low)
		return 0;
	uint64_t now = hs->blob_ttl_ms ? cc_now_ms() : 0;
	int rc = cc_find_pass(hs, h, pc, 0, now, out);
	/* a page read before may be out of date: a block allocated, freed
	 * or moved since. No block found with it: ask the map as it is now. */
	if (rc == 0 && hs->segmap_cached_used)
		rc = cc_find_pass(hs, h, pc, 1, now, out);
	if (rc <= 0)
		cc_blob_none(out);
	return rc;
}

/* Every field a walk or a name uses, the same. */
static int cc_same_blob(const struct hotspot_blob *a, const struct hotspot_blob *b)
{
	return a->kind == b->kind && a->blob == b->blob && a->code_begin == b->code_begin &&
	       a->code_end == b->code_end && a->frame_size == b->frame_size &&
	       a->frame_complete == b->frame_complete && a->method == b->method &&
	       a->comp_level == b->comp_level && a->compile_id == b->compile_id &&
	       strncmp(a->name, b->name, sizeof(a->name)) == 0;
}

int hotspot_blob_check(struct hotspot *hs, uint64_t pc, const struct hotspot_blob *b)
{
	const struct hs_heap *h = cc_heap_of(hs, pc);
	uint64_t hb = hs->l.hb_size, end = 0;
	if (!h || b->kind == HOTSPOT_BLOB_NONE || b->blob < h->low + hb || b->blob > pc)
		return 0;
	uint64_t off = b->blob - hb - h->low;
	if (off & ((1ull << h->log2_segment) - 1))
		return 0; /* not where a block starts */
	uint64_t ms = hs->blob_ttl_ms ? cc_now_ms() : 0;
	const struct hs_blob_slot *hit =
	    hs->blob_ttl_ms ? cc_cached(hs, h->low + off, pc, ms) : NULL;
	if (hit && cc_same_blob(&hit->b, b))
		return 1; /* read within its time for another pc of the block */
	struct hotspot_blob now;
	cc_blob_none(&now);
	int rc = cc_read_block(hs, h, off >> h->log2_segment, pc, &now, &end);
	if (rc <= 0)
		return rc;
	if (!cc_same_blob(&now, b))
		return 0;
	if (hs->blob_ttl_ms)
		cc_remember(hs, h->low + off, end, ms, &now);
	return 1;
}

void hotspot_forget(struct hotspot *hs)
{
	memset(hs->bcache, 0, HS_BLOB_CACHE_SIZE * sizeof(*hs->bcache));
	free(hs->scache);
	hs->scache = NULL;
	memset(hs->ncache, 0, sizeof(hs->ncache));
	hsscopes_forget(hs);
	for (size_t i = 0; i < HS_METHOD_CACHE_SIZE; i++) {
		free(hs->mcache[i].name);
		hs->mcache[i].name = NULL;
		hs->mcache[i].method = 0;
	}
	for (size_t i = 0; i < HS_KLASS_CACHE_SIZE; i++) {
		free(hs->kcache[i].name);
		hs->kcache[i].name = NULL;
		hs->kcache[i].method = 0;
	}
}

/* A window of heap memory for the walk: blocks are read 64 KiB at a time
 * instead of one or two reads per block. */
struct cc_window {
	uint64_t lo, hi; /* [lo, hi) held */
	uint8_t buf[HS_MAX_READ];
};

/* The n bytes at a, from the window (refilled from a when needed, up to
 * end); NULL when they cannot be read. */
static const uint8_t *cc_window_get(struct hotspot *hs, struct cc_window *w, uint64_t a, size_t n,
				    uint64_t end)
{
	if (a >= w->lo && a < w->hi && n <= w->hi - a)
		return w->buf + (a - w->lo);
	if (a >= end || n > end - a || n > sizeof(w->buf))
		return NULL;
	size_t len = end - a < sizeof(w->buf) ? (size_t)(end - a) : sizeof(w->buf);
	w->lo = w->hi = 0;
	if (hsmem_read(&hs->r, a, w->buf, len) < 0)
		return NULL;
	w->lo = a;
	w->hi = a + len;
	return w->buf;
}

/* One heap, block by block from its first segment, following each block's
 * length in segments. */
static int cc_each_in_heap(struct hotspot *hs, const struct hs_heap *h, struct cc_window *w,
			   size_t *left, int (*fn)(void *ctx, const struct hotspot_blob *b),
			   void *ctx)
{
	const struct hs_layout *l = &hs->l;
	uint64_t nseg = (h->committed - h->low) >> h->log2_segment;
	if (l->hb_size > 64)
		return -EINVAL;
	w->lo = w->hi = 0;
	for (uint64_t seg = 0; seg<nseg && * left> 0;) {
		uint64_t block = h->low + (seg << h->log2_segment), len = 0;
		const uint8_t *hdr = cc_window_get(hs, w, block, l->hb_size, h->committed);
		if (!hdr)
			return 0;
		memcpy(&len, hdr + l->hb_len_off, (size_t)l->hb_len_width);
		if (len == 0 || len > nseg - seg)
			return 0; /* inconsistent (or being changed): stop this heap */
		if (hdr[l->hb_used_off]) {
			struct hotspot_blob b;
			uint64_t blob = block + l->hb_size;
			int rc;
			(*left)--;
			const uint8_t *bh = cc_window_get(hs, w, blob, l->blob_read, h->committed);
			cc_blob_none(&b);
			if (bh)
				rc = cc_parse_blob(hs, blob, bh, &b);
			else
				rc = codecache_read_blob(hs, blob, &b);
			if (rc < 0)
				return rc;
			if (rc > 0 && (rc = fn(ctx, &b)) != 0)
				return rc;
		}
		seg += len;
	}
	return 0;
}

int codecache_each_blob(struct hotspot *hs, size_t max_blobs,
			int (*fn)(void *ctx, const struct hotspot_blob *b), void *ctx)
{
	int rc = codecache_read_heaps(hs); /* _high grows as code is added */
	if (rc < 0)
		return rc;
	size_t left = max_blobs;
	struct cc_window *w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < hs->nheaps && rc == 0; i++)
		rc = cc_each_in_heap(hs, &hs->heaps[i], w, &left, fn, ctx);
	free(w);
	return rc;
}

/* hsscopes.c - the inline chain HotSpot recorded for a pc of an nmethod:
 * its PcDesc table and scopes stream (the debug info deoptimization and
 * stack walking use).
 *
 *   PcDesc[]     sorted by _pc_offset (from code_begin); a pc belongs to the
 *                first PcDesc whose _pc_offset >= pc - code_begin
 *                (HotSpot's approximate match), so a return address finds
 *                the PcDesc of its own call site
 *   scopes data  at _scope_decode_offset (0: none): sender decode offset,
 *                method index, bci + 1 (compressed ints), then the body we
 *                do not need; the sender chain ends at offset 0
 *   metadata     method index i (1-based) is metadata[i - 1]
 *
 * Where they are: JDK 11-21 inside the nmethod (_scopes_pcs_offset to
 * _dependencies_offset, CompiledMethod::_scopes_data_begin to the PcDescs,
 * _metadata_offset to _scopes_data_begin); JDK 23+ in its immutable data
 * (_immutable_data + _scopes_pcs_offset / _scopes_data_offset) and mutable
 * data (metadata after the _relocation_size bytes of relocations).
 *
 * The ints are UNSIGNED5 (lg H = 6): JDK 20+ excludes the byte 0 (X = 1)
 * and uses it to mark a run of zeros; before, X = 0. Everything is bounded:
 * section sizes, the chain depth, every read inside its section. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hotspot_int.h"

#define SC_MAX_PCS   (256u << 10) /* bytes of PcDescs */
#define SC_MAX_DATA  (512u << 10) /* bytes of scopes data */
#define SC_MAX_META  (64u << 10)  /* bytes of metadata pointers */
#define SC_MAX_DEPTH 64
#define SC_CACHE     16 /* loaded nmethods kept */

/* Read a whole section (bounded) in HS_MAX_READ chunks. */
static int sc_read_all(struct hotspot *hs, uint64_t lo, uint64_t hi, size_t max, uint8_t **out,
		       size_t *len)
{
	*out = NULL;
	*len = 0;
	if (hi < lo || hi - lo > max)
		return -EINVAL;
	size_t n = (size_t)(hi - lo);
	uint8_t *b = malloc(n ? n : 1);
	if (!b)
		return -ENOMEM;
	for (size_t at = 0; at < n;) {
		size_t c = n - at < HS_MAX_READ ? n - at : HS_MAX_READ;
		int rc = hsmem_read(&hs->r, lo + at, b + at, c);
		if (rc < 0) {
			free(b);
			return rc;
		}
		at += c;
	}
	*out = b;
	*len = n;
	return 0;
}

static void sc_dbg_free(struct hs_nm_dbg *d)
{
	free(d->pcs);
	free(d->data);
	free(d->meta);
	memset(d, 0, sizeof(*d));
}

void hsscopes_forget(struct hotspot *hs)
{
	for (size_t i = 0; i < HS_DBG_CACHE; i++)
		sc_dbg_free(&hs->dcache[i]);
}

/* The sections' addresses from the nmethod's header. 0 or -EINVAL. */
static int sc_locate(struct hotspot *hs, uint64_t nm, uint64_t r[6])
{
	const struct hs_layout *l = &hs->l;
	uint8_t h[HS_MAX_BLOB_HEADER];
	int32_t a, b, c;
	int rc = hsmem_read(&hs->r, nm, h, l->dbg_read);
	if (rc < 0)
		return rc;
	memcpy(&a, h + l->nm_pcs_off, 4);
	memcpy(&b, h + l->nm_data_off, 4);
	if (l->dbg_style == 1) { /* inside the nmethod */
		uint64_t data_begin;
		memcpy(&c, h + l->nm_meta_off, 4);
		memcpy(&data_begin, h + l->nm_data_off, 8);
		int32_t deps;
		memcpy(&deps, h + l->nm_deps_off, 4);
		if (a < 0 || deps < a || c < 0)
			return -EINVAL;
		r[0] = nm + (uint64_t)a;
		r[1] = nm + (uint64_t)deps;
		r[2] = data_begin;
		r[3] = nm + (uint64_t)a;
		r[4] = nm + (uint64_t)c;
		r[5] = data_begin;
	} else { /* immutable and mutable data */
		uint64_t imm, mut;
		int32_t isize, reloc, msize;
		memcpy(&imm, h + l->nm_imm_off, 8);
		memcpy(&isize, h + l->nm_imm_size_off, 4);
		memcpy(&mut, h + l->cb_mut_off, 8);
		memcpy(&reloc, h + l->cb_reloc_size_off, 4);
		memcpy(&msize, h + l->cb_mut_size_off, 4);
		if (a < 0 || b < a || isize < b || reloc < 0 || msize < reloc ||
		    !hsmem_ptr_ok(imm, 4) || !hsmem_ptr_ok(mut, 8))
			return -EINVAL;
		r[0] = imm + (uint64_t)a;
		r[1] = imm + (uint64_t)b;
		r[2] = imm + (uint64_t)b;
		r[3] = imm + (uint64_t)isize;
		r[4] = mut + (uint64_t)reloc;
		r[5] = mut + (uint64_t)msize;
	}
	return 0;
}

/* The debug info of nmethod nm, loaded or from the cache. */
static int sc_load(struct hotspot *hs, uint64_t nm, struct hs_nm_dbg **out)
{
	if (!hs->l.dbg_style)
		return -ENOTSUP;
	size_t slot = (size_t)(nm >> 4) % HS_DBG_CACHE;
	struct hs_nm_dbg *d = &hs->dcache[slot];
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	/* the nmethod's memory can be freed and reused: trusted as long as a
	 * cached blob is */
	if (d->nm == nm && d->pcs && now - d->stamp_ms < hs->blob_ttl_ms) {
		*out = d;
		return 0;
	}
	sc_dbg_free(d);
	uint64_t r[6];
	size_t n;
	int rc = sc_locate(hs, nm, r);
	if (rc == 0)
		rc = sc_read_all(hs, r[0], r[1], SC_MAX_PCS, &d->pcs, &d->pcs_len);
	if (rc == 0)
		rc = sc_read_all(hs, r[2], r[3], SC_MAX_DATA, &d->data, &d->data_len);
	if (rc == 0)
		rc = sc_read_all(hs, r[4], r[5], SC_MAX_META, (uint8_t **)&d->meta, &n);
	if (rc < 0 || !d->pcs) {
		sc_dbg_free(d);
		return rc < 0 ? rc : -EINVAL;
	}
	d->nmeta = n / 8;
	d->nm = nm;
	d->stamp_ms = now;
	*out = d;
	return 0;
}

/* One compressed int at *pos of data; -EINVAL past the end. */
static int sc_uint(struct hs_nm_dbg *d, int x, size_t *pos, uint32_t *v)
{
	const uint32_t lg_h = 6, l = 256 - 64 - (uint32_t)x;
	if (*pos >= d->data_len)
		return -EINVAL;
	uint32_t b0 = d->data[(*pos)++];
	if (x && b0 == 0) { /* a run of zeros: the run's length follows */
		if (*pos >= d->data_len)
			return -EINVAL;
		(*pos)++;
		*v = 0;
		return 0;
	}
	uint32_t sum = b0 - (uint32_t)x;
	if (sum < l) {
		*v = sum;
		return 0;
	}
	uint32_t shift = lg_h;
	for (int i = 1; i < 5; i++) {
		if (*pos >= d->data_len)
			return -EINVAL;
		uint32_t b = d->data[(*pos)++];
		if (x && b == 0)
			return -EINVAL;
		sum += (b - (uint32_t)x) << shift;
		if (b < (uint32_t)x + l || i == 4)
			break;
		shift += lg_h;
	}
	*v = sum;
	return 0;
}

/* The PcDesc for pc offset off: its scope decode offset, or -1. */
static int64_t sc_pcdesc(struct hotspot *hs, const struct hs_nm_dbg *d, int64_t off)
{
	const struct hs_layout *l = &hs->l;
	size_t n = d->pcs_len / l->pcdesc_size;
	size_t lo = 0, hi = n;
	while (lo < hi) { /* first PcDesc with _pc_offset >= off */
		size_t mid = lo + (hi - lo) / 2;
		int32_t p;
		memcpy(&p, d->pcs + mid * l->pcdesc_size + l->pcd_pc_off, 4);
		if (p < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= n)
		return -1;
	int32_t dec;
	memcpy(&dec, d->pcs + lo * l->pcdesc_size + l->pcd_decode_off, 4);
	return dec;
}

/* The chain at decode offset dec, innermost first: n, or 0 on bad data. */
static int sc_chain(struct hotspot *hs, struct hs_nm_dbg *d, int64_t dec, uint64_t outer,
		    struct hotspot_scope *out, int max)
{
	if (dec < 0 || (uint64_t)dec >= d->data_len)
		return 0;
	if (dec == 0) { /* no scope recorded: the nmethod's own method */
		out[0].method = outer;
		out[0].bci = -1;
		return 1;
	}
	int n = 0, x = hs->major >= 20 ? 1 : 0;
	for (int depth = 0; dec > 0 && depth < SC_MAX_DEPTH && n < max; depth++) {
		size_t pos = (size_t)dec;
		uint32_t sender, midx, bci;
		if (sc_uint(d, x, &pos, &sender) < 0 || sc_uint(d, x, &pos, &midx) < 0 ||
		    sc_uint(d, x, &pos, &bci) < 0)
			return 0;
		if (midx == 0 || midx > d->nmeta || sender >= d->data_len ||
		    (sender && sender >= (uint64_t)dec))
			return 0; /* senders are written before their callees */
		out[n].method = d->meta[midx - 1];
		out[n].bci = (int)bci - 1;
		n++;
		dec = sender;
	}
	return n;
}

int hotspot_scopes(struct hotspot *hs, const struct hotspot_blob *b, uint64_t pc,
		   struct hotspot_scope *out, int max)
{
	struct hs_nm_dbg *d;
	if (max < 1 || b->kind != HOTSPOT_BLOB_NMETHOD || pc < b->code_begin || pc > b->code_end)
		return 0;
	int rc = sc_load(hs, b->blob, &d);
	if (rc < 0)
		return rc == -ENOMEM ? rc : 0;
	return sc_chain(hs, d, sc_pcdesc(hs, d, (int64_t)(pc - b->code_begin)), b->method, out,
			max);
}

int hsscopes_ranges(struct hotspot *hs, const struct hotspot_blob *b, hsscopes_range_fn fn,
		    void *ctx)
{
	struct hs_nm_dbg *d;
	struct hotspot_scope sc[HS_MAX_CHAIN];
	const struct hs_layout *l = &hs->l;
	uint64_t at = b->code_begin, size = b->code_end - b->code_begin;
	int rc = b->kind == HOTSPOT_BLOB_NMETHOD ? sc_load(hs, b->blob, &d) : -EINVAL;
	if (rc < 0)
		return rc;
	size_t n = d->pcs_len / l->pcdesc_size;
	for (size_t i = 0; i < n && at < b->code_end; i++) {
		int32_t p, dec;
		memcpy(&p, d->pcs + i * l->pcdesc_size + l->pcd_pc_off, 4);
		memcpy(&dec, d->pcs + i * l->pcdesc_size + l->pcd_decode_off, 4);
		if (p < 0)
			continue; /* the lower sentinel */
		uint64_t end =
		    (uint64_t)p + 1 > size ? b->code_end : b->code_begin + (uint64_t)p + 1;
		if (end <= at)
			continue; /* not sorted: ignore */
		int k = sc_chain(hs, d, dec, b->method, sc, HS_MAX_CHAIN);
		if ((rc = fn(ctx, at, end, sc, k)) != 0)
			return rc;
		at = end;
	}
	if (at < b->code_end)
		rc = fn(ctx, at, b->code_end, sc, 0);
	return rc;
}

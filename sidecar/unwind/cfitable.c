/* cfitable.c - see cfitable.h */
#include "cfitable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct cfitable {
	struct cfiflat_load loads[CFIFLAT_MAX_LOADS];
	uint32_t nloads, nrules, nrows;
	struct cfiflat_rule *rules;
	struct cfiflat_row *rows;
};

static int cfitable_bad(struct fs_error *err, const char *what, size_t index)
{
	return fs_error_set(err, EBADMSG, "malformed CFI table from the ELF sandbox: %s (%zu)",
			    what, index);
}

static int cfitable_check_hdr(const struct cfiflat_hdr *h, size_t len, struct fs_error *err)
{
	if (memcmp(h->magic, CFIFLAT_MAGIC, sizeof(h->magic)) != 0)
		return cfitable_bad(err, "bad magic", 0);
	if (h->reserved)
		return cfitable_bad(err, "reserved header field set", h->reserved);
	if (h->nloads > CFIFLAT_MAX_LOADS)
		return cfitable_bad(err, "too many program headers", h->nloads);
	if (h->nrules > CFIFLAT_MAX_RULES)
		return cfitable_bad(err, "too many rules", h->nrules);
	if (h->nrows > CFIFLAT_MAX_ROWS)
		return cfitable_bad(err, "too many rows", h->nrows);
	/* Each term is bounded above, so the sum cannot overflow. */
	size_t want = sizeof(*h) + (size_t)h->nloads * sizeof(struct cfiflat_load) +
		      (size_t)h->nrules * sizeof(struct cfiflat_rule) +
		      (size_t)h->nrows * sizeof(struct cfiflat_row);
	if (want != len)
		return cfitable_bad(err, "length does not add up", len);
	if (h->nrows && !h->nrules)
		return cfitable_bad(err, "rows without rules", h->nrows);
	return 0;
}

static int cfitable_off_ok(int32_t v)
{
	return v >= -CFIFLAT_MAX_OFF && v <= CFIFLAT_MAX_OFF;
}

/* One canonical encoding per rule: what is unused is 0. */
static int cfitable_rule_ok(const struct cfiflat_rule *u)
{
	if (u->reserved)
		return 0;
	if (u->kind != CFIFLAT_STEP)
		return (u->kind == CFIFLAT_OUTERMOST || u->kind == CFIFLAT_UNSUPPORTED) &&
		       !u->cfa_off && !u->ra_off && !u->bp_off && !u->cfa_reg && !u->bp;
	if (u->cfa_reg != CFIFLAT_REG_RSP && u->cfa_reg != CFIFLAT_REG_RBP)
		return 0;
	if (!cfitable_off_ok(u->cfa_off) || !cfitable_off_ok(u->ra_off))
		return 0;
	if (u->bp == CFIFLAT_BP_SAME)
		return u->bp_off == 0;
	return u->bp == CFIFLAT_BP_SAVED && cfitable_off_ok(u->bp_off);
}

static int cfitable_check(const struct cfitable *t, struct fs_error *err)
{
	for (uint32_t i = 0; i < t->nloads; i++) {
		const struct cfiflat_load *l = &t->loads[i];
		if (l->filesz == 0 || l->offset + l->filesz < l->offset ||
		    l->vaddr + l->filesz < l->vaddr)
			return cfitable_bad(err, "bad program header", i);
	}
	for (uint32_t i = 0; i < t->nrules; i++)
		if (!cfitable_rule_ok(&t->rules[i]))
			return cfitable_bad(err, "bad rule", i);
	for (uint32_t i = 0; i < t->nrows; i++) {
		const struct cfiflat_row *w = &t->rows[i];
		if (w->len == 0 || w->start + w->len < w->start)
			return cfitable_bad(err, "empty or wrapping row", i);
		if (w->rule >= t->nrules)
			return cfitable_bad(err, "row names no rule", i);
		if (i && w->start < t->rows[i - 1].start + t->rows[i - 1].len)
			return cfitable_bad(err, "rows not sorted or overlapping", i);
	}
	return 0;
}

int cfitable_decode(const void *buf, size_t len, struct cfitable **out, struct fs_error *err)
{
	struct cfiflat_hdr h;
	*out = NULL;
	if (len < sizeof(h))
		return cfitable_bad(err, "short header", len);
	memcpy(&h, buf, sizeof(h));
	int r = cfitable_check_hdr(&h, len, err);
	if (r < 0)
		return r;
	cleanup_cfitable struct cfitable *t = calloc(1, sizeof(*t));
	if (!t)
		return fs_error_set(err, ENOMEM, "allocating a CFI table");
	t->nloads = h.nloads;
	t->nrules = h.nrules;
	t->nrows = h.nrows;
	/* Copied out: buf may be unaligned, and the table outlives it. */
	t->rules = malloc(h.nrules ? h.nrules * sizeof(*t->rules) : 1);
	t->rows = malloc(h.nrows ? h.nrows * sizeof(*t->rows) : 1);
	if (!t->rules || !t->rows)
		return fs_error_set(err, ENOMEM, "copying a CFI table");
	const char *p = (const char *)buf + sizeof(h);
	if (h.nloads)
		memcpy(t->loads, p, h.nloads * sizeof(*t->loads));
	p += h.nloads * sizeof(*t->loads);
	if (h.nrules)
		memcpy(t->rules, p, h.nrules * sizeof(*t->rules));
	p += h.nrules * sizeof(*t->rules);
	if (h.nrows)
		memcpy(t->rows, p, h.nrows * sizeof(*t->rows));
	if ((r = cfitable_check(t, err)) < 0)
		return r;
	*out = steal_pointer(&t);
	return 0;
}

void cfitable_free(struct cfitable *t)
{
	if (!t)
		return;
	free(t->rules);
	free(t->rows);
	free(t);
}

size_t cfitable_rows(const struct cfitable *t)
{
	return t->nrows;
}

unsigned cfitable_fp_permille(const struct cfitable *t)
{
	uint64_t fp = 0, sp = 0; /* at most 2^20 rows of < 2^32 bytes: no overflow */
	for (uint32_t i = 0; i < t->nrows; i++) {
		const struct cfiflat_rule *u = &t->rules[t->rows[i].rule];
		if (u->kind != CFIFLAT_STEP)
			continue;
		if (u->cfa_reg == CFIFLAT_REG_RBP)
			fp += t->rows[i].len;
		else if (u->cfa_off > 8)
			sp += t->rows[i].len; /* a frame on the stack, not by rbp */
	}
	return fp + sp ? (unsigned)(fp * 1000 / (fp + sp)) : 0;
}

int cfitable_vaddr(const struct cfitable *t, uint64_t off, uint64_t *vaddr)
{
	for (uint32_t i = 0; i < t->nloads; i++) {
		const struct cfiflat_load *l = &t->loads[i];
		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -1;
}

const struct cfiflat_rule *cfitable_lookup(const struct cfitable *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cfiflat_row *w = &t->rows[mid];
		if (vaddr < w->start)
			hi = mid;
		else if (vaddr - w->start >= w->len)
			lo = mid + 1;
		else
			return &t->rules[w->rule];
	}
	return NULL;
}

int cfitable_step(const struct cfiflat_rule *u, struct unwind_regs *r,
		  const struct unwind_stack *st)
{
	if (u->kind == CFIFLAT_OUTERMOST)
		return 2;
	if (u->kind != CFIFLAT_STEP)
		return -1;
	uint64_t base = u->cfa_reg == CFIFLAT_REG_RSP ? r->sp : r->bp;
	uint64_t cfa = base + (uint64_t)(int64_t)u->cfa_off, ra, bp = r->bp;
	if (unwind_read(st, cfa + (uint64_t)(int64_t)u->ra_off, &ra) < 0)
		return -1;
	/* A save slot below sp was popped already (compilers keep the rule
	 * through the epilogue, after `pop %rbp`): rbp holds the caller's. */
	uint64_t bp_at = cfa + (uint64_t)(int64_t)u->bp_off;
	if (u->bp == CFIFLAT_BP_SAVED && bp_at >= r->sp && unwind_read(st, bp_at, &bp) < 0)
		return -1;
	*r = (struct unwind_regs){.ip = ra, .sp = cfa, .bp = bp};
	return 1;
}

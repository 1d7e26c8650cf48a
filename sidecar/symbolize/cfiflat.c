/* cfiflat.c - see cfiflat.h. Runs in the sandboxed child only. */
#include "cfiflat.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#define CFIFLAT_HASH	  (CFIFLAT_MAX_RULES * 2) /* open addressing, power of two */
#define CFIFLAT_MAX_STEPS (4ull * CFIFLAT_MAX_ROWS)

struct cfiflat_out {
	struct cfiflat_load loads[CFIFLAT_MAX_LOADS];
	uint32_t nloads;
	struct cfiflat_rule *rules;
	uint32_t nrules, *hash; /* hash: rule index + 1, 0 = empty */
	struct cfiflat_row *rows;
	uint32_t nrows, rcap;
	uint64_t steps; /* libdw lookups, at most CFIFLAT_MAX_STEPS */
	int full;	/* a cap was reached: the rest is dropped */
};

/* ---- one row's rule from libdw's answer --------------------------------- */

static int cfiflat_small(int64_t v)
{
	return v >= -CFIFLAT_MAX_OFF && v <= CFIFLAT_MAX_OFF;
}

/* CFA + off, the form libdw gives for the offset(N) register rule:
 * call_frame_cfa, then nothing, plus_uconst N or (const N, plus). 0 and
 * *off, or -1 for any other expression or an offset out of range. */
static int cfiflat_cfa_plus(const Dwarf_Op *ops, size_t nops, int32_t *off)
{
	int64_t v = 0;
	if (nops == 0 || ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst)
		v = (int64_t)ops[1].number;
	else if (nops == 3 && ops[2].atom == DW_OP_plus &&
		 (ops[1].atom == DW_OP_consts || ops[1].atom == DW_OP_constu))
		v = (int64_t)ops[1].number;
	else if (nops != 1)
		return -1;
	if (!cfiflat_small(v))
		return -1;
	*off = (int32_t)v;
	return 0;
}

/* The CFA expression of a GNU lazy-binding PLT (16-byte entries, the CFA
 * one word higher after an entry's push): rsp + 8 + ((rip & 15) >= T) * 8.
 * T, or -1 for any other expression. */
static int cfiflat_plt(const Dwarf_Op *o, size_t n)
{
	static const uint8_t want[] = {DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
				       DW_OP_ge,    DW_OP_lit3,	  DW_OP_shl,   DW_OP_plus};
	if (n != sizeof(want) || o[0].number != 8 || o[1].number != 0 || o[4].atom < DW_OP_lit0 ||
	    o[4].atom > DW_OP_lit15)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (i != 4 && o[i].atom != want[i])
			return -1;
	return o[4].atom - DW_OP_lit0;
}

/* The row's rule; *plt the PLT threshold when the CFA is the PLT
 * expression (the rule is then the one for CFA = rsp + 8), else -1. */
static struct cfiflat_rule cfiflat_rule_of(Dwarf_Frame *fr, int *plt)
{
	struct cfiflat_rule u = {.kind = CFIFLAT_UNSUPPORTED}, s = {.kind = CFIFLAT_STEP};
	Dwarf_Op mem[3], *ops = NULL;
	size_t nops = 0;
	*plt = -1;
	/* the CFA: a register plus an offset (libdw: DW_OP_bregx reg off) */
	if (dwarf_frame_cfa(fr, &ops, &nops) < 0 || nops == 0)
		return u;
	uint64_t reg;
	int64_t off;
	if (nops > 1 && (*plt = cfiflat_plt(ops, nops)) >= 0)
		reg = CFIFLAT_REG_RSP, off = 8;
	else if (nops != 1)
		return u;
	else if (ops[0].atom == DW_OP_bregx)
		reg = ops[0].number, off = (int64_t)ops[0].number2;
	else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
		reg = ops[0].atom - DW_OP_breg0, off = (int64_t)ops[0].number;
	else
		return u;
	if ((reg != CFIFLAT_REG_RSP && reg != CFIFLAT_REG_RBP) || !cfiflat_small(off))
		return u;
	s.cfa_reg = (uint8_t)reg;
	s.cfa_off = (int32_t)off;
	/* the return address: at CFA + N, or undefined (the outermost) */
	if (dwarf_frame_register(fr, CFIFLAT_REG_RA, mem, &ops, &nops) < 0)
		return u;
	if (nops == 0 && ops != NULL)
		return (struct cfiflat_rule){.kind = CFIFLAT_OUTERMOST};
	if (cfiflat_cfa_plus(ops, nops, &s.ra_off) < 0)
		return u;
	/* rbp: unchanged (same value, undefined) or at CFA + N */
	if (dwarf_frame_register(fr, CFIFLAT_REG_RBP, mem, &ops, &nops) < 0)
		return u;
	if (nops != 0) {
		if (cfiflat_cfa_plus(ops, nops, &s.bp_off) < 0)
			return u;
		s.bp = CFIFLAT_BP_SAVED;
	}
	return s;
}

/* ---- the table ---------------------------------------------------------- */

static uint32_t cfiflat_rule_index(struct cfiflat_out *o, const struct cfiflat_rule *r)
{
	uint32_t h = 2166136261u;
	const unsigned char *b = (const unsigned char *)r;
	for (size_t i = 0; i < sizeof(*r); i++)
		h = (h ^ b[i]) * 16777619u;
	for (uint32_t i = h & (CFIFLAT_HASH - 1);; i = (i + 1) & (CFIFLAT_HASH - 1)) {
		uint32_t k = o->hash[i];
		if (k && !memcmp(&o->rules[k - 1], r, sizeof(*r)))
			return k - 1;
		if (!k) {
			if (o->nrules == CFIFLAT_MAX_RULES)
				return UINT32_MAX;
			o->rules[o->nrules] = *r;
			o->hash[i] = ++o->nrules;
			return o->nrules - 1;
		}
	}
}

/* Append [start, end) with rule r after the last row (rows that would go
 * backwards or overlap are cut: the output is sorted whatever the file). */
static int cfiflat_add(struct cfiflat_out *o, uint64_t start, uint64_t end,
		       const struct cfiflat_rule *r)
{
	if (o->nrows) {
		const struct cfiflat_row *l = &o->rows[o->nrows - 1];
		if (start < l->start + l->len)
			start = l->start + l->len;
	}
	if (end <= start)
		return 0;
	if (end - start > UINT32_MAX)
		end = start + UINT32_MAX;
	uint32_t k = cfiflat_rule_index(o, r);
	if (k == UINT32_MAX) {
		o->full = 1;
		return 0;
	}
	struct cfiflat_row *l = o->nrows ? &o->rows[o->nrows - 1] : NULL;
	if (l && l->rule == k && l->start + l->len == start && end - l->start <= UINT32_MAX) {
		l->len = (uint32_t)(end - l->start);
		return 0;
	}
	if (o->nrows == CFIFLAT_MAX_ROWS) {
		o->full = 1;
		return 0;
	}
	if (o->nrows == o->rcap) {
		uint32_t nc = o->rcap ? o->rcap * 2 : 4096;
		struct cfiflat_row *p = realloc(o->rows, (size_t)nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		o->rows = p;
		o->rcap = nc;
	}
	o->rows[o->nrows++] = (struct cfiflat_row){start, (uint32_t)(end - start), k};
	return 0;
}

/* A PLT row as plain rows: in each 16-byte entry the CFA is rsp + 8 below
 * offset t, rsp + 16 from it (r is the rule for rsp + 8). */
static int cfiflat_add_plt(struct cfiflat_out *o, uint64_t pc, uint64_t end,
			   const struct cfiflat_rule *r, int t)
{
	struct cfiflat_rule hi = *r;
	hi.cfa_off += 8;
	if (r->kind != CFIFLAT_STEP)
		return cfiflat_add(o, pc, end, r);
	while (pc < end && !o->full) {
		uint64_t entry = pc & ~(uint64_t)15, cut = entry + (uint64_t)t;
		uint64_t stop = pc < cut ? cut : entry + 16;
		if (stop > end || stop <= pc)
			stop = end;
		int e = cfiflat_add(o, pc, stop, pc < cut ? r : &hi);
		if (e < 0)
			return e;
		pc = stop;
	}
	return 0;
}

/* Every row of the FDE starting at pc, up to limit (the next FDE). */
static int cfiflat_fde(struct cfiflat_out *o, Dwarf_CFI *cfi, uint64_t pc, uint64_t limit)
{
	if (o->nrows) { /* an unsorted table: never walk a range twice */
		const struct cfiflat_row *l = &o->rows[o->nrows - 1];
		if (pc < l->start + l->len)
			pc = l->start + l->len;
	}
	while (pc < limit && !o->full) {
		Dwarf_Frame *fr = NULL;
		if (++o->steps > CFIFLAT_MAX_STEPS) {
			o->full = 1;
			return 0;
		}
		Dwarf_Addr start, end;
		bool sig;
		if (dwarf_cfi_addrframe(cfi, pc, &fr) < 0 || !fr)
			return 0;
		dwarf_frame_info(fr, &start, &end, &sig);
		int plt;
		struct cfiflat_rule r = cfiflat_rule_of(fr, &plt);
		free(fr);
		if (end <= pc)
			return 0;
		if (end > limit)
			end = limit;
		int e =
		    plt >= 0 ? cfiflat_add_plt(o, pc, end, &r, plt) : cfiflat_add(o, pc, end, &r);
		if (e < 0)
			return e;
		pc = end;
	}
	return 0;
}

/* ---- the file ----------------------------------------------------------- */

static int cfiflat_bad(struct fs_error *err, int code, const char *what)
{
	return fs_error_set(err, code, "CFI: %s", what);
}

/* The initial locations of .eh_frame_hdr's sorted table, in the
 * PT_GNU_EH_FRAME segment: version 1, then the encodings of the .eh_frame
 * pointer, of the count (udata4) and of the table (datarel sdata4). */
static int cfiflat_walk_hdr(struct cfiflat_out *o, Elf *elf, const GElf_Phdr *ph, Dwarf_CFI *cfi)
{
	if (ph->p_filesz < 12 || ph->p_filesz > (64u << 20))
		return 0;
	Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph->p_offset, ph->p_filesz, ELF_T_BYTE);
	if (!d || d->d_size != ph->p_filesz)
		return 0;
	const unsigned char *p = d->d_buf;
	if (p[0] != 1 || p[2] != DW_EH_PE_udata4 || p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return 0;
	/* the .eh_frame pointer: 4 or 8 bytes by its encoding */
	size_t at =
	    4 + ((p[1] & 0x0f) == DW_EH_PE_udata8 || (p[1] & 0x0f) == DW_EH_PE_sdata8 ? 8 : 4);
	uint32_t count;
	if (at + 4 > d->d_size)
		return 0;
	memcpy(&count, p + at, 4);
	at += 4;
	if (count > CFIFLAT_MAX_FDES || count > (d->d_size - at) / 8)
		count = (uint32_t)((d->d_size - at) / 8 < CFIFLAT_MAX_FDES ? (d->d_size - at) / 8
									   : CFIFLAT_MAX_FDES);
	for (uint32_t i = 0; i < count && !o->full; i++) {
		int32_t loc, next = 0;
		memcpy(&loc, p + at + (size_t)i * 8, 4);
		if (i + 1 < count)
			memcpy(&next, p + at + (size_t)(i + 1) * 8, 4);
		uint64_t pc = ph->p_vaddr + (uint64_t)(int64_t)loc;
		uint64_t limit = i + 1 < count ? ph->p_vaddr + (uint64_t)(int64_t)next : UINT64_MAX;
		int e = cfiflat_fde(o, cfi, pc, limit > pc ? limit : UINT64_MAX);
		if (e < 0)
			return e;
	}
	return 0;
}

static int cfiflat_serialize(const struct cfiflat_out *o, char **out, size_t *len)
{
	struct cfiflat_hdr h = {
	    .magic = CFIFLAT_MAGIC, .nloads = o->nloads, .nrules = o->nrules, .nrows = o->nrows};
	size_t sl = o->nloads * sizeof(o->loads[0]), su = o->nrules * sizeof(o->rules[0]),
	       sr = (size_t)o->nrows * sizeof(o->rows[0]);
	char *b = malloc(sizeof(h) + sl + su + sr);
	if (!b)
		return -ENOMEM;
	memcpy(b, &h, sizeof(h));
	memcpy(b + sizeof(h), o->loads, sl);
	if (su)
		memcpy(b + sizeof(h) + sl, o->rules, su);
	if (sr)
		memcpy(b + sizeof(h) + sl + su, o->rows, sr);
	*out = b;
	*len = sizeof(h) + sl + su + sr;
	return 0;
}

int cfiflat_encode_fd(int fd, char **out, size_t *len, struct fs_error *err)
{
	struct cfiflat_out o = {0};
	int r = 0;
	*out = NULL;
	*len = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return cfiflat_bad(err, ENOSYS, "libelf");
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		if (elf)
			elf_end(elf);
		return cfiflat_bad(err, ENOEXEC, "not an x86_64 ELF file");
	}
	o.rules = calloc(CFIFLAT_MAX_RULES, sizeof(*o.rules));
	o.hash = calloc(CFIFLAT_HASH, sizeof(*o.hash));
	if (!o.rules || !o.hash) {
		r = cfiflat_bad(err, ENOMEM, "allocating the rule table");
		goto out;
	}
	size_t nph = 0;
	GElf_Phdr ehf = {0};
	if (elf_getphdrnum(elf, &nph) < 0)
		nph = 0;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_GNU_EH_FRAME)
			ehf = ph;
		if (ph.p_type == PT_LOAD && ph.p_filesz && o.nloads < CFIFLAT_MAX_LOADS &&
		    ph.p_offset + ph.p_filesz > ph.p_offset &&
		    ph.p_vaddr + ph.p_filesz > ph.p_vaddr)
			o.loads[o.nloads++] =
			    (struct cfiflat_load){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
	Dwarf_CFI *cfi = ehf.p_type == PT_GNU_EH_FRAME ? dwarf_getcfi_elf(elf) : NULL;
	if (cfi) {
		r = cfiflat_walk_hdr(&o, elf, &ehf, cfi);
		dwarf_cfi_end(cfi);
		if (r < 0) {
			r = cfiflat_bad(err, -r, "out of memory walking the FDEs");
			goto out;
		}
	}
	if ((r = cfiflat_serialize(&o, out, len)) < 0)
		r = cfiflat_bad(err, -r, "encoding the table");
out:
	free(o.rules);
	free(o.hash);
	free(o.rows);
	elf_end(elf);
	return r;
}

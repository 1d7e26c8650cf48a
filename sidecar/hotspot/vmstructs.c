/* vmstructs.c - the VMStructs tables of a HotSpot JVM, read once into
 * lookups.
 *
 * gHotSpotVMStructs (type, field, type string, is static, offset, address),
 * gHotSpotVMTypes (type, size), gHotSpotVMIntConstants and
 * gHotSpotVMLongConstants (name, value) are arrays whose row layout is
 * itself exported (the *Offset and *ArrayStride symbols), ending with a row
 * whose name is NULL. Everything is bounded: the stride, each column's
 * offset within it, the number of rows and the length of each name. Names
 * live in libjvm.so's read-only data, so they are read through a small page
 * cache (a few hundred reads instead of thousands). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_int.h"

#define VS_PAGE	       4096u
#define VS_CACHE_PAGES 32

struct vs_field {
	char *type, *field, *typestr;
	int is_static;
	uint64_t value; /* offset, or address when static */
};

struct vs_named {
	char *name;
	int64_t value;
};

struct vmstructs {
	struct vs_field *fields;
	size_t nfields;
	struct vs_named *types; /* value: size */
	size_t ntypes;
	struct vs_named *consts;
	size_t nconsts;
};

struct vs_pages {
	const struct hs_reader *r;
	uint64_t page[VS_CACHE_PAGES]; /* 0: empty */
	uint8_t data[VS_CACHE_PAGES][VS_PAGE];
};

static const uint8_t *vs_page(struct vs_pages *pc, uint64_t page)
{
	size_t slot = (size_t)(page / VS_PAGE) % VS_CACHE_PAGES;
	if (pc->page[slot] != page) {
		pc->page[slot] = 0;
		if (hsmem_read(pc->r, page, pc->data[slot], VS_PAGE) < 0)
			return NULL;
		pc->page[slot] = page;
	}
	return pc->data[slot];
}

/* A name of at most HS_MAX_TABLE_STRING-1 bytes, malloc'd; NULL when
 * unreadable or too long. */
static char *vs_string(struct vs_pages *pc, uint64_t addr)
{
	char buf[HS_MAX_TABLE_STRING];
	size_t got = 0;
	while (got < sizeof(buf)) {
		uint64_t a = addr + got;
		const uint8_t *p = vs_page(pc, a & ~(uint64_t)(VS_PAGE - 1));
		if (!p)
			return NULL;
		size_t off = (size_t)(a & (VS_PAGE - 1));
		size_t n = VS_PAGE - off;
		if (n > sizeof(buf) - got)
			n = sizeof(buf) - got;
		memcpy(buf + got, p + off, n);
		char *nul = memchr(buf + got, '\0', n);
		if (nul)
			return strdup(buf);
		got += n;
	}
	return NULL;
}

/* A table's row layout, read from the exported variables. */
struct vs_table {
	uint64_t base, stride;
	uint64_t col[6]; /* the name column first */
	int ncol;
};

static int vs_table_open(const struct hs_reader *r, const struct hs_syms *s, int table,
			 const int *cols, int ncol, int stride_sym, struct vs_table *t)
{
	int rc = hsmem_read_u64(r, s->addr[table], &t->base);
	if (rc == 0)
		rc = hsmem_read_u64(r, s->addr[stride_sym], &t->stride);
	if (rc < 0)
		return rc;
	if (!hsmem_ptr_ok(t->base, 8) || t->stride < 8 || t->stride > HS_MAX_STRIDE ||
	    t->stride % 8)
		return -EINVAL;
	t->ncol = ncol;
	for (int i = 0; i < ncol; i++) {
		rc = hsmem_read_u64(r, s->addr[cols[i]], &t->col[i]);
		if (rc < 0)
			return rc;
		if (t->col[i] > t->stride - 8)
			return -EINVAL;
	}
	return 0;
}

static uint64_t vs_u64(const uint8_t *row, uint64_t off)
{
	uint64_t v;
	memcpy(&v, row + off, sizeof(v));
	return v;
}

static void vs_field_free(struct vs_field *f)
{
	free(f->type);
	free(f->field);
	free(f->typestr);
}

/* Rows are read 32 at a time; a row whose name pointer is NULL ends the
 * table. Each row is handed to fn; -ENOMEM stops the walk. */
static int vs_walk(const struct hs_reader *r, const struct vs_table *t,
		   int (*fn)(void *ctx, const uint8_t *row), void *ctx)
{
	uint8_t rows[32 * HS_MAX_STRIDE];
	for (size_t i = 0; i < HS_MAX_TABLE_ROWS; i += 32) {
		size_t n = 32;
		int rc = hsmem_read(r, t->base + i * t->stride, rows, n * t->stride);
		while (rc == -EFAULT && n > 1) { /* the table may end near a mapping's end */
			n /= 2;
			rc = hsmem_read(r, t->base + i * t->stride, rows, n * t->stride);
		}
		if (rc < 0)
			return rc;
		for (size_t k = 0; k < n; k++) {
			const uint8_t *row = rows + k * t->stride;
			if (vs_u64(row, t->col[0]) == 0)
				return 0;
			rc = fn(ctx, row);
			if (rc < 0)
				return rc;
		}
	}
	return 0; /* over the row bound: keep what was read */
}

struct vs_walk_ctx {
	struct vmstructs *vs;
	struct vs_pages *pc;
	const struct vs_table *t;
	int kind; /* 0 fields, 1 types, 2 int constants, 3 long constants */
};

static int vs_add_field(struct vs_walk_ctx *c, const uint8_t *row)
{
	struct vmstructs *vs = c->vs;
	const struct vs_table *t = c->t;
	struct vs_field f = {0};
	f.type = vs_string(c->pc, vs_u64(row, t->col[0]));
	f.field = vs_string(c->pc, vs_u64(row, t->col[1]));
	uint64_t ts = vs_u64(row, t->col[2]);
	f.typestr = ts ? vs_string(c->pc, ts) : strdup("");
	int32_t st;
	memcpy(&st, row + t->col[3], sizeof(st));
	f.is_static = st != 0;
	f.value = vs_u64(row, f.is_static ? t->col[5] : t->col[4]);
	if (!f.type || !f.field || !f.typestr) {
		vs_field_free(&f);
		return 0; /* unreadable row: skipped */
	}
	struct vs_field *p = realloc(vs->fields, (vs->nfields + 1) * sizeof(*p));
	if (!p) {
		vs_field_free(&f);
		return -ENOMEM;
	}
	vs->fields = p;
	vs->fields[vs->nfields++] = f;
	return 0;
}

static int vs_add_named(struct vs_walk_ctx *c, const uint8_t *row)
{
	struct vs_named n = {0};
	n.name = vs_string(c->pc, vs_u64(row, c->t->col[0]));
	if (!n.name)
		return 0;
	if (c->kind == 2) {
		int32_t v;
		memcpy(&v, row + c->t->col[1], sizeof(v));
		n.value = v;
	} else {
		n.value = (int64_t)vs_u64(row, c->t->col[1]);
	}
	struct vs_named **arr = c->kind == 1 ? &c->vs->types : &c->vs->consts;
	size_t *cnt = c->kind == 1 ? &c->vs->ntypes : &c->vs->nconsts;
	struct vs_named *p = realloc(*arr, (*cnt + 1) * sizeof(*p));
	if (!p) {
		free(n.name);
		return -ENOMEM;
	}
	*arr = p;
	(*arr)[(*cnt)++] = n;
	return 0;
}

static int vs_row(void *ctx, const uint8_t *row)
{
	struct vs_walk_ctx *c = ctx;
	return c->kind == 0 ? vs_add_field(c, row) : vs_add_named(c, row);
}

void vmstructs_free(struct vmstructs *vs)
{
	if (!vs)
		return;
	for (size_t i = 0; i < vs->nfields; i++)
		vs_field_free(&vs->fields[i]);
	for (size_t i = 0; i < vs->ntypes; i++)
		free(vs->types[i].name);
	for (size_t i = 0; i < vs->nconsts; i++)
		free(vs->consts[i].name);
	free(vs->fields);
	free(vs->types);
	free(vs->consts);
	free(vs);
}

static int vs_read_table(struct vmstructs *vs, struct vs_pages *pc, const struct hs_syms *s,
			 int kind, struct fs_error *err)
{
	static const int cols[4][6] = {
	    {HS_SYM_STRUCT_TYPE_NAME, HS_SYM_STRUCT_FIELD_NAME, HS_SYM_STRUCT_TYPE_STRING,
	     HS_SYM_STRUCT_IS_STATIC, HS_SYM_STRUCT_OFFSET, HS_SYM_STRUCT_ADDRESS},
	    {HS_SYM_TYPE_TYPE_NAME, HS_SYM_TYPE_SIZE},
	    {HS_SYM_INT_NAME, HS_SYM_INT_VALUE},
	    {HS_SYM_LONG_NAME, HS_SYM_LONG_VALUE},
	};
	static const int ncols[4] = {6, 2, 2, 2};
	static const int table[4] = {HS_SYM_STRUCTS, HS_SYM_TYPES, HS_SYM_INT_CONSTANTS,
				     HS_SYM_LONG_CONSTANTS};
	static const int stride[4] = {HS_SYM_STRUCT_STRIDE, HS_SYM_TYPE_STRIDE, HS_SYM_INT_STRIDE,
				      HS_SYM_LONG_STRIDE};
	struct vs_table t;
	int rc = vs_table_open(pc->r, s, table[kind], cols[kind], ncols[kind], stride[kind], &t);
	if (rc < 0)
		return fs_error_set(err, -rc, "reading the layout of %s",
				    hs_sym_names[table[kind]]);
	struct vs_walk_ctx c = {.vs = vs, .pc = pc, .t = &t, .kind = kind};
	rc = vs_walk(pc->r, &t, vs_row, &c);
	if (rc < 0)
		return fs_error_set(err, -rc, "reading %s", hs_sym_names[table[kind]]);
	return 0;
}

int vmstructs_read(const struct hs_reader *r, const struct hs_syms *syms, struct vmstructs **out,
		   struct fs_error *err)
{
	struct vmstructs *vs = calloc(1, sizeof(*vs));
	struct vs_pages *pc = calloc(1, sizeof(*pc));
	if (!vs || !pc) {
		free(vs);
		free(pc);
		return fs_error_set(err, ENOMEM, "allocating the VMStructs tables");
	}
	pc->r = r;
	int rc = 0;
	for (int kind = 0; kind < 4 && rc == 0; kind++)
		rc = vs_read_table(vs, pc, syms, kind, err);
	free(pc);
	if (rc == 0 && vs->nfields == 0)
		rc = fs_error_set(err, ENOENT, "gHotSpotVMStructs is empty");
	if (rc < 0) {
		vmstructs_free(vs);
		return rc;
	}
	*out = vs;
	return 0;
}

static const struct vs_field *vs_find(const struct vmstructs *vs, const char *type,
				      const char *field, int is_static)
{
	for (size_t i = 0; i < vs->nfields; i++) {
		const struct vs_field *f = &vs->fields[i];
		if (f->is_static == is_static && strcmp(f->field, field) == 0 &&
		    strcmp(f->type, type) == 0)
			return f;
	}
	return NULL;
}

int vmstructs_type_size(const struct vmstructs *vs, const char *type, uint64_t *size)
{
	for (size_t i = 0; i < vs->ntypes; i++) {
		if (strcmp(vs->types[i].name, type) == 0) {
			if ((uint64_t)vs->types[i].value > HS_MAX_FIELD_OFFSET)
				return -ERANGE;
			*size = (uint64_t)vs->types[i].value;
			return 0;
		}
	}
	return -ENOENT;
}

/* Bytes of a field of type string ts: pointers are 8, known types their
 * size, anything else 0 (unknown). */
static int vs_width(const struct vmstructs *vs, const char *ts)
{
	size_t n = strlen(ts);
	uint64_t size;
	if (n && ts[n - 1] == '*')
		return 8;
	if (strncmp(ts, "volatile ", 9) == 0)
		ts += 9;
	if (vmstructs_type_size(vs, ts, &size) == 0 && size <= 8)
		return (int)size;
	return 0;
}

int vmstructs_field(const struct vmstructs *vs, const char *type, const char *field,
		    uint64_t *offset, int *width)
{
	const struct vs_field *f = vs_find(vs, type, field, 0);
	if (!f)
		return -ENOENT;
	if (f->value > HS_MAX_FIELD_OFFSET)
		return -ERANGE;
	*offset = f->value;
	if (width)
		*width = vs_width(vs, f->typestr);
	return 0;
}

int vmstructs_static(const struct vmstructs *vs, const char *type, const char *field,
		     uint64_t *address)
{
	const struct vs_field *f = vs_find(vs, type, field, 1);
	if (!f)
		return -ENOENT;
	*address = f->value;
	return 0;
}

int vmstructs_constant(const struct vmstructs *vs, const char *name, int64_t *value)
{
	for (size_t i = 0; i < vs->nconsts; i++) {
		if (strcmp(vs->consts[i].name, name) == 0) {
			*value = vs->consts[i].value;
			return 0;
		}
	}
	return -ENOENT;
}

size_t vmstructs_count(const struct vmstructs *vs, size_t *types, size_t *constants)
{
	if (types)
		*types = vs->ntypes;
	if (constants)
		*constants = vs->nconsts;
	return vs->nfields;
}

/* kallsyms.c - see kallsyms.h */
#include "kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"

#define KALLSYMS_FILE_MAX (256u << 20)

struct ksym {
	uint64_t addr;
	uint32_t name;	 /* offset into pool */
	uint32_t module; /* offset into pool, UINT32_MAX = core kernel */
};

struct kallsyms {
	struct ksym *syms;
	size_t n, cap;
	char *pool;
	size_t pool_len, pool_cap;
};

static int kallsyms_pool_add(struct kallsyms *ks, const char *s, size_t len, uint32_t *off)
{
	if (ks->pool_len + len + 1 > UINT32_MAX)
		return -E2BIG;
	if (ks->pool_len + len + 1 > ks->pool_cap) {
		size_t cap = ks->pool_cap ? ks->pool_cap * 2 : 1 << 16;
		while (cap < ks->pool_len + len + 1)
			cap *= 2;
		char *p = realloc(ks->pool, cap);
		if (!p)
			return -ENOMEM;
		ks->pool = p;
		ks->pool_cap = cap;
	}
	memcpy(ks->pool + ks->pool_len, s, len);
	ks->pool[ks->pool_len + len] = '\0';
	*off = (uint32_t)ks->pool_len;
	ks->pool_len += len + 1;
	return 0;
}

static int kallsyms_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Stable-ish: keep the first name seen for an address (it is
	 * usually the most specific, e.g. "_stext" vs "_text"). */
	return x->name < y->name ? -1 : x->name > y->name;
}

static int kallsyms_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	if (len == 0 || len > 16)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		int d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* One line: "ADDR TYPE NAME[\t[MODULE]]". Lines that do not parse are
 * skipped: the format is the kernel's, but the parser is also fuzzed. */
static int kallsyms_line(struct kallsyms *ks, const char *line, size_t len, uint32_t *last_mod,
			 const char **last_mod_str, size_t *last_mod_len)
{
	const char *end = line + len;
	const char *sp = memchr(line, ' ', len);
	uint64_t addr;
	if (!sp || kallsyms_hex(line, (size_t)(sp - line), &addr) < 0)
		return 0;
	if (end - sp < 4 || sp[2] != ' ')
		return 0;
	char type = sp[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	if (addr == 0)
		return 0;
	const char *name = sp + 3;
	const char *name_end = name;
	while (name_end < end && *name_end != '\t' && *name_end != ' ')
		name_end++;
	if (name_end == name)
		return 0;
	uint32_t mod = UINT32_MAX;
	const char *m = name_end;
	while (m < end && (*m == '\t' || *m == ' '))
		m++;
	if (m < end && *m == '[') {
		const char *me = memchr(m, ']', (size_t)(end - m));
		if (me && me > m + 1) {
			size_t ml = (size_t)(me - m - 1);
			if (*last_mod_str && *last_mod_len == ml &&
			    !memcmp(*last_mod_str, m + 1, ml)) {
				mod = *last_mod;
			} else {
				int r = kallsyms_pool_add(ks, m + 1, ml, &mod);
				if (r < 0)
					return r;
				*last_mod = mod;
				*last_mod_str = m + 1;
				*last_mod_len = ml;
			}
		}
	}
	if (ks->n == ks->cap) {
		if (ks->cap >= KALLSYMS_MAX_SYMBOLS)
			return -E2BIG;
		size_t cap = ks->cap ? ks->cap * 2 : 4096;
		struct ksym *p = realloc(ks->syms, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ks->syms = p;
		ks->cap = cap;
	}
	struct ksym *k = &ks->syms[ks->n];
	int r = kallsyms_pool_add(ks, name, (size_t)(name_end - name), &k->name);
	if (r < 0)
		return r;
	k->addr = addr;
	k->module = mod;
	ks->n++;
	return 0;
}

int kallsyms_parse(const char *buf, size_t len, struct kallsyms **out, struct fs_error *err)
{
	cleanup_kallsyms struct kallsyms *ks = calloc(1, sizeof(*ks));
	if (!ks)
		return fs_error_set(err, ENOMEM, "kallsyms: allocating the table");
	uint32_t last_mod = UINT32_MAX;
	const char *last_mod_str = NULL;
	size_t last_mod_len = 0;
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int r = kallsyms_line(ks, p, ll, &last_mod, &last_mod_str, &last_mod_len);
		if (r == -E2BIG)
			break; /* keep what fits: the bound is documented */
		if (r < 0)
			return fs_error_set(err, -r, "kallsyms: building the symbol table");
		p += ll + 1;
	}
	if (ks->n)
		qsort(ks->syms, ks->n, sizeof(*ks->syms), kallsyms_cmp);
	*out = steal_pointer(&ks);
	return 0;
}

int kallsyms_load(const char *path, struct kallsyms **out, struct fs_error *err)
{
	if (!path)
		path = KALLSYMS_PATH;
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fs_error_set(err, errno, "opening %s", path);
	cleanup_free char *buf = NULL;
	size_t len = 0;
	if (fileio_read_fd(fd, KALLSYMS_FILE_MAX, &buf, &len, err) < 0)
		return fs_error_wrap(err, "reading %s", path);
	int r = kallsyms_parse(buf, len, out, err);
	if (r < 0)
		return fs_error_wrap(err, "%s", path);
	return 0;
}

const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *offset,
			    const char **module)
{
	if (!ks || ks->n == 0 || addr < ks->syms[0].addr)
		return NULL;
	size_t lo = 0, hi = ks->n; /* find last sym with sym.addr <= addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	/* Several names may share an address: take the first of them. */
	while (lo > 0 && ks->syms[lo - 1].addr == ks->syms[lo].addr)
		lo--;
	const struct ksym *k = &ks->syms[lo];
	uint64_t limit = k->addr + KALLSYMS_MAX_GAP;
	size_t next = lo + 1;
	while (next < ks->n && ks->syms[next].addr == k->addr)
		next++;
	if (next < ks->n && ks->syms[next].addr < limit)
		limit = ks->syms[next].addr;
	if (addr >= limit)
		return NULL;
	if (offset)
		*offset = addr - k->addr;
	if (module)
		*module = k->module == UINT32_MAX ? NULL : ks->pool + k->module;
	return ks->pool + k->name;
}

size_t kallsyms_count(const struct kallsyms *ks)
{
	return ks ? ks->n : 0;
}

void kallsyms_free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->pool);
	free(ks);
}

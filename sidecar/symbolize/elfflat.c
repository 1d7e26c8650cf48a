/* elfflat.c - see elfflat.h */
#include "elfflat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

/* ---- encoding (in the sandboxed child) ---------------------------------- */

struct elfflat_buf {
	char *p;
	size_t len, cap;
};

static int elfflat_put(struct elfflat_buf *b, const void *data, size_t len)
{
	if (len == 0) /* an empty name, from a decoded table */
		return 0;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		while (cap < b->len + len)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	return 0;
}

int elfflat_encode(const struct elfsyms *es, int demangle, char **out, size_t *len)
{
	struct elfflat_hdr h = {.magic = ELFFLAT_MAGIC};
	size_t nloads, n = elfsyms_count(es);
	const struct elfsyms_load *loads = elfsyms_loads(es, &nloads);
	size_t blen;
	const unsigned char *id = elfsyms_build_id(es, &blen);
	if (n > ELFFLAT_MAX_SYMBOLS)
		n = ELFFLAT_MAX_SYMBOLS;
	cleanup_free struct elfflat_sym *syms = calloc(n ? n : 1, sizeof(*syms));
	struct elfflat_buf pool = {0};
	char name[ELFSYMS_MAX_NAME];
	size_t kept = 0;
	if (!syms)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct elfsyms_sym s;
		const char *raw;
		if (elfsyms_symbol(es, i, &s, &raw) < 0)
			break;
		/* A name the demangler cannot take (too deep, out of memory)
		 * stays mangled: it costs that name, not the file. */
		const char *show = raw;
		size_t l = strnlen(raw, sizeof(name) - 1);
		if (demangle) {
			elfsyms_demangle(raw, name, sizeof(name));
			show = name;
			l = strlen(name);
		}
		if (pool.len + l + 1 > ELFFLAT_MAX_POOL)
			break;
		syms[kept] = (struct elfflat_sym){s.addr, s.size, (uint32_t)pool.len};
		if (elfflat_put(&pool, show, l) < 0 || elfflat_put(&pool, "", 1) < 0) {
			free(pool.p);
			return -ENOMEM;
		}
		kept++;
	}
	h.nloads = (uint32_t)nloads;
	h.nsyms = (uint32_t)kept;
	h.pool_len = (uint32_t)pool.len;
	h.build_id_len = (uint32_t)blen;
	if (blen)
		memcpy(h.build_id, id, blen);
	struct elfflat_buf b = {0};
	int r = elfflat_put(&b, &h, sizeof(h));
	if (r == 0 && nloads)
		r = elfflat_put(&b, loads, nloads * sizeof(*loads));
	if (r == 0 && kept)
		r = elfflat_put(&b, syms, kept * sizeof(*syms));
	if (r == 0 && pool.len)
		r = elfflat_put(&b, pool.p, pool.len);
	free(pool.p);
	if (r < 0) {
		free(b.p);
		return r;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

/* ---- decoding (in the sidecar) ------------------------------------------ */

static int elfflat_bad(struct fs_error *err, const char *what, size_t index)
{
	return fs_error_set(err, EBADMSG, "malformed symbol table from the ELF sandbox: %s (%zu)",
			    what, index);
}

/* The header and that the sizes add up to len exactly. */
static int elfflat_check_hdr(const struct elfflat_hdr *h, size_t len, struct fs_error *err)
{
	if (memcmp(h->magic, ELFFLAT_MAGIC, sizeof(h->magic)) != 0)
		return elfflat_bad(err, "bad magic", 0);
	if (h->nloads > ELFSYMS_MAX_LOADS)
		return elfflat_bad(err, "too many program headers", h->nloads);
	if (h->nsyms > ELFFLAT_MAX_SYMBOLS)
		return elfflat_bad(err, "too many symbols", h->nsyms);
	if (h->pool_len > ELFFLAT_MAX_POOL)
		return elfflat_bad(err, "name pool too large", h->pool_len);
	if (h->build_id_len > ELFSYMS_BUILD_ID_MAX)
		return elfflat_bad(err, "build id too long", h->build_id_len);
	/* Each term is bounded above, so the sum cannot overflow. */
	size_t want = sizeof(*h) + (size_t)h->nloads * sizeof(struct elfsyms_load) +
		      (size_t)h->nsyms * sizeof(struct elfflat_sym) + h->pool_len;
	if (want != len)
		return elfflat_bad(err, "length does not add up", len);
	if ((h->nsyms == 0) != (h->pool_len == 0))
		return elfflat_bad(err, "names without symbols or symbols without names",
				   h->pool_len);
	return 0;
}

static int elfflat_check_loads(const struct elfsyms_load *l, size_t n, struct fs_error *err)
{
	for (size_t i = 0; i < n; i++)
		if (l[i].offset + l[i].filesz < l[i].offset || l[i].filesz == 0)
			return elfflat_bad(err, "bad program header", i);
	return 0;
}

static int elfflat_check_syms(const struct elfsyms_sym *s, size_t n, const char *pool,
			      size_t pool_len, struct fs_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (i && s[i].addr <= s[i - 1].addr)
			return elfflat_bad(err, "symbols not sorted or not unique", i);
		if (s[i].name >= pool_len)
			return elfflat_bad(err, "name outside the pool", i);
		size_t room = pool_len - s[i].name;
		if (room > ELFSYMS_MAX_NAME)
			room = ELFSYMS_MAX_NAME;
		if (!memchr(pool + s[i].name, '\0', room))
			return elfflat_bad(err, "name not terminated or too long", i);
	}
	return 0;
}

int elfflat_decode(const void *buf, size_t len, struct elfsyms **out, struct fs_error *err)
{
	struct elfflat_hdr h;
	*out = NULL;
	if (len < sizeof(h))
		return elfflat_bad(err, "short header", len);
	memcpy(&h, buf, sizeof(h));
	int r = elfflat_check_hdr(&h, len, err);
	if (r < 0)
		return r;
	const char *p = (const char *)buf + sizeof(h);
	struct elfsyms_load loads[ELFSYMS_MAX_LOADS];
	if (h.nloads)
		memcpy(loads, p, h.nloads * sizeof(*loads));
	p += h.nloads * sizeof(*loads);
	if ((r = elfflat_check_loads(loads, h.nloads, err)) < 0)
		return r;
	/* Copied out: buf may be unaligned, and the table outlives it. */
	cleanup_free struct elfsyms_sym *syms = malloc(h.nsyms ? h.nsyms * sizeof(*syms) : 1);
	cleanup_free char *pool = malloc(h.pool_len ? h.pool_len : 1);
	if (!syms || !pool)
		return fs_error_set(err, ENOMEM, "copying a symbol table");
	for (size_t i = 0; i < h.nsyms; i++, p += sizeof(struct elfflat_sym)) {
		struct elfflat_sym fs;
		memcpy(&fs, p, sizeof(fs));
		syms[i] = (struct elfsyms_sym){fs.addr, fs.size, fs.name};
	}
	if (h.pool_len)
		memcpy(pool, p, h.pool_len);
	if ((r = elfflat_check_syms(syms, h.nsyms, pool, h.pool_len, err)) < 0)
		return r;
	r = elfsyms_adopt(syms, h.nsyms, pool, h.pool_len, loads, h.nloads, h.build_id,
			  h.build_id_len, out);
	if (r < 0)
		return fs_error_set(err, -r, "building a symbol table");
	syms = NULL;
	pool = NULL;
	return 0;
}

/* hsmap.c - a JVM's JIT map from its code heaps: see hsmap.h */
#include "hsmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_int.h"

struct hsmap_text {
	struct hotspot *hs;
	char *buf;
	size_t len, cap;
	struct hsmap_stats *st;
};

static int hsmap_line(struct hsmap_text *t, uint64_t start, uint64_t size, const char *name)
{
	size_t need = strlen(name) + 48;
	if (t->len + need > PERFMAP_MAX_INPUT)
		return -E2BIG;
	if (t->len + need > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1u << 16;
		while (cap < t->len + need)
			cap *= 2;
		char *p = realloc(t->buf, cap);
		if (!p)
			return -ENOMEM;
		t->buf = p;
		t->cap = cap;
	}
	int n = snprintf(t->buf + t->len, t->cap - t->len, "%" PRIx64 " %" PRIx64 " %s\n", start,
			 size, name);
	if (n < 0 || (size_t)n >= t->cap - t->len)
		return -EOVERFLOW;
	t->len += (size_t)n;
	return 0;
}

/* A name safe for a map line: no newline or control bytes. */
static void hsmap_clean(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static int hsmap_blob(void *ctx, const struct hotspot_blob *b)
{
	struct hsmap_text *t = ctx;
	char name[2 * HS_MAX_SYMBOL + 2];
	if (b->code_end <= b->code_begin)
		return 0;
	switch (b->kind) {
	case HOTSPOT_BLOB_NMETHOD: {
		int rc = hotspot_method_name(t->hs, b->method, name, sizeof(name));
		if (rc < 0)
			return rc;
		if (rc == 0) {
			t->st->unnamed++;
			return 0;
		}
		t->st->nmethods++;
		break;
	}
	case HOTSPOT_BLOB_INTERPRETER:
		snprintf(name, sizeof(name), "Interpreter");
		t->st->stubs++;
		break;
	default:
		if (!b->name[0])
			return 0;
		snprintf(name, sizeof(name), "%s", b->name);
		t->st->stubs++;
		break;
	}
	hsmap_clean(name);
	return hsmap_line(t, b->code_begin, b->code_end - b->code_begin, name);
}

int hsmap_build(pid_t pid, struct perfmap **out, struct hsmap_stats *st, struct fs_error *err)
{
	struct hsmap_stats local;
	struct hotspot *hs;
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	*out = NULL;
	int rc = hotspot_open(pid, &hs, err);
	if (rc < 0)
		return rc;
	st->major = hotspot_major_version(hs);
	struct hsmap_text t = {.hs = hs, .st = st};
	rc = codecache_each_blob(hs, HSMAP_MAX_BLOBS, hsmap_blob, &t);
	hotspot_close(hs);
	if (rc < 0) {
		free(t.buf);
		return fs_error_set(err, -rc, "reading the code cache of pid %d", (int)pid);
	}
	st->bytes = t.len;
	rc = perfmap_parse(t.buf ? t.buf : "", t.len, 0, out, err);
	free(t.buf);
	return rc;
}

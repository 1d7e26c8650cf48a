/* hsmap.c - a JVM's JIT map from its code heaps: see hsmap.h */
#include "hsmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_int.h"
#include "timeutil.h"

#define HSMAP_MAX_NAME 2048 /* an inline chain's name is cut here */

struct hsmap_text {
	struct hotspot *hs;
	char *buf;
	size_t len, cap;
	struct hsmap_stats *st;
	int unfold;		       /* split nmethods at their inlining boundaries */
	const struct hotspot_blob *b;  /* the nmethod being split */
	uint64_t pend_start, pend_end; /* the range not yet written */
	uint64_t deadline;	       /* CLOCK_MONOTONIC ms */
	size_t max_steps;
	char pend[HSMAP_MAX_NAME];
	char cur[HSMAP_MAX_NAME];
};

/* One unit of work; -ETIME once a budget is spent (the clock is read every
 * 256 steps). */
static int hsmap_step(struct hsmap_text *t)
{
	size_t s = ++t->st->steps;
	if (s > t->max_steps) {
		t->st->cut = "step budget";
		return -ETIME;
	}
	if ((s & 255) == 0 && timeutil_now_ms() >= t->deadline) {
		t->st->cut = "time budget";
		return -ETIME;
	}
	return 0;
}

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

/* "outer->...->inner" for a chain (innermost first); the blob's method
 * when n is 0. 1 named, 0 not, -errno. */
static int hsmap_chain_name(struct hsmap_text *t, const struct hotspot_scope *sc, int n, char *out,
			    size_t len)
{
	char m[2 * HS_MAX_SYMBOL + 2];
	if (n == 0)
		return hotspot_method_name(t->hs, t->b->method, out, len);
	size_t at = 0;
	out[0] = '\0';
	for (int i = n - 1; i >= 0; i--) {
		int rc = hotspot_method_name(t->hs, sc[i].method, m, sizeof(m));
		if (rc < 0)
			return rc;
		if (rc == 0)
			snprintf(m, sizeof(m), "[unknown]");
		int w = snprintf(out + at, len - at, "%s%s", i == n - 1 ? "" : "->", m);
		if (w < 0 || (size_t)w >= len - at)
			break; /* cut: keep what fits */
		at += (size_t)w;
	}
	return 1;
}

static int hsmap_flush(struct hsmap_text *t)
{
	if (t->pend_end <= t->pend_start)
		return 0;
	hsmap_clean(t->pend);
	int rc = hsmap_line(t, t->pend_start, t->pend_end - t->pend_start, t->pend);
	t->pend_end = t->pend_start;
	return rc;
}

/* One range of an nmethod: merged with the previous one when it has the
 * same chain. */
static int hsmap_range(void *ctx, uint64_t start, uint64_t end, const struct hotspot_scope *sc,
		       int n)
{
	struct hsmap_text *t = ctx;
	int rc = hsmap_step(t);
	if (rc < 0)
		return rc;
	rc = hsmap_chain_name(t, sc, n, t->cur, sizeof(t->cur));
	if (rc < 0)
		return rc;
	if (rc == 0)
		snprintf(t->cur, sizeof(t->cur), "[unknown]");
	if (t->pend_end == start && t->pend_end > t->pend_start && strcmp(t->cur, t->pend) == 0) {
		t->pend_end = end;
		return 0;
	}
	if ((rc = hsmap_flush(t)) < 0)
		return rc;
	if (n > 1)
		t->st->inlined++;
	memcpy(t->pend, t->cur, sizeof(t->pend));
	t->pend_start = start;
	t->pend_end = end;
	return 0;
}

/* An nmethod split at its inlining boundaries; 1 done, 0 no debug info. */
static int hsmap_split(struct hsmap_text *t, const struct hotspot_blob *b)
{
	t->b = b;
	t->pend_start = t->pend_end = 0;
	int rc = hsscopes_ranges(t->hs, b, hsmap_range, t);
	if (rc == -ENOMEM || rc == -E2BIG || rc == -EOVERFLOW || rc == -ETIME) {
		if (rc == -ETIME)
			hsmap_flush(t); /* what was read of it is kept */
		return rc;
	}
	if (rc < 0)
		return 0;
	return hsmap_flush(t) < 0 ? -ENOMEM : 1;
}

static int hsmap_blob(void *ctx, const struct hotspot_blob *b)
{
	struct hsmap_text *t = ctx;
	char name[2 * HS_MAX_SYMBOL + 2];
	int src = hsmap_step(t);
	if (src < 0)
		return src;
	if (b->code_end <= b->code_begin)
		return 0;
	switch (b->kind) {
	case HOTSPOT_BLOB_NMETHOD: {
		int rc = t->unfold ? hsmap_split(t, b) : 0;
		if (rc < 0)
			return rc;
		if (rc > 0) {
			t->st->nmethods++;
			return 0;
		}
		rc = hotspot_method_name(t->hs, b->method, name, sizeof(name));
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
	st->cut = "";
	*out = NULL;
	uint64_t deadline = timeutil_now_ms() + HSMAP_MAX_MS;
	int rc = hotspot_open(pid, &hs, err);
	if (rc < 0)
		return rc;
	return hsmap_build_from(hs, pid, deadline, out, st, err);
}

int hsmap_build_from(struct hotspot *hs, pid_t pid, uint64_t deadline, struct perfmap **out,
		     struct hsmap_stats *st, struct fs_error *err)
{
	int rc;
	*out = NULL;
	st->major = hotspot_major_version(hs);
	struct hsmap_text *t = calloc(1, sizeof(*t));
	if (!t) {
		hotspot_close(hs);
		return fs_error_set(err, ENOMEM, "allocating the map");
	}
	t->hs = hs;
	t->st = st;
	t->unfold = 1;
	t->deadline = deadline;
	t->max_steps = HSMAP_MAX_STEPS;
#ifdef FS_TEST_BUILD
	/* tests: a smaller step budget, to see a cut walk */
	const char *lower = getenv("FS_TEST_HSMAP_STEPS");
	if (lower && strtoul(lower, NULL, 10) < t->max_steps)
		t->max_steps = strtoul(lower, NULL, 10);
#endif
	rc = codecache_each_blob(hs, HSMAP_MAX_BLOBS, hsmap_blob, t);
	if (rc == -ETIME)
		rc = 0; /* cut: st->cut says why; the map has what was read */
	hotspot_close(hs);
	char *buf = t->buf;
	size_t len = t->len;
	free(t);
	if (rc < 0) {
		free(buf);
		return fs_error_set(err, -rc, "reading the code cache of pid %d", (int)pid);
	}
	st->bytes = len;
	rc = perfmap_parse(buf ? buf : "", len, 0, out, err);
	free(buf);
	return rc;
}

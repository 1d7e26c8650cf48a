/* perfmap_tail.c - see perfmap_tail.h */
#include "perfmap_tail.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"

void perfmap_tail_init(struct perfmap_tail *t)
{
	memset(t, 0, sizeof(*t));
}

void perfmap_tail_reset(struct perfmap_tail *t)
{
	unsigned restarts = t->restarts;
	perfmap_free(t->map);
	perfmap_tail_init(t);
	t->restarts = restarts;
}

/* Copy name into the arena at *used with control characters made '?': C0,
 * DEL and C1 (U+0080-U+009F, "\xc2\x80".."\xc2\x9f" in UTF-8, which
 * terminals take as CSI and the like). Never longer than name. */
static void perfmap_tail_put_name(char *arena, size_t *used, const char *name)
{
	for (; *name; name++) {
		unsigned char c = (unsigned char)*name, d = (unsigned char)name[1];
		if (c == 0xc2 && d >= 0x80 && d <= 0x9f) {
			arena[(*used)++] = '?';
			name++;
			continue;
		}
		arena[(*used)++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	arena[(*used)++] = '\0';
}

/* old (may be NULL) with the newer entries of delta: an old entry that
 * overlaps any entry of delta is dropped. Both are sorted and disjoint, so
 * is the result. *out is a new map; old and delta are left as they are. */
static int perfmap_tail_merge(const struct perfmap *old, const struct perfmap *delta,
			      struct perfmap **out, size_t *dropped)
{
	size_t no = old ? old->count : 0, nd = delta->count;
	cleanup_free char *keep = calloc(no ? no : 1, 1);
	size_t names = 0, kept = 0;
	if (!keep)
		return -ENOMEM;
	*dropped = 0;
	for (size_t i = 0, j = 0; i < no; i++) {
		const struct perfmap_entry *o = &old->entries[i];
		/* the first delta entry that ends after o starts */
		while (j < nd && delta->entries[j].start + delta->entries[j].size <= o->start)
			j++;
		if (j < nd && delta->entries[j].start < o->start + o->size) {
			(*dropped)++;
			continue;
		}
		keep[i] = 1;
		kept++;
		names += strlen(o->name) + 1;
	}
	for (size_t j = 0; j < nd; j++)
		names += strlen(delta->entries[j].name) + 1;

	cleanup_free struct perfmap *m = calloc(1, sizeof(*m));
	cleanup_free struct perfmap_entry *v = calloc(kept + nd ? kept + nd : 1, sizeof(*v));
	cleanup_free char *arena = malloc(names ? names : 1);
	if (!m || !v || !arena)
		return -ENOMEM;
	size_t k = 0, used = 0, i = 0, j = 0;
	while (i < no || j < nd) {
		if (i < no && !keep[i]) {
			i++;
			continue;
		}
		const struct perfmap_entry *e;
		if (j >= nd || (i < no && old->entries[i].start < delta->entries[j].start))
			e = &old->entries[i++];
		else
			e = &delta->entries[j++];
		v[k] = *e;
		v[k].name = arena + used;
		perfmap_tail_put_name(arena, &used, e->name);
		k++;
	}
	m->count = k;
	m->lines = (old ? old->lines : 0) + delta->lines;
	m->skipped = (old ? old->skipped : 0) + delta->skipped;
	m->replaced = (old ? old->replaced : 0) + delta->replaced + *dropped;
	m->memory = used + k * sizeof(*v) + sizeof(*m);
	m->entries = steal_pointer(&v);
	m->names = steal_pointer(&arena);
	*out = steal_pointer(&m);
	return 0;
}

/* Parse buf (complete lines only) and merge it into t->map. */
static int perfmap_tail_add_lines(struct perfmap_tail *t, const char *buf, size_t len,
				  struct fs_error *err)
{
	cleanup_perfmap struct perfmap *delta = NULL;
	struct perfmap *merged = NULL;
	size_t dropped = 0;
	int r = perfmap_parse(buf, len, 0, &delta, err);
	if (r < 0)
		return r;
	size_t have = t->map ? t->map->count : 0;
	t->lines += delta->lines;
	t->skipped += delta->skipped;
	if (t->full || have + delta->count > PERFMAP_MAX_ENTRIES) {
		/* at the cap: keep the older names, drop the new */
		t->full = 1;
		t->skipped += delta->count;
		return 0;
	}
	r = delta->count ? perfmap_tail_merge(t->map, delta, &merged, &dropped) : 0;
	if (r < 0)
		return fs_error_set(err, -r, "merging perf map lines");
	if (merged) {
		perfmap_free(t->map);
		t->map = merged;
	}
	return 0;
}

/* all: the unfinished line (t->npartial bytes) then the new bytes, n in
 * all. */
static int perfmap_tail_feed_all(struct perfmap_tail *t, const char *all, size_t n,
				 struct fs_error *err)
{
	size_t start = 0;
	int skipping = t->skipping;
	if (skipping) {
		const char *nl = memchr(all, '\n', n);
		if (!nl)
			return 0; /* still inside the overlong line */
		start = (size_t)(nl - all) + 1;
		skipping = 0;
		t->lines++;
		t->skipped++;
	}
	const char *last = n > start ? memrchr(all + start, '\n', n - start) : NULL;
	size_t end = last ? (size_t)(last - all) + 1 : start;
	if (end > start) {
		int r = perfmap_tail_add_lines(t, all + start, end - start, err);
		if (r < 0)
			return r;
	}
	size_t rest = n - end;
	t->skipping = skipping;
	if (rest > PERFMAP_MAX_LINE) {
		t->skipping = 1; /* counted when its end comes */
		t->npartial = 0;
	} else {
		memmove(t->partial, all + end, rest);
		t->npartial = rest;
	}
	return 0;
}

int perfmap_tail_feed(struct perfmap_tail *t, const char *buf, size_t len, struct fs_error *err)
{
	size_t n = t->npartial + len;
	cleanup_free char *all = malloc(n ? n : 1);
	if (!all)
		return fs_error_set(err, ENOMEM, "reading a perf map");
	memcpy(all, t->partial, t->npartial);
	if (len)
		memcpy(all + t->npartial, buf, len);
	return perfmap_tail_feed_all(t, all, n, err);
}

int perfmap_tail_check(struct perfmap_tail *t, int fd, size_t max_file, size_t *pending,
		       struct fs_error *err)
{
	struct stat st;
	*pending = 0;
	if (fstat(fd, &st) < 0)
		return fs_error_set(err, errno, "stat of a perf map");
	uint64_t size = st.st_size < 0 ? 0 : (uint64_t)st.st_size;
	if (t->have_id &&
	    ((uint64_t)st.st_dev != t->dev || (uint64_t)st.st_ino != t->ino || size < t->offset)) {
		perfmap_tail_reset(t);
		t->restarts++;
	}
	t->dev = (uint64_t)st.st_dev;
	t->ino = (uint64_t)st.st_ino;
	t->have_id = 1;
	t->capped = size > max_file;
	uint64_t avail = t->capped ? max_file : size;
	*pending = avail > t->offset ? (size_t)(avail - t->offset) : 0;
	return 0;
}

ssize_t perfmap_tail_read(struct perfmap_tail *t, int fd, size_t want, struct fs_error *err)
{
	size_t done = 0;
	/* In chunks: what is held while a chunk is parsed stays a few times
	 * PERFMAP_TAIL_CHUNK, however much the file grew. */
	while (done < want) {
		size_t n = want - done < PERFMAP_TAIL_CHUNK ? want - done : PERFMAP_TAIL_CHUNK;
		size_t got = 0, head = t->npartial;
		cleanup_free char *buf = malloc(head + n);
		if (!buf)
			return fs_error_set(err, ENOMEM, "reading a perf map");
		memcpy(buf, t->partial, head);
		while (got < n) {
			ssize_t r = pread(fd, buf + head + got, n - got, (off_t)(t->offset + got));
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return fs_error_set(err, errno, "reading a perf map");
			if (r == 0)
				break; /* truncated meanwhile: the next check restarts */
			got += (size_t)r;
		}
		int r = perfmap_tail_feed_all(t, buf, head + got, err);
		if (r < 0)
			return r;
		t->offset += got;
		done += got;
		if (got < n)
			break;
	}
	return (ssize_t)done;
}

size_t perfmap_tail_memory(const struct perfmap_tail *t)
{
	return (t->map ? t->map->memory : 0) + t->npartial;
}

size_t perfmap_tail_count(const struct perfmap_tail *t)
{
	return t->map ? t->map->count : 0;
}

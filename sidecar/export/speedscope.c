/* speedscope.c - see speedscope.h. Written with the unlocked stdio calls:
 * the stream is ours alone, and a large profile is tens of MB of JSON. */
#include "speedscope.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct speedscope_group {
	uint64_t key;
	uint64_t total;
	size_t first; /* index into the sorted sample order */
	size_t n;
};

/* A JSON string; s is valid UTF-8 (export.h). */
static void speedscope_string(FILE *f, const char *s)
{
	putc_unlocked('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			putc_unlocked('\\', f);
			putc_unlocked(*p, f);
		} else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			putc_unlocked(*p, f);
	}
	putc_unlocked('"', f);
}

static void speedscope_uint(FILE *f, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	fputs_unlocked(p, f);
}

/* The group of a sample: its pid, else its root frame when that is the
 * process, else one group for all. Pids and roots cannot collide: roots
 * get the top bit. */
static uint64_t speedscope_key(const struct export *x, const struct export_sample *s)
{
	if (s->pid > 0)
		return (uint64_t)s->pid;
	if (x->root_is_process)
		return 1ull << 63 | x->stack[s->off];
	return 0;
}

static const struct export *speedscope_sort_x;

static int speedscope_cmp(const void *a, const void *b)
{
	const struct export *x = speedscope_sort_x;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	uint64_t ka = speedscope_key(x, &x->samples[i]), kb = speedscope_key(x, &x->samples[j]);
	if (ka != kb)
		return ka < kb ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int speedscope_group_cmp(const void *a, const void *b)
{
	const struct speedscope_group *g = a, *h = b;
	if (g->total != h->total)
		return g->total > h->total ? -1 : 1;
	return g->key < h->key ? -1 : g->key > h->key;
}

/* Samples sorted by group, and the groups, largest first. */
static int speedscope_groups(const struct export *x, size_t **order,
			     struct speedscope_group **groups, size_t *ngroups)
{
	size_t n = x->nsamples;
	*order = malloc((n ? n : 1) * sizeof(**order));
	*groups = malloc((n ? n : 1) * sizeof(**groups));
	*ngroups = 0;
	if (!*order || !*groups)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		(*order)[i] = i;
	speedscope_sort_x = x;
	qsort(*order, n, sizeof(**order), speedscope_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct export_sample *s = &x->samples[(*order)[i]];
		uint64_t key = speedscope_key(x, s);
		struct speedscope_group *g = *ngroups ? &(*groups)[*ngroups - 1] : NULL;
		if (!g || g->key != key) {
			g = &(*groups)[(*ngroups)++];
			*g = (struct speedscope_group){.key = key, .first = i};
		}
		g->n++;
		g->total = g->total + s->count < g->total ? UINT64_MAX : g->total + s->count;
	}
	qsort(*groups, *ngroups, sizeof(**groups), speedscope_group_cmp);
	return 0;
}

static void speedscope_profile_name(FILE *f, const struct export *x,
				    const struct speedscope_group *g, const size_t *order)
{
	const struct export_sample *s = &x->samples[order[g->first]];
	char buf[64];
	if (s->pid > 0 && x->root_is_process) {
		const char *comm;
		size_t l = export_process_name(x, s, &comm), cut = l > 200 ? 200 : l;
		while (cut < l && cut > 0 && ((unsigned char)comm[cut] & 0xc0) == 0x80)
			cut--; /* not inside a UTF-8 sequence */
		char *name = malloc(cut + sizeof(buf));
		if (name) {
			snprintf(name, cut + sizeof(buf), "%.*s (pid %d)", (int)cut, comm,
				 (int)s->pid);
			speedscope_string(f, name);
			free(name);
			return;
		}
	}
	if (s->pid > 0) {
		snprintf(buf, sizeof(buf), "pid %d", (int)s->pid);
		speedscope_string(f, buf);
	} else if (x->root_is_process)
		speedscope_string(f, x->frames[x->stack[s->off]].name);
	else
		speedscope_string(f, x->name ? x->name : "all samples");
}

static void speedscope_profile(FILE *f, const struct export *x, const struct speedscope_group *g,
			       const size_t *order)
{
	fputs_unlocked("{\"type\":\"sampled\",\"name\":", f);
	speedscope_profile_name(f, x, g, order);
	fputs_unlocked(x->time_type ? ",\"unit\":\"microseconds\",\"startValue\":0,\"endValue\":"
				    : ",\"unit\":\"none\",\"startValue\":0,\"endValue\":",
		       f);
	speedscope_uint(f, g->total);
	fputs_unlocked(",\"samples\":[", f);
	for (size_t i = 0; i < g->n; i++) {
		const struct export_sample *s = &x->samples[order[g->first + i]];
		fputs_unlocked(i ? ",[" : "[", f);
		for (uint32_t k = 0; k < s->depth; k++) {
			if (k)
				putc_unlocked(',', f);
			speedscope_uint(f, x->stack[s->off + k]);
		}
		putc_unlocked(']', f);
	}
	fputs_unlocked("],\"weights\":[", f);
	for (size_t i = 0; i < g->n; i++) {
		if (i)
			putc_unlocked(',', f);
		speedscope_uint(f, x->samples[order[g->first + i]].count);
	}
	fputs_unlocked("]}", f);
}

int speedscope_write(const struct export *x, FILE *out, struct fs_error *err)
{
	size_t *order = NULL, ngroups = 0;
	struct speedscope_group *groups = NULL;
	if (speedscope_groups(x, &order, &groups, &ngroups) < 0) {
		free(order);
		free(groups);
		return fs_error_set(err, ENOMEM, "grouping samples by process");
	}
	fputs_unlocked("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		       "\"exporter\":\"flamesidecar " FS_VERSION "\",\"name\":",
		       out);
	speedscope_string(out, x->name ? x->name : "flamesidecar profile");
	fputs_unlocked(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < x->nframes; i++) {
		const struct export_frame *fr = &x->frames[i];
		const char *file = export_frame_file(fr);
		fputs_unlocked(i ? ",{\"name\":" : "{\"name\":", out);
		speedscope_string(out, fr->name);
		if (file) {
			fputs_unlocked(",\"file\":", out);
			speedscope_string(out, file);
		}
		putc_unlocked('}', out);
	}
	fputs_unlocked("]},\"profiles\":[", out);
	for (size_t g = 0; g < ngroups; g++) {
		if (g)
			putc_unlocked(',', out);
		speedscope_profile(out, x, &groups[g], order);
	}
	fputs_unlocked("]}\n", out);
	free(order);
	free(groups);
	if (ferror(out))
		return fs_error_set(err, errno ? errno : EIO, "writing the speedscope profile");
	return 0;
}

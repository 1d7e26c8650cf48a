/* export.c - see export.h. Frames are interned in an open-addressing table
 * of frame indexes (FNV-1a over the folded text), doubled at 1/2 load. */
#include "export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"

#define EXPORT_INITIAL_SLOTS 1024u

struct export *export_new(void)
{
	struct export *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->slots = calloc(EXPORT_INITIAL_SLOTS, sizeof(*x->slots));
	if (!x->slots) {
		free(x);
		return NULL;
	}
	x->mask = EXPORT_INITIAL_SLOTS - 1;
	x->prev_end = malloc(EXPORT_MAX_DEPTH * sizeof(*x->prev_end));
	if (!x->prev_end) {
		free(x->slots);
		free(x);
		return NULL;
	}
	return x;
}

void export_free(struct export *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nframes; i++) {
		free((char *)x->frames[i].text);
		free((char *)x->frames[i].name);
		free((char *)x->frames[i].module);
		free((char *)x->frames[i].build_id);
	}
	for (size_t i = 0; i < x->nthreads; i++)
		free(x->threads[i]);
	free(x->threads);
	free(x->thr_slots);
	for (size_t i = 0; i < x->nlabels; i++) {
		free(x->labels[i].key);
		free(x->labels[i].value);
	}
	free(x->frames);
	free(x->hashes);
	free(x->stack);
	free(x->samples);
	free(x->slots);
	free(x->name);
	free(x->prev);
	free(x->prev_end);
	free(x);
}

int export_set_name(struct export *x, const char *name)
{
	char *n = strdup(name);
	if (!n)
		return -ENOMEM;
	free(x->name);
	x->name = n;
	return 0;
}

int export_set_label(struct export *x, const char *key, const char *value)
{
	if (!value || !*value)
		return 0;
	if (x->nlabels == EXPORT_MAX_LABELS)
		return -ENOSPC;
	char *k = strdup(key), *v = strdup(value);
	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	x->labels[x->nlabels].key = k;
	x->labels[x->nlabels++].value = v;
	return 0;
}

const char *export_kind_name(enum export_kind kind)
{
	switch (kind) {
	case EXPORT_KIND_KERNEL: return "kernel";
	case EXPORT_KIND_JIT: return "jit";
	case EXPORT_KIND_C1: return "c1";
	case EXPORT_KIND_INTERPRETED: return "interpreted";
	case EXPORT_KIND_INLINED: return "inlined";
	case EXPORT_KIND_MODULE: return "native";
	case EXPORT_KIND_UNKNOWN: return "unknown";
	default: return "";
	}
}

const char *export_frame_file(const struct export_frame *f)
{
	switch (f->kind) {
	case EXPORT_KIND_PLAIN:
	case EXPORT_KIND_KERNEL:
	case EXPORT_KIND_MODULE: return f->module;
	case EXPORT_KIND_JIT: return "[jit]";
	case EXPORT_KIND_C1: return "[c1]";
	case EXPORT_KIND_INTERPRETED: return "[interpreted]";
	case EXPORT_KIND_INLINED: return "[inlined]";
	default: return NULL;
	}
}

size_t export_process_name(const struct export *x, const struct export_sample *s, const char **name)
{
	const char *n = x->frames[x->stack[s->off]].name;
	size_t len = strlen(n);
	char suffix[24];
	int sl = snprintf(suffix, sizeof(suffix), "-%d", (int)s->pid);
	*name = n;
	if (s->pid > 0 && sl > 0 && len > (size_t)sl && !strcmp(n + len - (size_t)sl, suffix))
		len -= (size_t)sl;
	return len;
}

enum export_kind export_frame_kind(const char *text, size_t len, size_t *name_len)
{
	static const struct {
		char mark;
		enum export_kind kind;
	} suffixes[] = {
	    {'k', EXPORT_KIND_KERNEL},	    {'j', EXPORT_KIND_JIT},	{'1', EXPORT_KIND_C1},
	    {'0', EXPORT_KIND_INTERPRETED}, {'i', EXPORT_KIND_INLINED},
	};
	*name_len = len;
	/* "name_[x]" with a non-empty name */
	if (len > 4 && !memcmp(text + len - 4, "_[", 2) && text[len - 1] == ']')
		for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
			if (text[len - 2] == suffixes[i].mark) {
				*name_len = len - 4;
				return suffixes[i].kind;
			}
	if (len == 9 && !memcmp(text, "[unknown]", 9))
		return EXPORT_KIND_UNKNOWN;
	/* "[libfoo.so]": perf's label for a module's code without a symbol */
	if (len > 2 && text[0] == '[' && text[len - 1] == ']' && !memchr(text + 1, '[', len - 2) &&
	    !memchr(text + 1, ']', len - 2) && !memchr(text, ' ', len))
		return EXPORT_KIND_MODULE;
	return EXPORT_KIND_PLAIN;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t export_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A NUL-terminated, valid UTF-8 copy of s[0..n): invalid bytes and NULs
 * become U+FFFD. NULL when out of memory. */
static char *export_utf8_dup(const char *s, size_t n)
{
	char *out = malloc(n * 3 + 1), *o = out;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t l = s[i] ? export_utf8_len((const unsigned char *)s + i, n - i) : 0;
		if (!l) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(o, s + i, l);
		o += l;
		i += l;
	}
	*o = '\0';
	return out;
}

/* A multiply-xorshift hash, 8 bytes per step. Not cryptographic: hostile
 * names only lengthen probes (the table is bounded by EXPORT_MAX_FRAMES). */
static uint64_t export_hash(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s + i, n - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 29);
}

static int export_grow_slots(struct export *x)
{
	size_t n = (x->mask + 1) * 2;
	uint32_t *s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < x->nframes; i++) {
		size_t j = x->hashes[i] & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(x->slots);
	x->slots = s;
	x->mask = n - 1;
	return 0;
}

static void export_frame_drop(struct export_frame *f)
{
	free((char *)f->text);
	free((char *)f->name);
	free((char *)f->module);
	free((char *)f->build_id);
}

/* Make a frame from its folded text (n bytes); fills *f. 0 or -ENOMEM. */
static int export_frame_make(const char *text, size_t n, struct export_frame *f)
{
	size_t name_len;
	memset(f, 0, sizeof(*f));
	f->kind = export_frame_kind(text, n, &name_len);
	f->text = export_utf8_dup(text, n);
	f->name = export_utf8_dup(text, name_len);
	if (f->kind == EXPORT_KIND_KERNEL)
		f->module = strdup("[kernel.kallsyms]");
	else if (f->kind == EXPORT_KIND_MODULE)
		f->module = export_utf8_dup(text + 1, n - 2);
	if (!f->text || !f->name ||
	    (!f->module && (f->kind == EXPORT_KIND_KERNEL || f->kind == EXPORT_KIND_MODULE))) {
		export_frame_drop(f);
		return -ENOMEM;
	}
	return 0;
}

static int export_utf8_valid(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t l = s[i] ? export_utf8_len((const unsigned char *)s + i, n - i) : 0;
		if (!l)
			return 0;
		i += l;
	}
	return 1;
}

/* Append frame f (owned, text hash h) at slot j. 0, -E2BIG or -ENOMEM
 * (f freed). */
static int export_append(struct export *x, struct export_frame *f, uint64_t h, size_t j,
			 uint32_t *out)
{
	int r = 0;
	if (x->nframes >= EXPORT_MAX_FRAMES)
		r = -E2BIG;
	else if (x->nframes == x->frames_cap) {
		size_t cap = x->frames_cap ? x->frames_cap * 2 : 256;
		struct export_frame *nf = realloc(x->frames, cap * sizeof(*nf));
		uint64_t *nh = nf ? realloc(x->hashes, cap * sizeof(*nh)) : NULL;
		if (nf)
			x->frames = nf;
		if (nh)
			x->hashes = nh;
		if (!nf || !nh)
			r = -ENOMEM;
		else
			x->frames_cap = cap;
	}
	if (r < 0) {
		export_frame_drop(f);
		return r;
	}
	x->frames[x->nframes] = *f;
	x->hashes[x->nframes] = h;
	x->slots[j] = (uint32_t)x->nframes + 1;
	*out = (uint32_t)x->nframes++;
	if (x->nframes * 2 > x->mask + 1)
		return export_grow_slots(x);
	return 0;
}

/* The index of the frame with this folded text, added if new. Texts are
 * compared after UTF-8 repair, so two texts that differ only in invalid
 * bytes are one frame. */
static int export_intern(struct export *x, const char *text, size_t n, uint32_t *out)
{
	char *fixed = NULL;
	if (!export_utf8_valid(text, n)) {
		if (!(fixed = export_utf8_dup(text, n)))
			return -ENOMEM;
		text = fixed;
		n = strlen(fixed);
	}
	uint64_t h = export_hash(text, n);
	size_t j = h & x->mask;
	for (; x->slots[j]; j = (j + 1) & x->mask) {
		uint32_t i = x->slots[j] - 1;
		const char *t = x->frames[i].text;
		if (x->hashes[i] == h && !memcmp(t, text, n) && t[n] == '\0') {
			free(fixed);
			*out = i;
			return 0;
		}
	}
	struct export_frame f;
	int r = export_frame_make(text, n, &f);
	free(fixed);
	if (r < 0)
		return r;
	return export_append(x, &f, h, j, out);
}

int export_grow(void **arr, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 256;
	while (n < need)
		n *= 2;
	void *a = realloc(*arr, n * size);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = n;
	return 0;
}

/* Bytes a and b have in common at the start. */
static size_t export_common(const char *a, size_t na, const char *b, size_t nb)
{
	size_t n = na < nb ? na : nb, i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			break;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* How many leading frames of the previous stack the new one shares: whole
 * frames inside the common prefix that end at a frame boundary of both.
 * Sorted input (fold_foreach order) shares most of each stack. */
static uint32_t export_shared(const struct export *x, const char *stack, size_t len)
{
	if (!x->prev_depth)
		return 0;
	size_t c = export_common(stack, len, x->prev, x->prev_len);
	uint32_t k = 0;
	while (k < x->prev_depth && x->prev_end[k] <= c &&
	       (x->prev_end[k] == len || stack[x->prev_end[k]] == ';'))
		k++;
	return k;
}

/* Remember this stack (its text, frame ends, sample) for the next add. */
static void export_remember(struct export *x, const char *stack, size_t len, size_t off,
			    uint32_t depth)
{
	x->prev_depth = 0;
	if (export_grow((void **)&x->prev, &x->prev_cap, len + 1, 1) < 0)
		return;
	memcpy(x->prev, stack, len);
	x->prev_len = len;
	x->prev_off = off;
	x->prev_depth = depth;
}

/* Does path's last component equal base (n bytes)? */
static int export_same_base(const char *path, const char *base, size_t n)
{
	const char *slash = strrchr(path, '/');
	const char *b = slash ? slash + 1 : path;
	return strlen(b) == n && !memcmp(b, base, n);
}

int export_frame_module(struct export *x, const char *text, size_t len, const char *module,
			const char *build_id)
{
	uint32_t id;
	int r = export_intern(x, text, len, &id);
	if (r < 0)
		return r;
	struct export_frame *f = &x->frames[id];
	if (f->kind == EXPORT_KIND_MODULE && f->module && !strchr(f->module, '/') &&
	    export_same_base(module, f->module, strlen(f->module))) {
		free((char *)f->module);
		f->module = NULL; /* the full path below */
	}
	if ((f->kind != EXPORT_KIND_PLAIN && f->kind != EXPORT_KIND_MODULE) || f->module)
		return 0;
	char *m = export_utf8_dup(module, strlen(module));
	char *b = build_id ? export_utf8_dup(build_id, strlen(build_id)) : NULL;
	if (!m || (build_id && !b)) {
		free(m);
		free(b);
		return -ENOMEM;
	}
	f->module = m;
	f->build_id = b;
	return 0;
}

/* The 1-based index of thread name s in x->threads, added if new; 0 when
 * there are EXPORT_MAX_THREADS already. -ENOMEM. Names are compared after
 * UTF-8 repair, as frames are. */
static int64_t export_thread(struct export *x, const char *s)
{
	size_t n = strlen(s);
	char *fixed = NULL;
	int64_t r = -ENOMEM;
	if (!x->thr_slots) {
		if (!(x->thr_slots = calloc(2 * EXPORT_MAX_THREADS, sizeof(*x->thr_slots))))
			return -ENOMEM;
		x->thr_mask = 2 * EXPORT_MAX_THREADS - 1;
	}
	if (!export_utf8_valid(s, n)) {
		if (!(fixed = export_utf8_dup(s, n)))
			return -ENOMEM;
		s = fixed;
		n = strlen(s);
	}
	size_t j = export_hash(s, n) & x->thr_mask;
	for (; x->thr_slots[j]; j = (j + 1) & x->thr_mask)
		if (!strcmp(x->threads[x->thr_slots[j] - 1], s)) {
			free(fixed);
			return x->thr_slots[j];
		}
	if (x->nthreads >= EXPORT_MAX_THREADS) {
		free(fixed);
		return 0;
	}
	char *d = fixed ? fixed : strdup(s);
	if (d && export_grow((void **)&x->threads, &x->threads_cap, x->nthreads + 1,
			     sizeof(*x->threads)) == 0) {
		x->threads[x->nthreads++] = d;
		x->thr_slots[j] = (uint32_t)x->nthreads;
		return (int64_t)x->nthreads;
	}
	free(d);
	return r;
}

int export_add(struct export *x, const char *stack, size_t len, uint64_t count, pid_t pid)
{
	return export_add_thread(x, stack, len, count, pid, 0, NULL);
}

int export_add_thread(struct export *x, const char *stack, size_t len, uint64_t count, pid_t pid,
		      pid_t tid, const char *thread)
{
	int64_t th = 0;
	if (thread && *thread && (th = export_thread(x, thread)) < 0)
		return (int)th;
	size_t start = x->nstack;
	uint32_t depth = export_shared(x, stack, len);
	int r = export_grow((void **)&x->stack, &x->stack_cap, x->nstack + depth + 1,
			    sizeof(*x->stack));
	if (r < 0)
		return r;
	memmove(x->stack + start, x->stack + x->prev_off, depth * sizeof(*x->stack));
	x->nstack += depth;
	x->prev_depth = 0; /* prev_end is rewritten from depth on */
	for (size_t i = depth ? x->prev_end[depth - 1] + 1 : 0;
	     i < len && depth < EXPORT_MAX_DEPTH;) {
		const char *semi = memchr(stack + i, ';', len - i);
		size_t end = semi ? (size_t)(semi - stack) : len;
		if (end > i) {
			uint32_t id;
			if ((r = export_intern(x, stack + i, end - i, &id)) < 0 ||
			    (r = export_grow((void **)&x->stack, &x->stack_cap, x->nstack + 1,
					     sizeof(*x->stack))) < 0)
				break;
			x->stack[x->nstack++] = id;
			x->prev_end[depth++] = end;
		}
		i = end + 1;
	}
	if (r < 0 || !depth) {
		x->nstack = start;
		return r;
	}
	if ((r = export_grow((void **)&x->samples, &x->samples_cap, x->nsamples + 1,
			     sizeof(*x->samples))) < 0) {
		x->nstack = start;
		return r;
	}
	x->samples[x->nsamples++] = (struct export_sample){.off = start,
							   .depth = depth,
							   .pid = pid,
							   .tid = tid,
							   .thread = (uint32_t)th,
							   .count = count};
	x->total = x->total + count < x->total ? UINT64_MAX : x->total + count;
	export_remember(x, stack, len, start, depth);
	return 0;
}

int export_add_folded(const char *stack, size_t len, uint64_t count, void *arg)
{
	return export_add(arg, stack, len, count, 0);
}

/* One line of folded text (number lineno) into x. */
static int export_line(struct export *x, const char *line, size_t n, size_t lineno,
		       struct fs_error *err)
{
	const char *stack;
	size_t slen;
	uint64_t count;
	int k = fold_parse_line(line, n, &stack, &slen, &count);
	if (k < 0)
		return fs_error_set(err, EINVAL, "folded line %zu: no count at the end of the line",
				    lineno);
	if (k > 0 && (k = export_add(x, stack, slen, count, 0)) < 0)
		return fs_error_set(err, -k, "folded line %zu: adding the stack", lineno);
	return 0;
}

int export_read_folded(struct export *x, FILE *in, struct fs_error *err)
{
	/* Blocks of 2 x the longest line allowed, split at '\n'; the partial
	 * last line moves to the front. Memory is bounded whatever the input. */
	const size_t max = FOLD_STACK_MAX + 64, size = 2 * max;
	char *buf = malloc(size);
	size_t have = 0, lineno = 0;
	int r = 0;
	if (!buf)
		return fs_error_set(err, ENOMEM, "reading folded text");
	for (;;) {
		size_t got = fread(buf + have, 1, size - have, in);
		have += got;
		size_t start = 0;
		const char *nl;
		while (!r && (nl = memchr(buf + start, '\n', have - start))) {
			r = export_line(x, buf + start, (size_t)(nl - buf) - start, ++lineno, err);
			start = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (r)
			break;
		if (ferror(in)) {
			r = fs_error_set(err, errno ? errno : EIO, "reading folded text");
			break;
		}
		if (got == 0) { /* end of input: a last line without '\n' */
			if (have)
				r = export_line(x, buf, have, ++lineno, err);
			break;
		}
		if (have > max) {
			fs_error_set(err, 0, "folded line %zu: longer than %u bytes", lineno + 1,
				     FOLD_STACK_MAX);
			r = -E2BIG;
			break;
		}
	}
	free(buf);
	return r;
}

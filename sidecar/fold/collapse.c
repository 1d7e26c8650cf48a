/* collapse.c - see collapse.h (the line scanners are collapse_match.c).
 *
 * The perl script is a handful of regular expressions. Each one is
 * reimplemented here as a small scanner that finds exactly the match perl's
 * backtracking engine finds (leftmost, with the greedy/lazy choices of the
 * original pattern), including on odd input; the comments give the pattern
 * each function stands for. Perl's \s is [ \t\n\v\f\r], \d is [0-9] and \w
 * is [A-Za-z0-9_] here (the input is bytes, not UTF-8 text).
 */
#include "collapse.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "collapse_match.h"

struct cbuf {
	char *p;
	size_t len, cap;
};

struct collapse_seg {
	size_t off, len;
};

struct collapse {
	struct collapse_opts opts;
	struct fold *fold;
	struct cbuf filter; /* NUL-terminated event filter */
	bool filter_set, defaulted;
	struct cbuf first_filtered; /* NUL-terminated, len 0 = none */
	bool have_first_filtered;

	/* the sample being read */
	bool have_pname, java, oversized;
	struct cbuf pname;
	uint64_t period;
	struct cbuf frames;	   /* every line's frames, input order */
	struct collapse_seg *segs; /* one per stack line, into frames */
	size_t nsegs, segs_cap;

	struct cbuf key, tmp;
	struct collapse_stats st;
};

static int cbuf_reserve(struct cbuf *b, size_t more)
{
	if (b->cap - b->len >= more)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < more) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

static inline int cbuf_put(struct cbuf *b, const char *s, size_t n)
{
	if (b->cap - b->len < n && cbuf_reserve(b, n) < 0)
		return -ENOMEM;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

static inline int cbuf_putc(struct cbuf *b, char ch)
{
	return cbuf_put(b, &ch, 1);
}

static int cbuf_set_str(struct cbuf *b, const char *s, size_t n)
{
	b->len = 0;
	if (cbuf_reserve(b, n + 1) < 0)
		return -ENOMEM;
	memcpy(b->p, s, n);
	b->p[n] = '\0';
	b->len = n;
	return 0;
}

struct collapse *collapse_new(const struct collapse_opts *opts, struct fold *out)
{
	struct collapse *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->opts = *opts;
	c->opts.event_filter = NULL;
	c->fold = out;
	c->period = 1;
	if (opts->event_filter && opts->event_filter[0]) {
		if (cbuf_set_str(&c->filter, opts->event_filter, strlen(opts->event_filter)) < 0) {
			free(c);
			return NULL;
		}
		c->filter_set = true;
	}
	return c;
}

void collapse_free(struct collapse *c)
{
	if (!c)
		return;
	free(c->filter.p);
	free(c->first_filtered.p);
	free(c->pname.p);
	free(c->frames.p);
	free(c->segs);
	free(c->key.p);
	free(c->tmp.p);
	free(c);
}

void collapse_get_stats(const struct collapse *c, struct collapse_stats *st)
{
	*st = c->st;
	st->event = c->filter_set ? c->filter.p : NULL;
	st->first_filtered = c->have_first_filtered ? c->first_filtered.p : NULL;
	st->event_defaulted = c->defaulted;
}

/* ---- end of a sample: the empty line ----------------------------------- */

static void collapse_reset_sample(struct collapse *c)
{
	c->have_pname = false;
	c->oversized = false;
	c->frames.len = 0;
	c->nsegs = 0;
}

static int collapse_end_sample(struct collapse *c)
{
	if (!c->have_pname)
		return 0; /* `next if not $pname` */
	/* `unshift @stack, $pname; join(";", @stack)`: frames were unshifted
	 * line by line, so the lines come out last first. A stack longer than
	 * FOLD_STACK_MAX loses root-side frames to "[truncated: deeper
	 * stack]" right under the process name (budget.h), and is counted. */
	static const char cut[] = ";" BUDGET_TRUNCATED_FRAME;
	size_t marker = c->oversized ? sizeof(cut) - 1 : 0, flen = c->frames.len;
	while (c->nsegs && c->pname.len + marker + flen + c->nsegs > FOLD_STACK_MAX) {
		c->nsegs--;
		flen = c->segs[c->nsegs].off;
		marker = sizeof(cut) - 1;
	}
	size_t need = c->pname.len + marker + flen + c->nsegs;
	if (need > FOLD_STACK_MAX) { /* the process name alone is too long */
		c->st.oversized++;
		collapse_reset_sample(c);
		return 0;
	}
	if (marker)
		c->st.oversized++;
	c->key.len = 0;
	if (cbuf_reserve(&c->key, need + sizeof(BUDGET_DROPPED_FRAME) + 1) < 0)
		return -ENOMEM;
	char *k = c->key.p;
	memcpy(k, c->pname.p, c->pname.len);
	k += c->pname.len;
	memcpy(k, cut, marker);
	k += marker;
	for (size_t i = c->nsegs; i-- > 0;) {
		*k++ = ';';
		memcpy(k, c->frames.p + c->segs[i].off, c->segs[i].len);
		k += c->segs[i].len;
	}
	int r = fold_add(c->fold, c->key.p, (size_t)(k - c->key.p), c->period);
	if (r == -ENOSPC) {
		/* the table is full: count it under the process (budget.h) */
		static const char dropped[] = ";" BUDGET_DROPPED_FRAME;
		memcpy(c->key.p + c->pname.len, dropped, sizeof(dropped) - 1);
		r = fold_add_over(c->fold, c->key.p, c->pname.len + sizeof(dropped) - 1, c->period);
		c->st.dropped++;
	}
	if (r < 0)
		return r;
	c->st.samples++;
	collapse_reset_sample(c);
	return 0;
}

/* ---- event lines ------------------------------------------------------- */

static int collapse_event(struct collapse *c, const char *s, size_t n, const struct event_match *m)
{
	const char *ev, *per = NULL;
	size_t ev_len, per_len = 0;

	if (collapse_match_event_name(s, n, &ev, &ev_len, &per, &per_len)) {
		if (!c->filter_set) {
			if (cbuf_set_str(&c->filter, ev, ev_len) < 0)
				return -ENOMEM;
			c->filter_set = c->defaulted = true;
		} else if (!bytes_eq(ev, ev_len, c->filter.p, c->filter.len)) {
			c->st.filtered++;
			if (c->defaulted && !c->have_first_filtered) {
				if (cbuf_set_str(&c->first_filtered, ev, ev_len) < 0)
					return -ENOMEM;
				c->have_first_filtered = true;
			}
			return 0; /* `next`: the current pname and stack stay */
		}
	}
	c->period = collapse_parse_period(per, per_len);

	const char *pid = m->pid, *tid = m->tid;
	size_t pid_len = m->pid_len, tid_len = m->tid_len;
	if (tid_len == 0 || (tid_len == 1 && tid[0] == '0')) {
		tid = pid;
		tid_len = pid_len;
		pid = "?";
		pid_len = 1;
	}
	struct cbuf *p = &c->pname;
	p->len = 0;
	if (cbuf_put(p, s, m->comm_len) < 0)
		return -ENOMEM;
	if (c->opts.include_tid || c->opts.include_pid) {
		if (cbuf_putc(p, '-') < 0 || cbuf_put(p, pid, pid_len) < 0)
			return -ENOMEM;
		if (c->opts.include_tid && (cbuf_putc(p, '/') < 0 || cbuf_put(p, tid, tid_len) < 0))
			return -ENOMEM;
	}
	for (size_t i = 0; i < p->len; i++)
		if (p->p[i] == ' ')
			p->p[i] = '_';
	c->have_pname = true;
	c->java = bytes_eq(p->p, p->len, "java", 4);
	return 0;
}

/* ---- stack lines ------------------------------------------------------- */

enum { ANNOT_NONE, ANNOT_INLINE, ANNOT_KERNEL, ANNOT_JIT };

/* The index of the first of ; " ' ( in s[i, end), or end. Eight bytes at a
 * time: a byte equal to c makes (w ^ c*ONES) have a zero byte, which
 * (x - ONES) & ~x & HIGHS detects. */
static inline size_t next_tidy(const char *s, size_t i, size_t end)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	for (; end - i >= 8; i += 8) {
		uint64_t w, a, b, c, d;
		memcpy(&w, s + i, 8);
		a = w ^ (ones * ';');
		b = w ^ (ones * '"');
		c = w ^ (ones * '\'');
		d = w ^ (ones * '(');
		if ((((a - ones) & ~a) | ((b - ones) & ~b) | ((c - ones) & ~c) |
		     ((d - ones) & ~d)) &
		    highs)
			break;
	}
	while (i < end && !(cclass[(unsigned char)s[i]] & C_TIDY))
		i++;
	return i;
}

/* The first "->" in [p, end), or NULL (perl's split /\->/). */
static inline const char *find_arrow(const char *p, const char *end)
{
	const char *q = p + 1;
	while (q < end && (q = memchr(q, '>', (size_t)(end - q)))) {
		if (q[-1] == '-')
			return q - 1;
		q++;
	}
	return NULL;
}

/* Append one tidied frame (one "->" piece) to c->frames. */
static int collapse_frame(struct collapse *c, const char *s, size_t n, int annot)
{
	struct cbuf *b = &c->frames;
	if (cbuf_reserve(b, n + 4) < 0)
		return -ENOMEM;
	char *start = b->p + b->len, *o = start;
	// s/;/:/g, s/\((?!anonymous namespace\)).*// unless Go, tr/"\'//d
	size_t end = n, i = 0;
	bool decided = false;
	while (i < end) {
		size_t j = next_tidy(s, i, end);
		memcpy(o, s + i, j - i);
		o += j - i;
		if (j >= end)
			break;
		char ch = s[j];
		i = j + 1;
		if (ch == ';') {
			*o++ = ':';
		} else if (ch == '(') {
			if (!decided) {
				decided = true;
				if (!collapse_looks_like_go(s, n)) {
					end = j + collapse_tidy_cut(s + j, n - j);
					if (end == j)
						break;
				}
			}
			*o++ = ch;
		}
		/* quotes are dropped */
	}
	size_t len = (size_t)(o - start);
	/* $tidy_java: s/^L// if m:/: for the process named exactly "java" */
	if (c->java && len && start[0] == 'L' && memchr(start, '/', len)) {
		memmove(start, start + 1, len - 1);
		len--;
	}
	switch (annot) {
	case ANNOT_INLINE:
		if (!contains(start, len, "_[i]", 4)) {
			memcpy(start + len, "_[i]", 4);
			len += 4;
		}
		break;
	case ANNOT_KERNEL:
		memcpy(start + len, "_[k]", 4);
		len += 4;
		break;
	case ANNOT_JIT:
		if (!contains(start, len, "_[j]", 4)) {
			memcpy(start + len, "_[j]", 4);
			len += 4;
		}
		break;
	}
	b->len += len;
	return 0;
}

static int collapse_unknown(struct collapse *c, const struct frame_match *m, int annot)
{
	struct cbuf *t = &c->tmp;
	const char *base = "unknown";
	size_t base_len = 7;
	if (!bytes_eq(m->mod, m->mod_len, "[unknown]", 9)) {
		/* s/.*\/// */
		const char *slash = memrchr(m->mod, '/', m->mod_len);
		base = slash ? slash + 1 : m->mod;
		base_len = m->mod_len - (size_t)(base - m->mod);
	}
	t->len = 0;
	if (cbuf_putc(t, '[') < 0 || cbuf_put(t, base, base_len) < 0)
		return -ENOMEM;
	if (c->opts.include_addrs && (cbuf_put(t, " <", 2) < 0 ||
				      cbuf_put(t, m->pc, m->pc_len) < 0 || cbuf_putc(t, '>') < 0))
		return -ENOMEM;
	if (cbuf_putc(t, ']') < 0)
		return -ENOMEM;
	return collapse_frame(c, t->p, t->len, annot);
}

static int collapse_grow_segs(struct collapse *c)
{
	size_t cap = c->segs_cap ? c->segs_cap * 2 : 64;
	struct collapse_seg *segs = realloc(c->segs, cap * sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	c->segs = segs;
	c->segs_cap = cap;
	return 0;
}

/* frames[off, len) is one more stack line's text (capacity checked). */
static void collapse_push_seg(struct collapse *c, size_t off)
{
	c->segs[c->nsegs].off = off;
	c->segs[c->nsegs].len = c->frames.len - off;
	c->nsegs++;
	if (c->frames.len + c->nsegs > FOLD_STACK_MAX) {
		/* the key cannot fit: keep the leaf-side frames read so far,
		 * take no more; the stack gets the truncation marker */
		c->oversized = true;
		c->nsegs--;
		c->frames.len = off;
	}
}

static int collapse_stack_line(struct collapse *c, const struct frame_match *m)
{
	const char *raw = m->func;
	size_t n = m->func_len;

	/* s/\+0x[\da-f]+$// */
	size_t h = n;
	while (h > 0 && (cclass[(unsigned char)raw[h - 1]] & C_HEXLOW))
		h--;
	if (h < n && h >= 3 && !memcmp(raw + h - 3, "+0x", 3))
		n = h - 3;
	if (n && raw[0] == '(')
		return 0; /* `next if $rawfunc =~ /^\(/`: a process name */

	/* split /\->/: trailing empty pieces are dropped */
	while (n >= 2 && raw[n - 2] == '-' && raw[n - 1] == '>')
		n -= 2;
	if (n == 0)
		return 0;
	if (c->oversized)
		return 0;

	int kind = ANNOT_NONE;
	if (c->opts.annotate_kernel && collapse_mod_is_kernel(m->mod, m->mod_len))
		kind = ANNOT_KERNEL;
	else if (c->opts.annotate_jit && collapse_mod_is_jit(m->mod, m->mod_len))
		kind = ANNOT_JIT;

	if (c->nsegs == c->segs_cap && collapse_grow_segs(c) < 0)
		return -ENOMEM;
	size_t off = c->frames.len;
	const char *p = raw, *end = raw + n;
	for (int piece = 0;; piece++) {
		const char *arrow = find_arrow(p, end);
		const char *pe = arrow ? arrow : end;
		int annot = piece ? ANNOT_INLINE : kind;
		int r;
		if (piece && cbuf_putc(&c->frames, ';') < 0)
			return -ENOMEM;
		if (bytes_eq(p, (size_t)(pe - p), "[unknown]", 9))
			r = collapse_unknown(c, m, annot);
		else
			r = collapse_frame(c, p, (size_t)(pe - p), annot);
		if (r < 0)
			return r;
		if (!arrow)
			break;
		p = arrow + 2;
	}
	collapse_push_seg(c, off);
	return 0;
}

/* ---- lines and input --------------------------------------------------- */

static inline int collapse_line_inner(struct collapse *c, const char *s, size_t n)
{
	c->st.lines++;
	if (n == 0)
		return collapse_end_sample(c);
	if (s[0] == '#')
		return 0;
	if (!is_ws((unsigned char)s[0])) {
		struct event_match em;
		if (collapse_match_event(s, n, &em))
			return collapse_event(c, s, n, &em);
	}
	struct frame_match fm;
	if (!collapse_match_frame(s, n, &fm)) {
		if (!c->st.unrecognized++)
			c->st.first_unrecognized = c->st.lines;
		return 0;
	}
	if (!c->have_pname)
		return 0; /* a filtered sample */
	return collapse_stack_line(c, &fm);
}

int collapse_line(struct collapse *c, const char *line, size_t len, struct fs_error *err)
{
	int r = collapse_line_inner(c, line, len);
	if (r < 0)
		return fs_error_set(err, -r, "collapsing line %llu",
				    (unsigned long long)c->st.lines);
	return 0;
}

int collapse_feed(struct collapse *c, const char *buf, size_t len, struct fs_error *err)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		int r = collapse_line_inner(c, p, (size_t)(le - p));
		if (r < 0)
			return fs_error_set(err, -r, "collapsing line %llu",
					    (unsigned long long)c->st.lines);
		p = nl ? nl + 1 : end;
	}
	return 0;
}

#define COLLAPSE_READ_CHUNK (4u << 20)

static int collapse_stream(struct collapse *c, int fd, const char *name, struct fs_error *err)
{
	cleanup_free char *buf = NULL;
	size_t cap = 0, len = 0;
	for (;;) {
		if (cap - len < COLLAPSE_READ_CHUNK / 2) {
			if (cap >= COLLAPSE_LINE_MAX + COLLAPSE_READ_CHUNK)
				return fs_error_set(
				    err, E2BIG,
				    "reading %s: a line near line %llu is longer than %u MiB", name,
				    (unsigned long long)c->st.lines + 1, COLLAPSE_LINE_MAX >> 20);
			size_t ncap = cap ? cap * 2 : COLLAPSE_READ_CHUNK;
			char *nb = realloc(buf, ncap);
			if (!nb)
				return fs_error_set(err, ENOMEM, "reading %s", name);
			buf = nb;
			cap = ncap;
		}
		ssize_t got = read(fd, buf + len, cap - len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return fs_error_set(err, errno, "reading %s", name);
		}
		if (got == 0)
			break;
		len += (size_t)got;
		const char *last = memrchr(buf, '\n', len);
		if (!last)
			continue;
		size_t whole = (size_t)(last - buf) + 1;
		int r = collapse_feed(c, buf, whole, err);
		if (r < 0)
			return fs_error_wrap(err, "%s", name);
		memmove(buf, buf + whole, len - whole);
		len -= whole;
	}
	if (len && collapse_feed(c, buf, len, err) < 0)
		return fs_error_wrap(err, "%s", name);
	return 0;
}

int collapse_fd(struct collapse *c, int fd, const char *name, struct fs_error *err)
{
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return fs_error_set(err, errno, "stat %s", name);
	/* mmap a whole regular file; a file descriptor already read from (stdin
	 * redirected from a file after a `read`) is streamed from where it is */
	if (!S_ISREG(sb.st_mode) || sb.st_size <= 0 || lseek(fd, 0, SEEK_CUR) != 0)
		return collapse_stream(c, fd, name, err);
	size_t size = (size_t)sb.st_size;
	void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return collapse_stream(c, fd, name, err);
	madvise(map, size, MADV_SEQUENTIAL | MADV_WILLNEED);
	int r = collapse_feed(c, map, size, err);
	munmap(map, size);
	if (r < 0)
		return fs_error_wrap(err, "%s", name);
	return 0;
}

int collapse_buffer(const char *buf, size_t len, const struct collapse_opts *opts, struct fold *out,
		    struct fs_error *err)
{
	cleanup_collapse struct collapse *c = collapse_new(opts, out);
	if (!c)
		return fs_error_set(err, ENOMEM, "creating the collapser");
	return collapse_feed(c, buf, len, err);
}

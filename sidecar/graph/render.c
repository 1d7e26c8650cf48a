/* render.c - the SVG flame graph writer and `flamesidecar render`.
 *
 * Layout: every visible frame is one <g> holding a <title> ("name (N
 * samples, P%)"), a <rect> and a <text> label, written in depth-first
 * pre-order so that a frame's descendants follow it; the script relies on
 * that order to zoom and to add up search matches without counting a frame
 * twice. Frames narrower than min_width px are elided with their subtrees.
 */
#include "render.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "render_script.h"

#define RENDER_XPAD	   10
#define RENDER_SEARCH_FILL "rgb(230,0,230)"

void render_opts_init(struct render_opts *o)
{
	*o = (struct render_opts){
	    .width = 1200,
	    .frame_height = 16,
	    .font_size = 12,
	    .min_width = 0.1,
	    .palette = PALETTE_JAVA,
	    .count_name = "samples",
	    .name_type = "Function:",
	};
}

/* ---- text ---- */

/* Decode one UTF-8 sequence; returns its length (>= 1) and the code point,
 * or U+FFFD (length 1) for an invalid, overlong or surrogate sequence. */
static size_t render_utf8(const unsigned char *s, size_t len, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		n = 2, v = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, v = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, v = c & 0x07, min = 0x10000;
	} else {
		*cp = 0xfffd;
		return 1;
	}
	if (len < n)
		goto bad;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		goto bad;
	*cp = v;
	return n;
bad:
	*cp = 0xfffd;
	return 1;
}

/* Characters XML 1.0 allows but that have no business in a frame label. */
static bool render_cp_bad(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0xfffe ||
	       cp == 0xffff;
}

size_t render_text_chars(const char *s, size_t len)
{
	size_t n = 0;
	uint32_t cp;
	for (size_t i = 0; i < len; n++)
		i += render_utf8((const unsigned char *)s + i, len - i, &cp);
	return n;
}

size_t render_escape(FILE *out, const char *s, size_t len, size_t max_chars)
{
	size_t limit = SIZE_MAX, written = 0;
	bool dots = false;
	if (max_chars != SIZE_MAX && render_text_chars(s, len) > max_chars) {
		if (max_chars < 3)
			return 0;
		limit = max_chars - 2;
		dots = true;
	}
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len && written < limit; written++) {
		uint32_t cp;
		size_t n = render_utf8(u + i, len - i, &cp);
		if (render_cp_bad(cp) || cp == 0xfffd) {
			fputs("\xef\xbf\xbd", out);
		} else if (cp < 0x80) {
			switch (cp) {
			case '<': fputs("&lt;", out); break;
			case '>': fputs("&gt;", out); break;
			case '&': fputs("&amp;", out); break;
			case '"': fputs("&quot;", out); break;
			case '\'': fputs("&#39;", out); break;
			default: putc_unlocked((int)cp, out); break;
			}
		} else {
			fwrite(u + i, 1, n, out);
		}
		i += n;
	}
	if (dots) {
		fputs("..", out);
		written += 2;
	}
	return written;
}

static void render_escape_str(FILE *out, const char *s)
{
	render_escape(out, s, strlen(s), SIZE_MAX);
}

/* v in decimal at p (20 bytes at most, no NUL); its length. */
static size_t render_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

size_t render_fmt_fixed(char *buf, double v, unsigned decimals)
{
	static const unsigned scale[] = {1, 10, 100};
	if (decimals > 2)
		decimals = 2;
	/* Below 1e7 (scaled, below 1e9) the product's error is under 2e-7: a
	 * fraction at least 1e-4 away from one half rounds as the exact
	 * decimal does, so the bytes are printf's. Everything else (a near
	 * tie, negative, -0, huge, NaN) is printf's own. */
	if (!(v >= 0 && v < 1e7) || signbit(v))
		return (size_t)snprintf(buf, RENDER_FIXED_MAX, "%.*f", (int)decimals, v);
	double sv = v * scale[decimals];
	double fl = (double)(uint64_t)sv, fr = sv - fl; /* sv < 1e9: exact */
	if (fr > 0.5 - 1e-4 && fr < 0.5 + 1e-4)
		return (size_t)snprintf(buf, RENDER_FIXED_MAX, "%.*f", (int)decimals, v);
	uint64_t n = (uint64_t)fl + (fr > 0.5);
	size_t len = render_u64(buf, n / scale[decimals]);
	if (decimals) {
		unsigned f = (unsigned)(n % scale[decimals]);
		buf[len++] = '.';
		if (decimals == 2)
			buf[len++] = (char)('0' + f / 10);
		buf[len++] = (char)('0' + f % 10);
	}
	buf[len] = '\0';
	return len;
}

/* 1234567 -> "1,234,567" */
static void render_fmt_count(char *buf, size_t size, uint64_t v)
{
	char tmp[32];
	int n = (int)render_u64(tmp, v);
	size_t o = 0;
	for (int i = 0; i < n && o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
}

/* ---- layout ---- */

struct render_frame {
	uint32_t node;
	uint32_t depth;
	uint64_t start; /* in samples, from the left edge */
	bool wakeup;	/* above a "--" frame (chain palette) */
};

struct render_ctx {
	const struct flame *f;
	const struct render_opts *o;
	bool diff, use_a;
	double scale_a;
	double min_samples; /* elide frames with fewer samples */
	struct render_frame *v;
	size_t n, cap;
	uint32_t max_depth;
};

static uint64_t render_total(const struct render_ctx *c, uint32_t node)
{
	if (c->use_a) {
		double v = (double)flame_node_total_a(c->f, node) * c->scale_a + 0.5;
		return v >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)v;
	}
	return flame_node_total(c->f, node);
}

/* Self-count growth from A to B (A scaled by -n). */
static double render_delta(const struct render_ctx *c, uint32_t node)
{
	return (double)flame_node_self(c->f, node) -
	       (double)flame_node_self_a(c->f, node) * c->scale_a;
}

static int render_collect(struct render_ctx *c, uint32_t node, uint32_t depth, uint64_t start,
			  bool wakeup)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4096;
		struct render_frame *nv = realloc(c->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = cap;
	}
	c->v[c->n++] = (struct render_frame){node, depth, start, wakeup};
	if (depth > c->max_depth)
		c->max_depth = depth;
	if (depth + 1 > FLAME_DEPTH_MAX)
		return 0;

	size_t len;
	const char *name = flame_node_name(c->f, node, &len);
	if (node != FLAME_ROOT && len == 2 && !memcmp(name, "--", 2))
		wakeup = true;

	cleanup_free uint32_t *kids = NULL;
	size_t nk;
	int r = flame_children(c->f, node, &kids, &nk);
	if (r < 0)
		return r;
	uint64_t x = start;
	for (size_t i = 0; i < nk; i++) {
		uint64_t t = render_total(c, kids[i]);
		if (t > 0 && (double)t >= c->min_samples &&
		    (r = render_collect(c, kids[i], depth + 1, x, wakeup)) < 0)
			return r;
		x += t;
	}
	return 0;
}

/* ---- markup ---- */

/* The script: written for this file, no external references. C.* values
 * are numbers written by render_svg just before it. */

struct render_geom {
	double W, xpad, fh, fs, ypad1, ypad2, height, wps;
};

static double render_frame_y(const struct render_geom *g, const struct render_opts *o,
			     uint32_t depth)
{
	if (o->inverted)
		return g->ypad1 + depth * g->fh;
	return g->height - g->ypad2 - (depth + 1) * g->fh;
}

static void render_frame(FILE *out, const struct render_ctx *c, const struct render_geom *g,
			 const struct render_frame *fr, uint64_t total, double maxdelta,
			 uint64_t *rng)
{
	const struct render_opts *o = c->o;
	size_t len;
	const char *name = fr->node == FLAME_ROOT ? "all" : flame_node_name(c->f, fr->node, &len);
	if (fr->node == FLAME_ROOT)
		len = 3;
	size_t shown = palette_strip(name, len);
	uint64_t samples = render_total(c, fr->node);
	double x = g->xpad + (double)fr->start * g->wps, w = (double)samples * g->wps;
	double y = render_frame_y(g, o, fr->depth);
	char cnt[32];
	render_fmt_count(cnt, sizeof(cnt), samples);

	/* Numbers by render_fmt_fixed: printf's bytes, without its cost
	 * (float formatting was the SVG's largest CPU cost). */
	char num[RENDER_FIXED_MAX], line[16 * RENDER_FIXED_MAX + 160];
	size_t at;
	fputs("<g><title>", out);
	render_escape(out, name, shown, SIZE_MAX);
	fputs(" (", out);
	fputs(cnt, out);
	fputc(' ', out);
	render_escape_str(out, o->count_name);
	fputs(", ", out);
	fwrite(num, 1,
	       render_fmt_fixed(num, total ? 100.0 * (double)samples / (double)total : 0.0, 2),
	       out);
	fputc('%', out);
	double delta = 0;
	if (c->diff) {
		delta = render_delta(c, fr->node);
		fprintf(out, "; %+.2f%%", total ? 100.0 * delta / (double)total : 0.0);
	}
	struct palette_rgb rgb;
	if (c->diff)
		rgb = palette_diff(delta, maxdelta);
	else if (fr->node == FLAME_ROOT)
		rgb = palette_color(o->palette, "all", 3, PALETTE_F_HASH, rng);
	else
		rgb = palette_color(
		    o->palette, name, len,
		    (o->hash ? PALETTE_F_HASH : 0) | (fr->wakeup ? PALETTE_F_WAKEUP : 0), rng);
#define RENDER_PUT(s)                                                                              \
	do {                                                                                       \
		memcpy(line + at, s, sizeof(s) - 1);                                               \
		at += sizeof(s) - 1;                                                               \
	} while (0)
	at = 0;
	RENDER_PUT(")</title><rect x=\"");
	at += render_fmt_fixed(line + at, x, 2);
	RENDER_PUT("\" y=\"");
	at += render_fmt_fixed(line + at, y, 1);
	RENDER_PUT("\" width=\"");
	at += render_fmt_fixed(line + at, w, 2);
	RENDER_PUT("\" height=\"");
	at += render_fmt_fixed(line + at, g->fh - 1, 1);
	RENDER_PUT("\" fill=\"rgb(");
	at += render_u64(line + at, rgb.r);
	line[at++] = ',';
	at += render_u64(line + at, rgb.g);
	line[at++] = ',';
	at += render_u64(line + at, rgb.b);
	RENDER_PUT(")\" rx=\"2\" ry=\"2\"/><text x=\"");
	at += render_fmt_fixed(line + at, x + 3, 2);
	RENDER_PUT("\" y=\"");
	at += render_fmt_fixed(line + at, y + (g->fh - 1) / 2 + g->fs * 0.35, 1);
	RENDER_PUT("\">");
#undef RENDER_PUT
	fwrite(line, 1, at, out);
	double maxc = (w - 3) / (g->fs * 0.59);
	if (maxc >= 3)
		render_escape(out, name, shown, (size_t)maxc);
	fputs("</text></g>\n", out);
}

static void render_header(FILE *out, const struct render_ctx *c, const struct render_geom *g,
			  uint64_t total, const char *title)
{
	const struct render_opts *o = c->o;
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\" onload=\"fsInit()\">\n"
		"<!-- flame graph written by flamesidecar %s -->\n",
		g->W, g->height, g->W, g->height, FS_VERSION);
	fprintf(out,
		"<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"%s\" offset=\"5%%\"/><stop stop-color=\"%s\" offset=\"95%%\"/>"
		"</linearGradient></defs>\n",
		c->diff ? "#ffffff" : "#f2f2f2", c->diff ? "#f4f4f4" : "#eeeedd");
	fprintf(out, "<style>\ntext{font-size:%.0fpx}\n%s</style>\n", g->fs, render_css);
	fprintf(out,
		"<script><![CDATA[\nvar C = { W: %.0f, xpad: %.0f, fh: %.0f, fs: %.0f, "
		"top: %.2f, base: %.2f, inv: %d, total: %llu, hit: '%s' };\n%s]]></script>\n",
		g->W, g->xpad, g->fh, g->fs, g->ypad1, g->height - g->ypad2 - g->fh, o->inverted,
		(unsigned long long)total, RENDER_SEARCH_FILL, render_js);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"url(#bg)\"/>\n",
		g->W, g->height);
	fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"%.0f\">", g->W / 2, g->fs * 2);
	render_escape_str(out, title);
	fputs("</text>\n", out);
	if (o->subtitle && *o->subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%.1f\" y=\"%.0f\">", g->W / 2, g->fs * 4);
		render_escape_str(out, o->subtitle);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text id=\"details\" x=\"%.0f\" y=\"%.0f\" data-prefix=\"", g->xpad,
		g->height - g->fs / 2 - 2);
	render_escape_str(out, o->name_type);
	fputs("\"> </text>\n", out);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%.0f\" y=\"%.0f\">Reset Zoom</text>\n",
		g->xpad, g->fs * 2);
	fprintf(out, "<text id=\"search\" x=\"%.0f\" y=\"%.0f\">Search</text>\n", g->W - g->xpad,
		g->fs * 2);
	fprintf(out, "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\"> </text>\n", g->W - g->xpad,
		g->height - g->fs / 2 - 2);
}

/* opts (NULL: none) with every unset field at its default. */
static void render_opts_defaults(struct render_opts *o, const struct render_opts *opts)
{
	render_opts_init(o);
	if (opts)
		*o = *opts;
	if (!o->width)
		o->width = 1200;
	if (!o->frame_height)
		o->frame_height = 16;
	if (!o->font_size)
		o->font_size = 12;
	if (!o->count_name)
		o->count_name = "samples";
	if (!o->name_type)
		o->name_type = "Function:";
}

/* The largest change of a differential graph's nodes, either way. */
static double render_max_delta(const struct render_ctx *c)
{
	double maxdelta = 0;
	for (uint32_t i = 0; i < flame_node_count(c->f); i++) {
		double d = render_delta(c, i);
		if (d < 0)
			d = -d;
		if (d > maxdelta)
			maxdelta = d;
	}
	return maxdelta;
}

int render_svg(const struct flame *tree, FILE *out, const struct render_opts *opts,
	       struct fs_error *err)
{
	struct render_opts o;
	render_opts_defaults(&o, opts);

	cleanup_flame struct flame *rev = NULL;
	if (o.reverse) {
		rev = flame_reverse(tree, err);
		if (!rev)
			return -(err && err->code ? err->code : ENOMEM);
		tree = rev;
	}
	struct render_ctx c = {
	    .f = tree,
	    .o = &o,
	    .diff = flame_is_diff(tree),
	    .scale_a = o.scale_a > 0 ? o.scale_a : 1.0,
	};
	c.use_a = c.diff && o.negate;

	struct render_geom g = {
	    .W = o.width,
	    .xpad = RENDER_XPAD,
	    .fh = o.frame_height,
	    .fs = o.font_size,
	};
	g.ypad1 = g.fs * 3 + (o.subtitle && *o.subtitle ? g.fs * 2 : 0);
	g.ypad2 = g.fs * 2 + 10;
	uint64_t total = render_total(&c, FLAME_ROOT);
	double avail = g.W - 2 * g.xpad;
	if (avail < 1)
		avail = 1;
	g.wps = total ? avail / (double)total : 0;
	double minw = o.min_width_pct > 0 ? avail * o.min_width_pct / 100.0 : o.min_width;
	c.min_samples = g.wps > 0 ? minw / g.wps : 0;

	int r = 0;
	if (total > 0)
		r = render_collect(&c, FLAME_ROOT, 0, 0, false);
	if (r < 0) {
		free(c.v);
		return fs_error_set(err, -r, "laying out the flame graph");
	}

	double maxdelta = c.diff ? render_max_delta(&c) : 0;

	const char *title = o.title;
	if (!title)
		title =
		    c.diff ? (o.inverted ? "Differential Icicle Graph" : "Differential Flame Graph")
			   : (o.inverted ? "Icicle Graph" : "Flame Graph");
	g.height = (c.n ? c.max_depth + 1 : 1) * g.fh + g.ypad1 + g.ypad2;
	render_header(out, &c, &g, total, title);

	fputs("<g id=\"frames\">\n", out);
	uint64_t rng = 0x853c49e6748fea9bULL;
	for (size_t i = 0; i < c.n; i++)
		render_frame(out, &c, &g, &c.v[i], total, maxdelta, &rng);
	fputs("</g>\n", out);
	if (total == 0)
		fprintf(out,
			"<text x=\"%.1f\" y=\"%.0f\" style=\"text-anchor:middle\">"
			"No stack counts found</text>\n",
			g.W / 2, g.ypad1 + g.fh);
	fputs("</svg>\n", out);
	free(c.v);
	if (fflush(out) != 0 || ferror(out))
		return fs_error_set(err, errno ? errno : EIO, "writing the SVG");
	return 0;
}

/* ---- options and output ---- */

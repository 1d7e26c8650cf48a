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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"

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

/* 1234567 -> "1,234,567" */
static void render_fmt_count(char *buf, size_t size, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
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
static const char render_js[] =
    "'use strict';\n"
    "var F = [], details, matched, unzoomBtn, searchBtn, prefix = '', zoomed = null, term = null;\n"
    "function fsInit() {\n"
    "  details = document.getElementById('details');\n"
    "  matched = document.getElementById('matched');\n"
    "  unzoomBtn = document.getElementById('unzoom');\n"
    "  searchBtn = document.getElementById('search');\n"
    "  prefix = details.getAttribute('data-prefix') || '';\n"
    "  var root = document.getElementById('frames'), gs = root.children;\n"
    "  for (var i = 0; i < gs.length; i++) {\n"
    "    var g = gs[i], title = g.children[0].textContent, r = g.children[1];\n"
    "    var p = title.lastIndexOf(' (');\n"
    "    var f = { g: g, r: r, t: g.children[2], title: title, idx: i,\n"
    "      name: p >= 0 ? title.substring(0, p) : title,\n"
    "      samples: p >= 0 ? parseInt(title.substring(p + 2).replace(/,/g, ''), 10) : 0,\n"
    "      x: parseFloat(r.getAttribute('x')), w: parseFloat(r.getAttribute('width')),\n"
    "      y: parseFloat(r.getAttribute('y')), fill: r.getAttribute('fill') };\n"
    "    f.depth = Math.round(C.inv ? (f.y - C.top) / C.fh : (C.base - f.y) / C.fh);\n"
    "    g.fsIdx = i;\n"
    "    F.push(f);\n"
    "  }\n"
    "  function frameOf(el) {\n"
    "    while (el && el.parentNode !== root) el = el.parentNode;\n"
    "    return el && el.fsIdx !== undefined ? F[el.fsIdx] : null;\n"
    "  }\n"
    "  root.addEventListener('click', function (e) { var f = frameOf(e.target); if (f) zoom(f); "
    "});\n"
    "  root.addEventListener('mouseover', function (e) {\n"
    "    var f = frameOf(e.target); if (f) details.textContent = prefix + ' ' + f.title; });\n"
    "  root.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
    "  unzoomBtn.addEventListener('click', unzoom);\n"
    "  searchBtn.addEventListener('click', function () { if (term !== null) resetSearch(); else "
    "askSearch(); });\n"
    "  window.addEventListener('keydown', function (e) {\n"
    "    if (e.key === 'F3' || ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F'))) {\n"
    "      e.preventDefault(); askSearch();\n"
    "    } else if (e.key === 'Escape') { resetSearch(); }\n"
    "  });\n"
    "  var q = new URLSearchParams(window.location.search);\n"
    "  if (q.has('x') && q.has('y')) {\n"
    "    var hit = findAt(parseFloat(q.get('x')), parseFloat(q.get('y')));\n"
    "    if (hit) zoom(hit);\n"
    "  }\n"
    "  if (q.get('s')) search(q.get('s'));\n"
    "}\n"
    "function findAt(x, y) {\n"
    "  for (var i = 0; i < F.length; i++) {\n"
    "    var f = F[i];\n"
    "    if (y >= f.y - 0.5 && y < f.y + C.fh - 0.5 && x >= f.x - 0.005 && x < f.x + f.w) return "
    "f;\n"
    "  }\n"
    "  return null;\n"
    "}\n"
    "function label(f, w) {\n"
    "  var max = Math.floor((w - 3) / (C.fs * 0.59)), cs = Array.from(f.name);\n"
    "  f.t.textContent = max < 3 ? '' : cs.length <= max ? f.name : cs.slice(0, max - 2).join('') "
    "+ '..';\n"
    "}\n"
    "function place(f, x, w, parent) {\n"
    "  f.g.style.display = '';\n"
    "  f.r.setAttribute('x', x.toFixed(2));\n"
    "  f.r.setAttribute('width', w.toFixed(2));\n"
    "  f.t.setAttribute('x', (x + 3).toFixed(2));\n"
    "  if (parent) f.g.classList.add('parent'); else f.g.classList.remove('parent');\n"
    "  label(f, w);\n"
    "}\n"
    "function zoom(f) {\n"
    "  var n = F.length, end = f.idx + 1, d = f.depth, anc = {}, i;\n"
    "  while (end < n && F[end].depth > f.depth) end++;\n"
    "  for (i = f.idx - 1; i >= 0 && d > 0; i--) if (F[i].depth < d) { anc[i] = 1; d = F[i].depth; "
    "}\n"
    "  var full = C.W - 2 * C.xpad, k = full / f.w;\n"
    "  for (i = 0; i < n; i++) {\n"
    "    var e = F[i];\n"
    "    if (i >= f.idx && i < end) place(e, C.xpad + (e.x - f.x) * k, e.w * k, false);\n"
    "    else if (anc[i]) place(e, C.xpad, full, true);\n"
    "    else e.g.style.display = 'none';\n"
    "  }\n"
    "  zoomed = f;\n"
    "  unzoomBtn.classList.remove('hide');\n"
    "  saveState();\n"
    "}\n"
    "function unzoom() {\n"
    "  for (var i = 0; i < F.length; i++) place(F[i], F[i].x, F[i].w, false);\n"
    "  zoomed = null;\n"
    "  unzoomBtn.classList.add('hide');\n"
    "  saveState();\n"
    "}\n"
    "function search(t) {\n"
    "  var re;\n"
    "  try { re = new RegExp(t); } catch (err) { matched.textContent = 'Bad regex: ' + t; return; "
    "}\n"
    "  var sum = 0, inside = -1;\n"
    "  for (var i = 0; i < F.length; i++) {\n"
    "    var f = F[i];\n"
    "    if (inside >= 0 && f.depth <= inside) inside = -1;\n"
    "    var m = re.test(f.name);\n"
    "    f.r.setAttribute('fill', m ? C.hit : f.fill);\n"
    "    if (m && inside < 0) { sum += f.samples; inside = f.depth; }\n"
    "  }\n"
    "  term = t;\n"
    "  matched.textContent = 'Matched: ' + (C.total ? 100 * sum / C.total : 0).toFixed(1) + '%';\n"
    "  searchBtn.textContent = 'Reset Search';\n"
    "  saveState();\n"
    "}\n"
    "function askSearch() {\n"
    "  var t = window.prompt('Search frames (regular expression):', term || '');\n"
    "  if (t) search(t); else if (t === '') resetSearch();\n"
    "}\n"
    "function resetSearch() {\n"
    "  for (var i = 0; i < F.length; i++) F[i].r.setAttribute('fill', F[i].fill);\n"
    "  term = null;\n"
    "  matched.textContent = ' ';\n"
    "  searchBtn.textContent = 'Search';\n"
    "  saveState();\n"
    "}\n"
    "function saveState() {\n"
    "  var q = new URLSearchParams();\n"
    "  if (zoomed) { q.set('x', zoomed.x); q.set('y', zoomed.y); }\n"
    "  if (term !== null) q.set('s', term);\n"
    "  var s = q.toString();\n"
    "  try { history.replaceState(null, '', s ? '?' + s : window.location.pathname); } catch (e) "
    "{}\n"
    "}\n";

static const char render_css[] = "text{font-family:Verdana,'DejaVu Sans',sans-serif;fill:#000}\n"
				 "#title{text-anchor:middle;font-size:17px}\n"
				 "#subtitle{text-anchor:middle;fill:#808080}\n"
				 "#search,#unzoom{cursor:pointer;fill:#404040}\n"
				 "#search,#matched{text-anchor:end}\n"
				 ".hide{display:none}\n"
				 "#frames g{cursor:pointer}\n"
				 "#frames text{pointer-events:none}\n"
				 "#frames g:hover rect{stroke:#303030;stroke-width:0.5}\n"
				 ".parent{opacity:0.5}\n";

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

	fputs("<g><title>", out);
	render_escape(out, name, shown, SIZE_MAX);
	fprintf(out, " (%s ", cnt);
	render_escape_str(out, o->count_name);
	fprintf(out, ", %.2f%%", total ? 100.0 * (double)samples / (double)total : 0.0);
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
	fprintf(out,
		")</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
		x, y, w, g->fh - 1, rgb.r, rgb.g, rgb.b, x + 3, y + (g->fh - 1) / 2 + g->fs * 0.35);
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

int render_svg(const struct flame *tree, FILE *out, const struct render_opts *opts,
	       struct fs_error *err)
{
	struct render_opts o;
	render_opts_init(&o);
	if (opts)
		o = *opts;
	if (!o.width)
		o.width = 1200;
	if (!o.frame_height)
		o.frame_height = 16;
	if (!o.font_size)
		o.font_size = 12;
	if (!o.count_name)
		o.count_name = "samples";
	if (!o.name_type)
		o.name_type = "Function:";

	struct flame *rev = NULL;
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
		flame_free(rev);
		return fs_error_set(err, -r, "laying out the flame graph");
	}

	double maxdelta = 0;
	if (c.diff) {
		for (uint32_t i = 0; i < flame_node_count(tree); i++) {
			double d = render_delta(&c, i);
			if (d < 0)
				d = -d;
			if (d > maxdelta)
				maxdelta = d;
		}
	}

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
	flame_free(rev);
	if (fflush(out) != 0 || ferror(out))
		return fs_error_set(err, errno ? errno : EIO, "writing the SVG");
	return 0;
}

/* ---- options and output ---- */

const char render_opts_help[] =
    "  --title TEXT       title (default \"Flame Graph\")\n"
    "  --subtitle TEXT    second line under the title\n"
    "  --width PX         image width (default 1200)\n"
    "  --height PX        frame height (default 16)\n"
    "  --fontsize PX      font size (default 12)\n"
    "  --minwidth PX|N%   elide frames narrower than this (default 0.1 px)\n"
    "  --reverse          reverse every stack (leaf first) and merge\n"
    "  --inverted         icicle graph: root at the top, growing down\n"
    "  --colors NAME      palette: java (default), hot, mem, io, js, perl, wakeup,\n"
    "                     chain, red, green, blue, aqua, yellow, purple, orange\n"
    "  --hash             colour by function name hash (stable across graphs)\n"
    "  --countname WORD   count unit in tooltips (default \"samples\")\n"
    "  --nametype TEXT    prefix of the hovered frame line (default \"Function:\")\n";

static int render_parse_uint(const char *arg, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < lo || v > hi)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

int render_opts_option(struct render_opts *o, int opt, const char *arg, struct fs_error *err)
{
	char *end;
	switch (opt) {
	case RENDER_OPT_TITLE: o->title = arg; return 1;
	case RENDER_OPT_SUBTITLE: o->subtitle = arg; return 1;
	case RENDER_OPT_WIDTH:
		if (render_parse_uint(arg, 100, 1000000, &o->width) < 0) {
			fs_error_set(err, 0, "--width '%s': expected pixels from 100 to 1000000",
				     arg);
			return -EINVAL;
		}
		return 1;
	case RENDER_OPT_HEIGHT:
		if (render_parse_uint(arg, 2, 1000, &o->frame_height) < 0) {
			fs_error_set(err, 0,
				     "--height '%s': expected a frame height from 2 to 1000 px",
				     arg);
			return -EINVAL;
		}
		return 1;
	case RENDER_OPT_FONTSIZE:
		if (render_parse_uint(arg, 1, 500, &o->font_size) < 0) {
			fs_error_set(err, 0, "--fontsize '%s': expected 1 to 500 px", arg);
			return -EINVAL;
		}
		return 1;
	case RENDER_OPT_MINWIDTH: {
		errno = 0;
		double v = strtod(arg, &end);
		bool pct = *end == '%';
		if (errno || end == arg || (pct ? end[1] != '\0' : *end != '\0') || !(v >= 0) ||
		    v > (pct ? 100 : 1e6)) {
			fs_error_set(
			    err, 0,
			    "--minwidth '%s': expected pixels (0.1) or a percentage (0.5%%)", arg);
			return -EINVAL;
		}
		o->min_width = pct ? 0 : v;
		o->min_width_pct = pct ? v : 0;
		return 1;
	}
	case RENDER_OPT_REVERSE: o->reverse = true; return 1;
	case RENDER_OPT_INVERTED: o->inverted = true; return 1;
	case RENDER_OPT_COLORS:
		if (palette_from_name(arg, &o->palette) < 0) {
			fs_error_set(err, 0, "--colors '%s': unknown palette; use one of: %s", arg,
				     palette_list());
			return -EINVAL;
		}
		return 1;
	case RENDER_OPT_HASH: o->hash = true; return 1;
	case RENDER_OPT_COUNTNAME: o->count_name = arg; return 1;
	case RENDER_OPT_NAMETYPE: o->name_type = arg; return 1;
	default: return 0;
	}
}

int render_dest_open(struct render_dest *d, const char *path, struct fs_error *err)
{
	*d = (struct render_dest){.f = stdout};
	if (!path || !strcmp(path, "-"))
		return 0;
	d->path = path;
	if (asprintf(&d->tmp, "%s.tmp.XXXXXX", path) < 0) {
		d->tmp = NULL;
		return fs_error_set(err, ENOMEM, "opening output '%s'", path);
	}
	int fd = mkostemp(d->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(d->tmp);
		d->tmp = NULL;
		return fs_error_set(
		    err, e, "creating a temporary file beside '%s' (is the directory writable?)",
		    path);
	}
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0) {
		/* keep 0600 */
	}
	d->f = fdopen(fd, "w");
	if (!d->f) {
		int e = errno;
		close(fd);
		unlink(d->tmp);
		free(d->tmp);
		d->tmp = NULL;
		return fs_error_set(err, e, "opening output '%s'", path);
	}
	return 0;
}

int render_dest_close(struct render_dest *d, bool commit, struct fs_error *err)
{
	int r = 0;
	if (!d->tmp) {
		if (fflush(stdout) != 0)
			r = fs_error_set(err, errno, "writing to standard output");
		return r;
	}
	if (fclose(d->f) != 0 && commit)
		r = fs_error_set(err, errno, "writing '%s'", d->tmp);
	d->f = NULL;
	if (commit && r == 0 && rename(d->tmp, d->path) < 0)
		r = fs_error_set(err, errno, "renaming '%s' to '%s'", d->tmp, d->path);
	if (!commit || r < 0)
		unlink(d->tmp);
	free(d->tmp);
	d->tmp = NULL;
	return r;
}

int render_dest_finish(struct render_dest *d, int r, struct fs_error *err)
{
	if (r < 0) {
		render_dest_close(d, false, NULL);
		return r;
	}
	return render_dest_close(d, true, err);
}

/* ---- flamesidecar render ---- */

static void render_usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: flamesidecar render [OPTIONS] [FILE]\n\n"
	    "Draw folded stacks (\"frame;frame;frame count\" lines, as written by\n"
	    "`flamesidecar collapse` or stackcollapse-*.pl) as an interactive SVG flame\n"
	    "graph. FILE defaults to standard input. Lines with two counts (\"stack A B\",\n"
	    "difffolded.pl output) give a differential graph.\n\n"
	    "Options:\n"
	    "  -o, --output FILE  write the SVG to FILE (default: standard output)\n"
	    "%s"
	    "  --negate           differential input: widths from the first count (A)\n"
	    "  -h, --help         this text\n\n"
	    "In the SVG: click a frame to zoom, \"Reset Zoom\" to go back, Ctrl-F or\n"
	    "\"Search\" for a regular expression; open it with ?s=REGEX to search on load\n"
	    "or ?x=X&y=Y to zoom on the frame at that point.\n\n"
	    "Examples:\n"
	    "  perf script | flamesidecar collapse | flamesidecar render > cpu.svg\n"
	    "  flamesidecar render --title 'checkout service' --colors java -o cpu.svg cpu.folded\n"
	    "  flamesidecar render --reverse --hash --minwidth 0.5%% cpu.folded > callers.svg\n"
	    "  flamesidecar render --inverted --colors mem alloc.folded > icicle.svg\n\n"
	    "Exit codes: 0 ok, 1 failed (unreadable input, no stacks), 2 usage.\n",
	    render_opts_help);
}

int cmd_render(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"negate", no_argument, NULL, 'N'},
	    {"help", no_argument, NULL, 'h'},
	    RENDER_LONG_OPTIONS,
	    {NULL, 0, NULL, 0},
	};
	struct render_opts o;
	struct fs_error err = {0};
	const char *output = NULL;
	int opt, r;
	render_opts_init(&o);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': output = optarg; break;
		case 'N': o.negate = true; break;
		case 'h': render_usage(stdout); return FS_EXIT_OK;
		default:
			r = render_opts_option(&o, opt, optarg, &err);
			if (r > 0)
				break;
			if (r < 0)
				fprintf(stderr, "flamesidecar render: %s\n", err.msg);
			fprintf(stderr, "Try 'flamesidecar render --help'.\n");
			return FS_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr,
			"flamesidecar render: expected at most one input file, got %d\n"
			"Try 'flamesidecar render --help'.\n",
			argc - optind);
		return FS_EXIT_USAGE;
	}
	const char *input = optind < argc ? argv[optind] : "-";
	cleanup_fclose FILE *in = NULL;
	if (strcmp(input, "-")) {
		in = fopen(input, "re");
		if (!in) {
			fprintf(stderr, "flamesidecar render: cannot open '%s': %s\n", input,
				strerror(errno));
			return FS_EXIT_FAIL;
		}
	} else if (isatty(STDIN_FILENO)) {
		fprintf(
		    stderr,
		    "flamesidecar render: no input: give a folded file or pipe folded stacks in\n"
		    "Try 'flamesidecar render --help'.\n");
		return FS_EXIT_USAGE;
	}

	struct flame *tree = flame_new();
	if (!tree) {
		fprintf(stderr, "flamesidecar render: out of memory\n");
		return FS_EXIT_FAIL;
	}
	if (flame_parse_folded(tree, in ? in : stdin, &err) < 0) {
		fprintf(stderr, "flamesidecar render: %s: %s\n", input, err.msg);
		flame_free(tree);
		return FS_EXIT_FAIL;
	}
	const struct flame_stats *st = flame_stats(tree);
	if (st->malformed)
		fprintf(stderr,
			"flamesidecar render: %s: skipped %llu of %llu lines that are not "
			"\"frame;frame count\"\n",
			input, (unsigned long long)st->malformed, (unsigned long long)st->lines);
	if (st->truncated)
		fprintf(stderr,
			"flamesidecar render: %s: %llu stacks deeper than %d frames were cut\n",
			input, (unsigned long long)st->truncated, FLAME_DEPTH_MAX);
	bool empty =
	    flame_node_total(tree, FLAME_ROOT) == 0 && flame_node_total_a(tree, FLAME_ROOT) == 0;

	struct render_dest d;
	if (render_dest_open(&d, output, &err) < 0) {
		fprintf(stderr, "flamesidecar render: %s\n", err.msg);
		flame_free(tree);
		return FS_EXIT_FAIL;
	}
	r = render_svg(tree, d.f, &o, &err);
	flame_free(tree);
	if (render_dest_finish(&d, r, &err) < 0) {
		fprintf(stderr, "flamesidecar render: %s\n", err.msg);
		return FS_EXIT_FAIL;
	}
	if (empty) {
		fprintf(stderr,
			"flamesidecar render: %s: no stacks with samples found; the SVG says so. "
			"Is this folded output (\"frame;frame count\")?\n",
			input);
		return FS_EXIT_FAIL;
	}
	return FS_EXIT_OK;
}

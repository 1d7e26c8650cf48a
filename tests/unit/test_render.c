/* test_render.c - the SVG writer (render.c: escaping, layout) and the
 * palettes (palette.c); the frame tree is test_flame.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "palette.h"
#include "render.h"
#include "tap.h"

/* render_escape into a malloc'd string. */
static char *escape(const char *s, size_t len, size_t max)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	render_escape(m, s, len, max);
	fclose(m);
	return buf;
}

static void test_escape(void)
{
	char *s;
	s = escape("a<b>&\"c'", 8, SIZE_MAX);
	is_str(s, "a&lt;b&gt;&amp;&quot;c&#39;", "markup characters are escaped");
	free(s);
	s = escape("x]]>y", 5, SIZE_MAX);
	is_str(s, "x]]&gt;y", "]]> cannot end a section");
	free(s);
	s = escape("a\x01\tb\x7f", 5, SIZE_MAX);
	is_str(s,
	       "a\xef\xbf\xbd\xef\xbf\xbd"
	       "b\xef\xbf\xbd",
	       "control characters become U+FFFD");
	free(s);
	s = escape("\xff\xc3(\xed\xa0\x80\xc0\xaf", 8, SIZE_MAX);
	ok(strstr(s, "\xff") == NULL && strstr(s, "\xc0") == NULL && strstr(s, "\xed") == NULL,
	   "invalid UTF-8, surrogates and overlong forms are replaced");
	is_int(render_text_chars("\xff\xc3(\xed\xa0\x80\xc0\xaf", 8), 8,
	       "each invalid byte counts one");
	free(s);
	s = escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", 14, SIZE_MAX);
	is_str(s, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", "valid UTF-8 passes through");
	free(s);
	s = escape("\xef\xbf\xbe", 3, SIZE_MAX);
	is_str(s, "\xef\xbf\xbd", "U+FFFE (not an XML character) is replaced");
	free(s);
	s = escape("abcdefghij", 10, 6);
	is_str(s, "abcd..", "long text is cut to max_chars with ..");
	free(s);
	s = escape("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10, 4);
	is_str(s, "\xc3\xa9\xc3\xa9..", "cutting keeps whole UTF-8 characters");
	free(s);
	s = escape("abcdef", 6, 2);
	is_str(s, "", "no room for a label gives nothing");
	free(s);
	s = escape("abc", 3, 3);
	is_str(s, "abc", "text that fits is not cut");
	free(s);
}

/* Each kind's colour stays in its family's range (palette.c: a channel is
 * base + span * v, v in [0,1)) over many random draws: the java palette
 * the way async-profiler tells frames apart. */
static void test_palette_ranges(void)
{
	static const struct {
		const char *name, *family;
		uint8_t lo[3], hi[3]; /* r, g, b */
	} want[] = {
	    {"java/lang/Foo.x_[j]", "green", {50, 190, 50}, {110, 250, 110}},
	    {"Foo.inl_[i]", "aqua", {50, 165, 165}, {110, 220, 220}},
	    {"Foo.x_[0]", "pale green (interpreted)", {150, 215, 150}, {190, 245, 190}},
	    {"Foo.x_[1]", "yellow-green (C1)", {150, 205, 40}, {200, 245, 80}},
	    {"do_syscall_64_[k]", "orange", {190, 90, 0}, {255, 155, 0}},
	    {"JavaThread::run", "yellow", {175, 175, 50}, {230, 230, 70}},
	    {"__libc_write", "red", {200, 50, 50}, {255, 130, 130}},
	};
	uint64_t rng = 7;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int in = 1;
		struct palette_rgb c = {0, 0, 0};
		for (int k = 0; k < 1000 && in; k++) {
			c = palette_color(PALETTE_JAVA, want[i].name, strlen(want[i].name), 0,
					  &rng);
			uint8_t ch[3] = {c.r, c.g, c.b};
			for (int j = 0; j < 3; j++)
				in &= ch[j] >= want[i].lo[j] && ch[j] <= want[i].hi[j];
		}
		ok(in, "java palette: %s is %s (last rgb(%u,%u,%u))", want[i].name, want[i].family,
		   c.r, c.g, c.b);
	}
}

static void test_palette(void)
{
	struct {
		const char *name;
		enum palette_kind kind;
	} cases[] = {
	    {"java/lang/Thread.run", PALETTE_KIND_JAVA},
	    {"Lcom/example/Foo;::bar", PALETTE_KIND_JAVA},
	    {"com.example.Foo.bar", PALETTE_KIND_JAVA},
	    {"Foo.bar_[j]", PALETTE_KIND_JAVA},
	    {"Foo.inl_[i]", PALETTE_KIND_INLINED},
	    {"com.example.Foo.bar_[0]", PALETTE_KIND_INTERPRETED},
	    {"com.example.Foo.bar_[1]", PALETTE_KIND_C1},
	    {"do_syscall_64_[k]", PALETTE_KIND_KERNEL},
	    {"entry_SYSCALL_64_after_hwframe", PALETTE_KIND_KERNEL},
	    {"JavaThread::run", PALETTE_KIND_CPP},
	    {"libjvm.so", PALETTE_KIND_NATIVE},
	    {"libc.so.6", PALETTE_KIND_NATIVE},
	    {"__libc_write", PALETTE_KIND_NATIVE},
	    {"[unknown]", PALETTE_KIND_NATIVE},
	    {"Interpreter", PALETTE_KIND_NATIVE},
	    {"--", PALETTE_KIND_SEPARATOR},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(palette_classify(PALETTE_JAVA, cases[i].name, strlen(cases[i].name)),
		       cases[i].kind, "java palette: %s", cases[i].name);
	is_int(palette_strip("foo_[k]", 7), 3, "annotation stripped for display");
	is_int(palette_strip("foo_[x]", 7), 7, "unknown annotation kept");
	uint64_t rng = 1;
	struct palette_rgb c1 = palette_color(PALETTE_HOT, "abc", 3, PALETTE_F_HASH, &rng);
	struct palette_rgb c2 = palette_color(PALETTE_HOT, "abc", 3, PALETTE_F_HASH, &rng);
	ok(c1.r == c2.r && c1.g == c2.g && c1.b == c2.b, "--hash: same name, same colour");
	struct palette_rgb g = palette_color(PALETTE_JAVA, "java/lang/Foo.x", 15, 0, &rng);
	ok(g.g > g.r && g.g > g.b, "java frames are green");
	test_palette_ranges();
	struct palette_rgb red = palette_diff(5, 10), blue = palette_diff(-5, 10),
			   z = palette_diff(0, 10);
	ok(red.r == 255 && red.g < 255 && blue.b == 255 && blue.r < 255 && z.r == z.g && z.g == z.b,
	   "differential colours: red grew, blue shrank, grey unchanged");
	enum palette p;
	ok(palette_from_name("mem", &p) == 0 && p == PALETTE_MEM, "palette by name");
	ok(palette_from_name("nope", &p) < 0, "unknown palette rejected");
}

static void test_render_layout(void)
{
	struct flame *f = flame_new();
	flame_add(f, "main;a;hot", 10, 75);
	flame_add(f, "main;a;tiny", 11, 1);
	flame_add(f, "main;b", 6, 10000);
	struct render_opts o;
	render_opts_init(&o);
	o.min_width = 1.0; /* tiny is 1/10076 of 1180 px: elided */
	o.title = "T<&>";
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	struct fs_error err = {0};
	ok(render_svg(f, m, &o, &err) == 0, "render");
	fclose(m);
	ok(strstr(buf, "<title>hot (75 samples,") != NULL,
	   "visible frame has a title with samples");
	ok(strstr(buf, "tiny") == NULL, "frames narrower than minwidth are elided");
	ok(strstr(buf, "b (10,000 samples, 99.25%)") != NULL, "thousands separator and percent");
	ok(strstr(buf, ">T&lt;&amp;&gt;</text>") != NULL, "title escaped");
	free(buf);

	o.min_width = 0.1;
	o.inverted = true;
	buf = NULL;
	m = open_memstream(&buf, &size);
	ok(render_svg(f, m, &o, &err) == 0, "render inverted");
	fclose(m);
	ok(strstr(buf, "tiny") != NULL, "0.1 px keeps a 0.12 px frame");
	ok(strstr(buf, "inv: 1") != NULL, "inverted flag reaches the script");
	free(buf);
	flame_free(f);

	f = flame_new();
	buf = NULL;
	m = open_memstream(&buf, &size);
	ok(render_svg(f, m, NULL, &err) == 0, "render an empty tree");
	fclose(m);
	ok(strstr(buf, "No stack counts found") != NULL, "empty graph says so");
	free(buf);
	flame_free(f);
}

/* render_fmt_fixed writes printf's bytes: random coordinates, exact ties
 * (0.125, 2.5: printf rounds them to even), values just off a tie,
 * negative, -0, huge, NaN. */
static void test_fixed(void)
{
	char a[RENDER_FIXED_MAX], b[RENDER_FIXED_MAX];
	static const double special[] = {0,	 -0.0,	    0.005,	 0.015,	    0.125, 0.375,
					 2.5,	 1.005,	    1.015,	 1.25,	    1.35,  99.995,
					 100,	 1199.995,  1e7 - 0.005, 1e7,	    1e300, -1.5,
					 -0.001, 0.0049999, 0.0050001,	 123456.785};
	size_t bad = 0, n = 0;
	for (unsigned d = 0; d <= 2; d++) {
		for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++, n++) {
			size_t l = render_fmt_fixed(a, special[i], d);
			snprintf(b, sizeof(b), "%.*f", (int)d, special[i]);
			if (strcmp(a, b) || l != strlen(b)) {
				if (bad++ < 5)
					tap_diag("%.17g %%.%uf: %s, printf %s", special[i], d, a,
						 b);
			}
		}
		uint64_t x = 88172645463325252ull;
		for (int i = 0; i < 300000; i++, n++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* coordinates as render computes them: k * (W / total) */
			double v =
			    (double)(x % 1000000) * (1180.0 / (double)(x % 99991 + 1)) / 1000.0;
			if (i % 3 == 0)
				v = (double)(x % 200000) / 1000.0; /* near thousandths */
			size_t l = render_fmt_fixed(a, v, d);
			snprintf(b, sizeof(b), "%.*f", (int)d, v);
			if (strcmp(a, b) || l != strlen(b)) {
				if (bad++ < 5)
					tap_diag("%.17g %%.%uf: %s, printf %s", v, d, a, b);
			}
		}
	}
	ok(bad == 0, "render_fmt_fixed equals printf on %zu values (%zu differ)", n, bad);
}

int main(void)
{
	tap_plan(51 + 1);
	test_fixed();
	test_escape();
	test_palette();
	test_render_layout();
	return tap_done();
}

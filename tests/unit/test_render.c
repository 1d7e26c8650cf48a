/* test_render.c - the frame tree (flame.c), palettes and the SVG writer's
 * escaping (render.c). */
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
	is_str(s, "a\xef\xbf\xbd\xef\xbf\xbd" "b\xef\xbf\xbd", "control characters become U+FFFD");
	free(s);
	s = escape("\xff\xc3(\xed\xa0\x80\xc0\xaf", 8, SIZE_MAX);
	ok(strstr(s, "\xff") == NULL && strstr(s, "\xc0") == NULL && strstr(s, "\xed") == NULL,
	   "invalid UTF-8, surrogates and overlong forms are replaced");
	is_int(render_text_chars("\xff\xc3(\xed\xa0\x80\xc0\xaf", 8), 8, "each invalid byte counts one");
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

static void test_tree(void)
{
	struct flame *f = flame_new();
	ok(f != NULL, "flame_new");
	flame_add(f, "main;a;hot", 10, 30);
	flame_add(f, "main;a;cold", 11, 10);
	flame_add(f, "main;b", 6, 60);
	flame_add(f, "main;a", 6, 5);
	flame_add(f, "main;a;hot", 10, 1);
	is_int(flame_node_total(f, FLAME_ROOT), 106, "root total is the sum of all counts");
	uint32_t a = flame_find(f, "main;a", 6);
	ok(a != FLAME_NONE, "main;a exists");
	is_int(flame_node_total(f, a), 46, "inclusive count of main;a");
	is_int(flame_node_self(f, a), 5, "self count of main;a");
	uint32_t hot = flame_find(f, "main;a;hot", 10);
	is_int(flame_node_total(f, hot), 31, "a repeated stack merges (sorted prefix cache)");
	is_int(flame_node_parent(f, hot), a, "parent link");
	is_int(flame_node_count(f), 6, "all, main, a, hot, cold, b");
	ok(flame_find(f, "main;c", 6) == FLAME_NONE, "absent stack not found");
	ok(!flame_is_diff(f), "plain tree");

	/* the prefix cache must not merge "ab" with "a" or "a;b" */
	flame_add(f, "main;ab", 7, 2);
	flame_add(f, "main;a;b", 8, 3);
	flame_add(f, "main;a", 6, 1);
	is_int(flame_node_total(f, flame_find(f, "main;ab", 7)), 2, "main;ab distinct from main;a");
	is_int(flame_node_total(f, flame_find(f, "main;a;b", 8)), 3, "main;a;b under main;a");
	is_int(flame_node_self(f, a), 6, "main;a self after unsorted adds");

	uint32_t *kids;
	size_t n;
	ok(flame_children(f, a, &kids, &n) == 0 && n == 3, "main;a has 3 children");
	size_t l0, l1, l2;
	const char *n0 = flame_node_name(f, kids[0], &l0), *n1 = flame_node_name(f, kids[1], &l1),
		   *n2 = flame_node_name(f, kids[2], &l2);
	ok(l0 == 1 && !memcmp(n0, "b", 1) && l1 == 4 && !memcmp(n1, "cold", 4) && l2 == 3 &&
		   !memcmp(n2, "hot", 3),
	   "children sorted by name");
	free(kids);

	struct flame *r = flame_reverse(f, NULL);
	ok(r != NULL, "flame_reverse");
	uint32_t rh = flame_find(r, "hot;a;main", 10);
	ok(rh != FLAME_NONE && flame_node_total(r, rh) == 31, "reversed stack hot;a;main");
	is_int(flame_node_total(r, FLAME_ROOT), 112, "reversal keeps the total");
	flame_free(r);
	flame_free(f);
}

static void test_parse(void)
{
	const char text[] = "main;a;hot 30\n"
			    "main;a;cold 10\r\n"
			    "\n"
			    "no count here\n"
			    "main;b 60\n"
			    "main;x 12abc\n"
			    "   \n"
			    "main;frame with spaces 7\n"
			    "main;frac 2.5\n"
			    "main;last 4"; /* no newline */
	FILE *in = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct flame *f = flame_new();
	struct fs_error err = { 0 };
	ok(flame_parse_folded(f, in, &err) == 0, "parse folded text");
	fclose(in);
	const struct flame_stats *st = flame_stats(f);
	is_int(st->lines, 8, "non-empty lines counted");
	is_int(st->malformed, 2, "malformed lines counted");
	is_int(flame_node_total(f, FLAME_ROOT), 30 + 10 + 60 + 7 + 3 + 4, "counts summed");
	ok(flame_find(f, "main;frame with spaces", 22) != FLAME_NONE, "spaces inside frame names");
	ok(flame_find(f, "main;a;cold", 11) != FLAME_NONE, "CRLF line endings");
	ok(!flame_is_diff(f), "single-count input is not differential");
	flame_free(f);

	const char dtext[] = "main;a 10 20\nmain;b 5 0\n";
	in = fmemopen((void *)dtext, sizeof(dtext) - 1, "r");
	f = flame_new();
	ok(flame_parse_folded(f, in, &err) == 0, "parse differential text");
	fclose(in);
	ok(flame_is_diff(f), "two counts make a differential tree");
	uint32_t a = flame_find(f, "main;a", 6), b = flame_find(f, "main;b", 6);
	ok(flame_node_self_a(f, a) == 10 && flame_node_self(f, a) == 20, "A and B counts of main;a");
	ok(flame_node_self_a(f, b) == 5 && flame_node_self(f, b) == 0, "main;b only in A");
	is_int(flame_node_total_a(f, FLAME_ROOT), 15, "A total");

	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);
	ok(render_svg(f, m, NULL, &err) == 0, "render a differential tree");
	fclose(m);
	ok(strstr(buf, "fill=\"rgb(255,") != NULL, "grown frame is red");
	ok(strstr(buf, "main;b") == NULL && strstr(buf, "<title>b ") == NULL,
	   "frame only in A has no width and is not drawn");
	free(buf);
	flame_free(f);

	/* a line longer than FLAME_LINE_MAX is skipped, the next one kept */
	size_t big = FLAME_LINE_MAX + 100;
	char *long_text = malloc(big + 32);
	memset(long_text, 'x', big);
	strcpy(long_text + big, " 1\nok 3\n");
	in = fmemopen(long_text, strlen(long_text), "r");
	f = flame_new();
	ok(flame_parse_folded(f, in, &err) == 0, "parse text with an over-long line");
	fclose(in);
	is_int(flame_stats(f)->malformed, 1, "the over-long line is malformed");
	is_int(flame_node_total(f, FLAME_ROOT), 3, "the line after it is read");
	flame_free(f);
	free(long_text);
}

static void test_palette(void)
{
	struct {
		const char *name;
		enum palette_kind kind;
	} cases[] = {
		{ "java/lang/Thread.run", PALETTE_KIND_JAVA },
		{ "Lcom/example/Foo;::bar", PALETTE_KIND_JAVA },
		{ "com.example.Foo.bar", PALETTE_KIND_JAVA },
		{ "Foo.bar_[j]", PALETTE_KIND_JAVA },
		{ "Foo.inl_[i]", PALETTE_KIND_INLINED },
		{ "do_syscall_64_[k]", PALETTE_KIND_KERNEL },
		{ "entry_SYSCALL_64_after_hwframe", PALETTE_KIND_KERNEL },
		{ "JavaThread::run", PALETTE_KIND_CPP },
		{ "libjvm.so", PALETTE_KIND_NATIVE },
		{ "libc.so.6", PALETTE_KIND_NATIVE },
		{ "__libc_write", PALETTE_KIND_NATIVE },
		{ "[unknown]", PALETTE_KIND_NATIVE },
		{ "Interpreter", PALETTE_KIND_NATIVE },
		{ "--", PALETTE_KIND_SEPARATOR },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(palette_classify(PALETTE_JAVA, cases[i].name, strlen(cases[i].name)), cases[i].kind,
		       "java palette: %s", cases[i].name);
	is_int(palette_strip("foo_[k]", 7), 3, "annotation stripped for display");
	is_int(palette_strip("foo_[x]", 7), 7, "unknown annotation kept");
	uint64_t rng = 1;
	struct palette_rgb c1 = palette_color(PALETTE_HOT, "abc", 3, PALETTE_F_HASH, &rng);
	struct palette_rgb c2 = palette_color(PALETTE_HOT, "abc", 3, PALETTE_F_HASH, &rng);
	ok(c1.r == c2.r && c1.g == c2.g && c1.b == c2.b, "--hash: same name, same colour");
	struct palette_rgb g = palette_color(PALETTE_JAVA, "java/lang/Foo.x", 15, 0, &rng);
	ok(g.g > g.r && g.g > g.b, "java frames are green");
	struct palette_rgb red = palette_diff(5, 10), blue = palette_diff(-5, 10), z = palette_diff(0, 10);
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
	struct fs_error err = { 0 };
	ok(render_svg(f, m, &o, &err) == 0, "render");
	fclose(m);
	ok(strstr(buf, "<title>hot (75 samples,") != NULL, "visible frame has a title with samples");
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

int main(void)
{
	test_escape();
	test_tree();
	test_parse();
	test_palette();
	test_render_layout();
	return tap_done();
}

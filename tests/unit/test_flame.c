/* test_flame.c - the frame tree (sidecar/graph/flame.c) and the folded-text
 * reader (flame_folded.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "render.h" /* a differential tree drawn */
#include "tap.h"

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
	struct fs_error err = {0};
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
	ok(flame_node_self_a(f, a) == 10 && flame_node_self(f, a) == 20,
	   "A and B counts of main;a");
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

int main(void)
{
	tap_plan(36);
	test_tree();
	test_parse();
	return tap_done();
}

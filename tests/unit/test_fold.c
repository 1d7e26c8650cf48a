/* test_fold.c - the folded-stack table: summing, sorted iteration, limits,
 * growth, writing and parsing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "tap.h"

struct collect {
	char text[4096];
	size_t len;
	int calls;
	int stop_after;
};

static int collect_fn(const char *stack, size_t len, uint64_t count, void *arg)
{
	struct collect *c = arg;
	c->calls++;
	c->len += (size_t)snprintf(c->text + c->len, sizeof(c->text) - c->len, "%.*s=%llu|",
				   (int)len, stack, (unsigned long long)count);
	return c->stop_after && c->calls == c->stop_after ? 42 : 0;
}

static void test_sum_and_order(void)
{
	struct fold *f = fold_new();
	ok(f != NULL, "fold_new");
	is_int(fold_add(f, "b;c", 3, 2), 0, "add b;c");
	is_int(fold_add(f, "a", 1, 1), 0, "add a");
	is_int(fold_add(f, "b;c", 3, 5), 0, "add b;c again");
	is_int(fold_add(f, "a;b", 3, 1), 0, "add a;b");
	is_int(fold_add(f, "a\tb", 3, 1), 0, "add a<TAB>b");
	is_int(fold_add(f, "zero", 4, 0), 0, "add with count 0");
	is_int(fold_add(f, "", 0, 4), 0, "add the empty stack");
	is_int(fold_add(f, "x\0y", 3, 1), 0, "add a stack with a NUL byte");
	is_int(fold_count(f), 7, "7 distinct stacks");
	is_int(fold_total(f), 15, "total 15");
	is_int(fold_get(f, "b;c", 3), 7, "b;c summed to 7");
	is_int(fold_get(f, "b;", 2), 0, "absent stack is 0");

	struct collect c = {0};
	is_int(fold_foreach(f, collect_fn, &c), 0, "foreach visits all");
	/* memcmp order, a prefix first: "" < "a" < "a\tb" < "a;b" < "b;c" < "x\0y" < "zero" */
	ok(!memcmp(c.text, "=4|a=1|a\tb=1|a;b=1|b;c=7|x", 26), "sorted byte-wise like perl's cmp");
	ok(strstr(c.text, "zero=0|") != NULL, "a zero count is kept");

	struct collect s = {.stop_after = 2};
	is_int(fold_foreach(f, collect_fn, &s), 42, "foreach stops on a non-zero return");
	is_int(s.calls, 2, "after 2 calls");
	fold_free(f);
}

static void test_limits(void)
{
	struct fold *f = fold_new();
	char *big = malloc(FOLD_STACK_MAX + 1);
	memset(big, 'x', FOLD_STACK_MAX + 1);
	is_int(fold_add(f, big, FOLD_STACK_MAX + 1, 1), -E2BIG,
	       "a stack over FOLD_STACK_MAX is refused");
	is_int(fold_add(f, big, FOLD_STACK_MAX, 1), 0, "a stack of exactly FOLD_STACK_MAX fits");
	is_int(fold_add(f, "s", 1, UINT64_MAX), 0, "add UINT64_MAX");
	is_int(fold_add(f, "s", 1, 5), 0, "and more");
	ok(fold_get(f, "s", 1) == UINT64_MAX, "counts saturate");
	ok(fold_total(f) == UINT64_MAX, "total saturates");
	is_int(fold_add(f, "t", 1, 1), 0, "a small key after a big one");
	ok(fold_get(f, big, FOLD_STACK_MAX) == 1, "the big key is still found");
	free(big);
	fold_free(f);
}

static void test_growth(void)
{
	struct fold *f = fold_new();
	char key[32];
	int bad = 0;
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 100000; i++) {
			int n = snprintf(key, sizeof(key), "main;f%d;g%d", i, i % 7);
			if (fold_add(f, key, (size_t)n, (uint64_t)i + 1) < 0)
				bad++;
		}
	is_int(bad, 0, "200000 adds");
	is_int(fold_count(f), 100000, "100000 distinct stacks after growing");
	int wrong = 0;
	for (int i = 0; i < 100000; i += 997) {
		int n = snprintf(key, sizeof(key), "main;f%d;g%d", i, i % 7);
		if (fold_get(f, key, (size_t)n) != 2 * ((uint64_t)i + 1))
			wrong++;
	}
	is_int(wrong, 0, "counts survive rehashing");
	fold_free(f);
}

static void test_write_parse(void)
{
	struct fold *f = fold_new();
	fold_add(f, "java;a;b", 8, 3);
	fold_add(f, "java;a", 6, 18446744073709551615ULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	is_int(fold_write(f, m), 0, "fold_write");
	fclose(m);
	is_str(buf, "java;a 18446744073709551615\njava;a;b 3\n",
	       "written sorted as 'stack count' lines");

	struct fold *g = fold_new();
	struct fs_error err = {0};
	is_int(fold_parse(g, buf, len, &err), 0, "fold_parse reads what fold_write wrote");
	is_int(fold_count(g), 2, "2 stacks parsed");
	ok(fold_get(g, "java;a", 6) == UINT64_MAX, "big count parsed");
	const char *more = "java;a;b 4\r\n\nwith space;x  2\nlast 1";
	is_int(fold_parse(g, more, strlen(more), &err), 0, "CRLF, blank lines, no final newline");
	is_int(fold_get(g, "java;a;b", 8), 7, "summed with the existing stack");
	is_int(fold_get(g, "with space;x", 12), 2, "spaces inside a stack are kept");
	is_int(fold_get(g, "last", 4), 1, "last line without newline");
	const char *bad = "ok 1\nno-count-here\n";
	ok(fold_parse(g, bad, strlen(bad), &err) == -EINVAL, "a line without a count is an error");
	ok(strstr(err.msg, "line 2") != NULL, "naming the line: %s", err.msg);
	free(buf);
	fold_free(f);
	fold_free(g);
}

/* A million distinct stacks into a 4 MiB table: it stops taking new ones
 * at its budget (memory never past it), old ones keep counting, and the
 * refused samples can be counted past the budget with fold_add_over. */
static void test_budget(void)
{
	struct fold *f = fold_new();
	const size_t budget = 4u << 20;
	fold_set_budget(f, budget);
	char key[64];
	size_t added = 0, refused = 0, peak = 0;
	int other = 0;
	for (unsigned i = 0; i < 1000000; i++) {
		int n = snprintf(key, sizeof(key), "java;a%u;b%u;c", i, i * 7u);
		int r = fold_add(f, key, (size_t)n, 1);
		if (r == 0)
			added++;
		else if (r == -ENOSPC)
			refused++;
		else
			other++;
		if (fold_memory(f) > peak)
			peak = fold_memory(f);
	}
	is_int(other, 0, "only -ENOSPC past the budget");
	ok(added > 10000 && refused > 0, "%zu stacks kept, %zu refused", added, refused);
	is_int(added + refused, 1000000, "every stack either kept or refused");
	ok(peak <= budget, "memory %zu never past the budget %zu", peak, budget);
	is_int(fold_count(f), added, "kept stacks in the table");
	is_int(fold_add(f, "java;a0;b0;c", 12, 5), 0, "an existing stack still counts past it");
	is_int(fold_get(f, "java;a0;b0;c", 12), 6, "and its count grew");
	is_int(fold_add(f, "java;new", 8, 1), -ENOSPC, "a new one is refused");
	is_int(fold_get(f, "java;new", 8), 0, "and not added");
	is_int(fold_add_over(f, "java;[dropped: stack table full]", 32, refused + 1), 0,
	       "fold_add_over ignores the budget");
	is_int(fold_total(f), 1000000 + 5 + 1, "total = every sample");
	fold_free(f);

	/* a budget below what a new table holds refuses at once */
	f = fold_new();
	fold_set_budget(f, 1024);
	is_int(fold_add(f, "a", 1, 1), -ENOSPC, "a 1 KiB budget takes nothing");
	is_int(fold_add_over(f, "a", 1, 1), 0, "but fold_add_over does");
	fold_set_budget(f, 0);
	is_int(fold_add(f, "b", 1, 1), 0, "budget 0: no cap");
	fold_free(f);
}

int main(void)
{
	tap_plan(54);
	test_sum_and_order();
	test_limits();
	test_growth();
	test_write_parse();
	test_budget();
	return tap_done();
}

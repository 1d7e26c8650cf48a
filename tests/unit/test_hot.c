/* test_hot.c - the hottest frames of a fold table (`top`, the `run`
 * summary): self and total counts, order, and no frame with 0 samples. */
#include <stdio.h>
#include <string.h>

#include "fold.h"
#include "hot.h"
#include "tap.h"

static void add(struct fold *f, const char *stack, uint64_t count)
{
	fold_add(f, stack, strlen(stack), count);
}

static void test_self_and_total(void)
{
	struct fold *f = fold_new();
	add(f, "java;main;work;leaf", 5);
	add(f, "java;main;work", 2);
	add(f, "java;main;idle", 1);
	add(f, "java;main;never", 0); /* a stack counted 0 times */
	struct hot_frame *fr = NULL;
	size_t n = 0;
	is_int(hot_frames(f, 0, 0, &fr, &n), 0, "hot_frames by self");
	is_int((int)n, 3, "only frames that were a leaf: leaf, work, idle");
	int zero = 0;
	for (size_t i = 0; i < n; i++)
		zero |= fr[i].self == 0;
	ok(!zero, "no frame listed with 0 self samples");
	ok(n == 3 && !strcmp(fr[0].name, "leaf") && fr[0].self == 5 &&
	       !strcmp(fr[1].name, "work") && fr[1].self == 2 && fr[1].total == 7,
	   "ordered by self; work total 7");
	hot_frames_free(fr, n);

	is_int(hot_frames(f, 1, 0, &fr, &n), 0, "hot_frames by total");
	is_int((int)n, 4, "main, work, leaf, idle (never has 0 total)");
	ok(n >= 1 && !strcmp(fr[0].name, "main") && fr[0].total == 8, "main first, total 8");
	hot_frames_free(fr, n);

	is_int(hot_frames(f, 0, 2, &fr, &n), 0, "hot_frames max 2");
	is_int((int)n, 2, "cut at max");
	hot_frames_free(fr, n);
	fold_free(f);
}

static void test_few_leaves(void)
{
	/* Fewer leaves than rows: the rows are not filled with 0-sample frames. */
	struct fold *f = fold_new();
	add(f, "p;a;b;c;d", 3);
	struct hot_frame *fr = NULL;
	size_t n = 0;
	hot_frames(f, 0, 20, &fr, &n);
	ok(n == 1 && !strcmp(fr[0].name, "d"), "one leaf, one row (%zu)", n);
	hot_frames_free(fr, n);
	fold_free(f);

	f = fold_new();
	add(f, "p;a", 0);
	hot_frames(f, 1, 20, &fr, &n);
	is_int((int)n, 0, "a table of 0-count stacks lists nothing");
	hot_frames_free(fr, n);
	fold_free(f);
}

int main(void)
{
	tap_plan(11);
	test_self_and_total();
	test_few_leaves();
	return tap_done();
}

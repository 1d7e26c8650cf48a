/* fuzz_collapse.c - arbitrary bytes through the collapser (the first byte
 * picks the options), then the invariants its output relies on: no error
 * but ENOMEM, stacks free of '\n' and within FOLD_STACK_MAX, iteration in
 * strictly increasing byte order, the total equal to the sum of the counts,
 * and the same table whether the input arrives whole or line by line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collapse.h"
#include "fold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

struct check {
	const char *prev;
	size_t prev_len;
	uint64_t sum;
	size_t n;
	const struct fold *other;
};

static int check_one(const char *stack, size_t len, uint64_t count, void *arg)
{
	struct check *c = arg;
	if (len > FOLD_STACK_MAX || memchr(stack, '\n', len))
		abort();
	if (c->n) {
		size_t m = len < c->prev_len ? len : c->prev_len;
		int r = memcmp(c->prev, stack, m);
		if (r > 0 || (r == 0 && c->prev_len >= len))
			abort(); /* not strictly increasing */
	}
	if (c->other && fold_get(c->other, stack, len) != count)
		abort();
	c->prev = stack;
	c->prev_len = len;
	c->sum = c->sum + count < c->sum ? UINT64_MAX : c->sum + count;
	c->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t flags = data[0];
	struct collapse_opts opts = {
	    .include_pid = flags & 1,
	    .include_tid = flags & 2,
	    .annotate_kernel = flags & 4,
	    .annotate_jit = flags & 8,
	    .include_addrs = flags & 16,
	    .event_filter = (flags & 32) ? "cycles" : NULL,
	};
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	struct fs_error err;

	struct fold *whole = fold_new();
	if (!whole)
		return 0;
	if (collapse_buffer(text, len, &opts, whole, &err) < 0)
		abort();

	/* the same input line by line through collapse_line */
	struct fold *lines = fold_new();
	struct collapse *c = collapse_new(&opts, lines);
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (collapse_line(c, p, (size_t)(le - p), &err) < 0)
			abort();
		p = nl ? nl + 1 : end;
	}
	collapse_free(c);

	struct check ck = {.other = lines};
	if (fold_foreach(whole, check_one, &ck) != 0)
		abort();
	if (ck.n != fold_count(whole) || ck.n != fold_count(lines) || ck.sum != fold_total(whole))
		abort();
	fold_free(lines);
	fold_free(whole);
	return 0;
}

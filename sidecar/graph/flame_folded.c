/* flame_folded.c - folded stacks ("frame;frame count" lines, or
 * "frame;frame a b" for a differential profile) read into a frame tree:
 * see flame.h. Lines are bounded (FLAME_LINE_MAX): a longer one is skipped
 * and counted as malformed, never buffered whole. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "flame.h"

static bool flame_is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Parse the trailing count of line[0..*len): digits with an optional
 * fraction (rounded). On success *len is cut to before the whitespace that
 * preceded the count. */
static bool flame_take_count(const char *line, size_t *len, uint64_t *out)
{
	size_t end = *len, i = end;
	while (i > 0 && ((line[i - 1] >= '0' && line[i - 1] <= '9') || line[i - 1] == '.'))
		i--;
	if (i == 0 || i == end || !flame_is_space(line[i - 1]))
		return false;
	uint64_t v = 0;
	size_t p = i;
	for (; p < end && line[p] >= '0' && line[p] <= '9'; p++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(line[p] - '0'), &v))
			return false;
	}
	if (p == i)
		return false;
	if (p < end && line[p] == '.') {
		bool up = p + 1 < end && line[p + 1] >= '5' && line[p + 1] <= '9';
		for (p++; p < end && line[p] >= '0' && line[p] <= '9'; p++)
			;
		if (up && v < UINT64_MAX)
			v++;
	}
	if (p != end)
		return false;
	while (i > 0 && flame_is_space(line[i - 1]))
		i--;
	*len = i;
	*out = v;
	return true;
}

static int flame_parse_line(struct flame *f, const char *line, size_t len, enum flame_column col)
{
	struct flame_stats *st = flame_stats_rw(f);
	while (len > 0 && (line[len - 1] == '\r' || flame_is_space(line[len - 1])))
		len--;
	size_t start = 0;
	while (start < len && flame_is_space(line[start]))
		start++;
	if (start == len)
		return 0;
	st->lines++;
	line += start;
	len -= start;
	uint64_t b, a;
	if (!flame_take_count(line, &len, &b)) {
		st->malformed++;
		return 0;
	}
	size_t len2 = len;
	if (flame_take_count(line, &len2, &a))
		return flame_add2(f, line, len2, a, b);
	if (col == FLAME_COLUMN_A)
		return flame_add2(f, line, len, b, 0);
	if (flame_is_diff(f))
		return flame_add2(f, line, len, 0, b);
	return flame_add(f, line, len, b);
}

int flame_parse_folded_as(struct flame *f, FILE *in, enum flame_column col, struct fs_error *err)
{
	size_t cap = 1 << 16, start = 0, end = 0;
	cleanup_free char *buf = malloc(cap);
	struct flame_stats *st = flame_stats_rw(f);
	bool skipping = false, eof = false;
	int r;
	if (!buf)
		return fs_error_set(err, ENOMEM, "reading folded stacks");
	while (!eof || start < end) {
		char *nl = memchr(buf + start, '\n', end - start);
		if (nl) {
			size_t n = (size_t)(nl - (buf + start));
			if (skipping) {
				skipping = false;
			} else if (n > FLAME_LINE_MAX) {
				st->lines++;
				st->malformed++;
			} else if ((r = flame_parse_line(f, buf + start, n, col)) < 0)
				return fs_error_set(err, -r, "adding a stack to the flame graph");
			start += n + 1;
			continue;
		}
		if (eof) { /* last line without a newline */
			if (!skipping &&
			    (r = flame_parse_line(f, buf + start, end - start, col)) < 0)
				return fs_error_set(err, -r, "adding a stack to the flame graph");
			break;
		}
		if (end - start > FLAME_LINE_MAX) {
			if (!skipping) {
				st->lines++;
				st->malformed++;
			}
			skipping = true;
			start = end = 0;
		}
		if (skipping) {
			start = end = 0;
		} else if (start > 0) {
			memmove(buf, buf + start, end - start);
			end -= start;
			start = 0;
		}
		if (end == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				return fs_error_set(err, ENOMEM, "reading folded stacks");
			buf = nb;
			cap *= 2;
		}
		size_t got = fread(buf + end, 1, cap - end, in);
		end += got;
		if (got == 0) {
			if (ferror(in))
				return fs_error_set(err, errno ? errno : EIO,
						    "reading folded stacks");
			eof = true;
		}
	}
	return 0;
}

int flame_parse_folded(struct flame *f, FILE *in, struct fs_error *err)
{
	return flame_parse_folded_as(f, in, FLAME_COLUMN_B, err);
}

/* utf8.c - see utf8.h */
#include "utf8.h"

#include <stdint.h>
#include <string.h>

size_t utf8_seq_len(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t v, min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, v = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, v = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, v = c & 0x07, min = 0x10000;
	else
		return 0; /* a continuation byte, 0xc0/0xc1 or 0xf5.. */
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	return n;
}

int utf8_valid(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq_len(u + i, len - i);
		if (!n)
			return 0;
		i += n;
	}
	return 1;
}

size_t utf8_sanitize(const char *in, size_t len, char *out, size_t cap, unsigned flags,
		     size_t *used)
{
	const unsigned char *u = (const unsigned char *)in;
	size_t o = 0, i = 0;
	if (used)
		*used = 0;
	if (cap == 0)
		return 0;
	while (i < len) {
		/* A run of printable ASCII other than ';' is copied as it is,
		 * whatever the flags (the end of a window sanitizes every frame
		 * name of every stack; nearly all are such runs). */
		size_t run = 0;
		while (i + run < len && u[i + run] >= 0x20 && u[i + run] < 0x7f &&
		       u[i + run] != ';')
			run++;
		if (run) {
			size_t take = o + 1 < cap ? cap - 1 - o : 0;
			if (take > run)
				take = run;
			memcpy(out + o, in + i, take);
			o += take;
			i += take;
			if (take < run)
				break; /* out is full */
			continue;
		}
		size_t n = utf8_seq_len(u + i, len - i);
		const char *src = n ? in + i : UTF8_REPLACEMENT;
		size_t w = n ? n : UTF8_REPLACEMENT_LEN;
		if (o + w + 1 > cap)
			break;
		memcpy(out + o, src, w);
		if (n == 1 && (flags & UTF8_FRAME)) {
			char ch = out[o];
			if (ch == ';')
				out[o] = ':';
			else if ((unsigned char)ch < 0x20 || ch == 0x7f)
				out[o] = '?';
		}
		o += w;
		i += n ? n : 1;
	}
	out[o] = '\0';
	if (used)
		*used = i;
	return o;
}

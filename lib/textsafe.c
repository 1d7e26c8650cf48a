/* textsafe.c - see textsafe.h */
#include "textsafe.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (n bytes left) and its code
 * point, or 0 when it is not one (bad lead, truncated, overlong,
 * surrogate, beyond U+10FFFF). */
static size_t textsafe_utf8(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t l;
	uint32_t c, min;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		l = 2, c = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		l = 3, c = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		l = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (l > n)
		return 0;
	for (size_t i = 1; i < l; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return l;
}

/* Code points a terminal acts on rather than shows. */
static int textsafe_control(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029;
}

char *textsafe_n(const char *s, size_t n, char *dst, size_t len, unsigned flags)
{
	size_t o = 0;
	if (!len)
		return dst;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	for (size_t i = 0; i < n && p[i];) {
		unsigned char b = p[i];
		size_t l = 1;
		int esc;
		if (b < 0x80) {
			esc = b < 0x20 || b == 0x7f || b == '\\' ||
			      ((flags & TEXTSAFE_QUOTE) && b == '"');
		} else {
			uint32_t cp = 0;
			size_t m = (flags & TEXTSAFE_ASCII) ? 0 : textsafe_utf8(p + i, n - i, &cp);
			esc = m == 0 || textsafe_control(cp);
			l = m ? m : 1;
		}
		if (!esc) {
			if (o + l >= len)
				break;
			memcpy(dst + o, p + i, l);
			o += l;
		} else {
			if (o + 4 * l >= len)
				break;
			for (size_t k = 0; k < l; k++, o += 4)
				snprintf(dst + o, len - o, "\\x%02x", p[i + k]);
		}
		i += l;
	}
	dst[o] = '\0';
	return dst;
}

char *textsafe(const char *s, char *dst, size_t len, unsigned flags)
{
	return textsafe_n(s, SIZE_MAX, dst, len, flags);
}

/* test_textsafe.c - lib/textsafe.c: what a hostile comm or frame name
 * becomes before it reaches a terminal or a log line. */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "textsafe.h"

/* No byte a terminal acts on survives, whatever the flags. */
static int terminal_clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return 0;
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) /* C1 */
			return 0;
		if (p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) /* bidi */
			return 0;
	}
	return 1;
}

int main(void)
{
	tap_plan(15);
	char out[256];
	is_str(textsafe("java.lang.Thread.run", out, sizeof(out), 0), "java.lang.Thread.run",
	       "plain text is kept");
	is_str(textsafe("\033[2J\033]0;pwned\a", out, sizeof(out), 0), "\\x1b[2J\\x1b]0;pwned\\x07",
	       "ESC sequences and BEL become \\xNN");
	is_str(textsafe("a\nb\rc\td\x7f", out, sizeof(out), 0), "a\\x0ab\\x0dc\\x09d\\x7f",
	       "newline, CR, tab, DEL");
	is_str(textsafe("back\\slash", out, sizeof(out), 0), "back\\x5cslash",
	       "a backslash is escaped, so escapes are unambiguous");
	is_str(textsafe("caf\xc3\xa9 \xe6\x97\xa5", out, sizeof(out), 0),
	       "caf\xc3\xa9 \xe6\x97\xa5", "UTF-8 letters are kept");
	is_str(textsafe("caf\xc3\xa9", out, sizeof(out), TEXTSAFE_ASCII), "caf\\xc3\\xa9",
	       "TEXTSAFE_ASCII escapes them");
	is_str(textsafe("x\xc2\x9b"
			"31m",
			out, sizeof(out), 0),
	       "x\\xc2\\x9b31m", "a C1 CSI in UTF-8 is escaped");
	is_str(textsafe("ab\xe2\x80\xae"
			"cd",
			out, sizeof(out), 0),
	       "ab\\xe2\\x80\\xaecd", "a right-to-left override is escaped");
	is_str(textsafe("\xc0\x9b\xff\xed\xa0\x80", out, sizeof(out), 0),
	       "\\xc0\\x9b\\xff\\xed\\xa0\\x80", "overlong, invalid and surrogate bytes");
	is_str(textsafe("\xe6\x97", out, sizeof(out), 0), "\\xe6\\x97", "a truncated sequence");
	is_str(textsafe("say \"hi\"", out, sizeof(out), TEXTSAFE_QUOTE), "say \\x22hi\\x22",
	       "TEXTSAFE_QUOTE escapes quotes");
	is_str(textsafe_n("\033abc", 2, out, sizeof(out), 0), "\\x1ba", "textsafe_n stops at n");
	char small[6];
	is_str(textsafe("ab\033cd", small, sizeof(small), 0), "ab",
	       "an escape that does not fit whole is dropped");
	is_str(textsafe(NULL, out, sizeof(out), 0), "", "NULL is empty");

	/* Every byte value, alone and after a lead byte. */
	int clean = 1;
	for (int a = 1; a < 256; a++)
		for (int b = 0; b < 256; b++) {
			char in[4] = {(char)a, (char)b, (char)0x80, 0};
			if (!terminal_clean(textsafe(in, out, sizeof(out), 0)))
				clean = 0;
		}
	ok(clean, "no two-byte input leaves a control byte in the output");
	return tap_done();
}

/* test_utf8.c - valid UTF-8 out of any bytes (lib/utf8.h). */
#include <string.h>

#include "tap.h"
#include "utf8.h"

static void is_clean(const char *in, size_t len, unsigned flags, const char *want, const char *what)
{
	char out[64];
	size_t used = 0;
	size_t n = utf8_sanitize(in, len, out, sizeof(out), flags, &used);
	if (!ok(n == strlen(want) && !memcmp(out, want, n) && used == len && utf8_valid(out, n),
		"%s", what))
		tap_diag("got '%s' (%zu bytes, used %zu of %zu)", out, n, used, len);
}

int main(void)
{
	tap_plan(13);
	is_clean("java.lang.String", 16, 0, "java.lang.String", "ASCII unchanged");
	is_clean("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5", 14, 0,
		 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
		 "2, 3 and 4-byte characters unchanged");
	is_clean("a\xff"
		 "b",
		 3, 0,
		 "a\xef\xbf\xbd"
		 "b",
		 "a stray byte becomes U+FFFD");
	is_clean("\xc0\xaf", 2, 0, "\xef\xbf\xbd\xef\xbf\xbd",
		 "an overlong '/' is two replacements");
	is_clean("\xed\xa0\x80", 3, 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
		 "a UTF-16 surrogate is invalid");
	is_clean("\xf4\x90\x80\x80", 4, 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
		 "past U+10FFFF is invalid");
	is_clean("x\xe2\x82", 3, 0, "x\xef\xbf\xbd\xef\xbf\xbd", "a cut sequence at the end");
	is_clean("a;b\tc\x7f", 6, UTF8_FRAME, "a:b?c?", "frame flag: ';' and controls");
	is_clean("a;b", 3, 0, "a;b", "without the flag ';' stays");

	char small[5];
	size_t used = 0;
	size_t n = utf8_sanitize("ab\xe2\x82\xac", 5, small, sizeof(small), 0, &used);
	ok(n == 2 && used == 2 && !strcmp(small, "ab"), "a character that does not fit is not cut");
	n = utf8_sanitize("abcdefgh", 8, small, sizeof(small), UTF8_FRAME, &used);
	ok(n == 4 && used == 4 && !strcmp(small, "abcd"),
	   "a run of ASCII is cut where out is full");
	n = utf8_sanitize("\xff", 1, small, 3, 0, &used);
	ok(n == 0 && used == 0 && small[0] == '\0', "nor is a replacement");
	ok(!utf8_valid("\x80", 1) && utf8_valid("", 0), "utf8_valid");
	return tap_done();
}

/* test_timeutil.c - the one duration parser (hook annotations and the
 * sidecar's options) and the monotonic clock. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "timeutil.h"

static long long parse(const char *s)
{
	unsigned long long ms = 0;
	int r = timeutil_parse_duration_ms(s, &ms);
	return r < 0 ? r : (long long)ms;
}

int main(void)
{
	tap_plan(36);
	is_int(parse("30"), 30000, "a bare number is seconds");
	is_int(parse("30s"), 30000, "s");
	is_int(parse("500ms"), 500, "ms");
	is_int(parse("2m"), 120000, "m");
	is_int(parse("1h"), 3600000, "h");
	is_int(parse("0"), 0, "zero parses (callers decide whether it is allowed)");
	is_int(parse("1.5s"), 1500, "a fraction of a second");
	is_int(parse("0.25m"), 15000, "a fraction of a minute");
	is_int(parse("2.5ms"), 3, "a fraction of a millisecond rounds to the nearest");
	is_int(parse("0.000001h"), 4, "six fraction digits");
	is_int(parse("999999999s"), 999999999000LL, "nine digits");
	is_int(parse("1000000000s"), -ERANGE, "ten digits refused");
	is_int(parse("0.0000001s"), -EINVAL, "seven fraction digits refused");
	const char *bad[] = {"",    "s",    "-5s",	   "+5s", " 5s",     "5s ",  "5 s",
			     "1e3", "0x10", "inf",	   "nan", "1.",	     ".5s",  "5sec",
			     "5S",  "5d",   "/etc/passwd", "5m;", "--pid=1", "1..2s"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		is_int(parse(bad[i]), -EINVAL, "refused: '%s'", bad[i]);
	unsigned long long ms;
	ok(timeutil_parse_duration_ms(NULL, &ms) == -EINVAL, "NULL refused");

	uint64_t a = timeutil_now_us();
	struct timespec ts = {.tv_nsec = 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	uint64_t b = timeutil_now_us();
	ok(b - a >= 20000 && b - a < 5000000, "the clock moves forward (%llu us)",
	   (unsigned long long)(b - a));
	ok(timeutil_now_ms() >= b / 1000, "ms and us agree");
	return tap_done();
}

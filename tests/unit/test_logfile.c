/* test_logfile.c - the log's UTC timestamps against gmtime_r. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "tap.h"

int main(void)
{
	tap_plan(6);
	/* Every day from 1970 to 2200 at a varying time of day, plus leap
	 * days and the ends of centuries. */
	int bad = 0;
	for (long long t = 0; t < 7258118400LL; t += 86400 + 3607) {
		char got[32], want[32];
		struct tm tm;
		time_t tt = (time_t)t;
		gmtime_r(&tt, &tm);
		strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%S", &tm);
		log_utc(tt, got, sizeof(got));
		if (strcmp(got, want) && bad++ < 3)
			tap_diag("%lld: got %s, want %s", t, got, want);
	}
	ok(bad == 0, "every sampled second from 1970 to 2200 matches gmtime_r");
	const struct {
		long long t;
		const char *s;
	} fixed[] = {
	    {0, "1970-01-01T00:00:00"},
	    {951782400, "2000-02-29T00:00:00"},
	    {4107542399LL, "2100-02-28T23:59:59"},
	    {4107542400LL, "2100-03-01T00:00:00"},
	    {1795392000LL, "2026-11-23T00:00:00"},
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		char got[32];
		log_utc((time_t)fixed[i].t, got, sizeof(got));
		is_str(got, fixed[i].s, "%lld", fixed[i].t);
	}
	return tap_done();
}

/* timeutil.c - see timeutil.h */
#include "timeutil.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <time.h>

int timeutil_parse_duration_ms(const char *s, unsigned long long *ms)
{
	unsigned long long whole = 0, frac = 0, scale = 1, mult;
	size_t i = 0;
	if (!s)
		return -EINVAL;
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		if (i >= 9)
			return -ERANGE;
		whole = whole * 10 + (unsigned)(s[i] - '0');
	}
	if (i == 0)
		return -EINVAL;
	if (s[i] == '.') {
		size_t j = ++i;
		for (; s[i] >= '0' && s[i] <= '9'; i++) {
			if (i - j >= 6)
				return -EINVAL;
			frac = frac * 10 + (unsigned)(s[i] - '0');
			scale *= 10;
		}
		if (i == j)
			return -EINVAL; /* "1." */
	}
	const char *u = s + i;
	if (!*u || !strcmp(u, "s"))
		mult = 1000;
	else if (!strcmp(u, "ms"))
		mult = 1;
	else if (!strcmp(u, "m"))
		mult = 60000;
	else if (!strcmp(u, "h"))
		mult = 3600000;
	else
		return -EINVAL;
	/* whole < 10^9 and frac < 10^6: no overflow in 64 bits */
	*ms = whole * mult + (frac * mult + scale / 2) / scale;
	return 0;
}

uint64_t timeutil_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t timeutil_clock_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t timeutil_now_ms(void)
{
	return timeutil_now_us() / 1000u;
}

int timeutil_remaining_ms(uint64_t deadline)
{
	uint64_t now = timeutil_now_ms();
	if (now >= deadline)
		return 0;
	return deadline - now > INT_MAX ? INT_MAX : (int)(deadline - now);
}

/* timeutil.h - time as the project uses it: durations written by people
 * (command-line options, annotations) and the monotonic clock for
 * deadlines and elapsed times. One parser, so the hook and the sidecar
 * accept exactly the same durations. */
#ifndef FS_TIMEUTIL_H
#define FS_TIMEUTIL_H

#include <stdint.h>
#include <time.h>

/* "30", "30s", "1.5s", "500ms", "2m", "1h" -> milliseconds (rounded to the
 * nearest). Digits, an optional fraction of at most 6 digits, an optional
 * unit (default s) and nothing else: no sign, space, exponent, hex, inf or
 * nan, so no path or option can pass as a duration. At most 9 digits
 * before the point. 0 or -EINVAL (-ERANGE for more digits). */
int timeutil_parse_duration_ms(const char *s, unsigned long long *ms);

/* CLOCK_MONOTONIC in milliseconds / microseconds. */
uint64_t timeutil_now_ms(void);
uint64_t timeutil_now_us(void);
/* clk (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...) in nanoseconds. */
uint64_t timeutil_clock_ns(clockid_t clk);
/* Milliseconds left until deadline (CLOCK_MONOTONIC ms): 0 when it has
 * passed, at most INT_MAX (UINT64_MAX: no deadline), for poll(). */
int timeutil_remaining_ms(uint64_t deadline);

#endif

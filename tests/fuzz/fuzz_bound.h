/* fuzz_bound.h - the per-input bounds of a libFuzzer target (header-only).
 *
 * A container chooses the bytes, so a slow input is as much a finding as a
 * crash: fuzz_bound_start() before the work on one input, fuzz_bound_end()
 * after it aborts when that input took more than FUZZ_INPUT_MS of CPU time
 * or four times that in all (environment FUZZ_INPUT_MS, default 500: the
 * instrumented build is ~10x slower than the real one, so that is ~50 ms
 * of real parse; a quadratic parse of a 1 MiB input takes minutes). Memory
 * is bounded by the runs themselves (-rss_limit_mb and -malloc_limit_mb in
 * tests/fuzz/smoke.sh). fuzz_bound_grow() stretches an input to a
 * container-sized one (the input repeated up to the cap the real reader
 * allows), so super-linear work shows even with short inputs. */
#ifndef FS_FUZZ_BOUND_H
#define FS_FUZZ_BOUND_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t fuzz_bound_clock_ms(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct fuzz_bound {
	uint64_t wall, cpu;
};

static inline struct fuzz_bound fuzz_bound_start(void)
{
	struct fuzz_bound b = {fuzz_bound_clock_ms(CLOCK_MONOTONIC),
			       fuzz_bound_clock_ms(CLOCK_THREAD_CPUTIME_ID)};
	return b;
}

/* CPU time over the limit, or wall time over four times it (a wait: other
 * jobs on the machine slow the wall clock, not the CPU time). */
static inline void fuzz_bound_end(struct fuzz_bound t0, const char *what, size_t size)
{
	static uint64_t limit;
	if (!limit) {
		const char *e = getenv("FUZZ_INPUT_MS");
		limit = e && strtoull(e, NULL, 10) ? strtoull(e, NULL, 10) : 500;
	}
	uint64_t cpu = fuzz_bound_clock_ms(CLOCK_THREAD_CPUTIME_ID) - t0.cpu;
	uint64_t wall = fuzz_bound_clock_ms(CLOCK_MONOTONIC) - t0.wall;
	if (cpu > limit || wall > 4 * limit) {
		fprintf(stderr,
			"fuzz_bound: %s took %llu ms of CPU, %llu ms in all, on a %zu-byte "
			"input (limit %llu ms CPU, %llu ms in all)\n",
			what, (unsigned long long)cpu, (unsigned long long)wall, size,
			(unsigned long long)limit, (unsigned long long)(4 * limit));
		abort();
	}
}

/* A malloc'd buffer of want bytes (plus a NUL after them) holding data
 * repeated; NULL when data is empty or memory is short. */
static inline char *fuzz_bound_grow(const uint8_t *data, size_t size, size_t want)
{
	if (!size)
		return NULL;
	char *b = malloc(want + 1);
	if (!b)
		return NULL;
	for (size_t at = 0; at < want;) {
		size_t n = want - at < size ? want - at : size;
		memcpy(b + at, data, n);
		at += n;
	}
	b[want] = '\0';
	return b;
}

#endif

/* phase.c - the hook's phases: the last one done (what a deadline reports)
 * and, with --timing, how long each took, in one log line (for
 * bench/hook.sh: where an opted-in start spends its time). See hook.h. */
#include <stdio.h>
#include <time.h>

#include "hook.h"

static struct {
	int on;
	struct timespec start, last;
	char line[256];
	size_t len;
} hook_timing;

/* read by the deadline's signal handler: only ever a pointer to a literal */
static const char *volatile hook_phase_done = "start";

static long hook_us_since(const struct timespec *t, const struct timespec *now)
{
	return (now->tv_sec - t->tv_sec) * 1000000L + (now->tv_nsec - t->tv_nsec) / 1000;
}

void hook_phase_start(int timing)
{
	hook_timing.on = timing;
	clock_gettime(CLOCK_MONOTONIC, &hook_timing.start);
	hook_timing.last = hook_timing.start;
}

const char *hook_phase_last(void)
{
	return hook_phase_done;
}

void hook_mark(const char *phase)
{
	hook_phase_done = phase;
	if (!hook_timing.on)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (hook_timing.len < sizeof(hook_timing.line))
		hook_timing.len += (size_t)snprintf(
		    hook_timing.line + hook_timing.len, sizeof(hook_timing.line) - hook_timing.len,
		    "%s %ld us, ", phase, hook_us_since(&hook_timing.last, &now));
	hook_timing.last = now;
}

void hook_timing_log(const char *stage, const char *id)
{
	if (!hook_timing.on)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	log_info(stage, id, "timing: %stotal %ld us", hook_timing.line,
		 hook_us_since(&hook_timing.start, &now));
}

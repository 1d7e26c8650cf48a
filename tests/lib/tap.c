/* tap.c - see tap.h */
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_count;
static int tap_failed;
static int tap_planned = -1; /* no plan yet */

void tap_plan(int n)
{
	if (tap_planned >= 0 || tap_count) {
		printf("# tap_plan(%d) called twice or after a check\n", n);
		tap_failed++;
		return;
	}
	printf("1..%d\n", n);
	fflush(stdout);
	tap_planned = n;
}

int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	tap_count++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

void tap_skip(int n, const char *why)
{
	for (int i = 0; i < n; i++)
		printf("ok %d # skip %s\n", ++tap_count, why);
	fflush(stdout);
}

void tap_skip_all(const char *why)
{
	if (tap_planned < 0)
		printf("1..0 # SKIP %s\n", why);
	else if (tap_count < tap_planned)
		tap_skip(tap_planned - tap_count, why);
	fflush(stdout);
	exit(tap_failed || (tap_planned >= 0 && tap_count > tap_planned) ? 1 : 0);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

int tap_done(void)
{
	if (tap_planned < 0) {
		printf("# no plan: call tap_plan(N) before the first check\n");
		return 1;
	}
	if (tap_count != tap_planned) {
		printf("# planned %d checks, ran %d\n", tap_planned, tap_count);
		return 1;
	}
	return tap_failed ? 1 : 0;
}

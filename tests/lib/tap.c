/* tap.c - see tap.h */
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_count;
static int tap_failed;
static int tap_planned;

void tap_plan(int n)
{
	printf("1..%d\n", n);
	tap_planned = 1;
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

void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(0);
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
	if (!tap_planned)
		printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

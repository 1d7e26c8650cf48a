/* tap.h - a tiny TAP producer for the C unit tests (run by prove).
 *
 * Every test program declares up front how many checks it runs:
 * tap_plan(N) first in main(). A group that returns early, or a loop that
 * runs fewer times than written, then fails the program (tap_done() and
 * prove both compare the count with the plan) instead of vanishing from
 * the output. A check that cannot run here is reported with tap_skip(),
 * which counts towards the plan. tests/integration/lint.bats checks that
 * every tests/unit/test_*.c calls tap_plan(). */
#ifndef FS_TAP_H
#define FS_TAP_H

/* Prints the plan "1..n"; call it once, before the first check. */
void tap_plan(int n);
/* ok(cond, fmt...) prints "ok N - msg" or "not ok N - msg"; returns cond. */
int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* n checks that cannot run here: "ok N # skip why", counted in the plan. */
void tap_skip(int n, const char *why);
/* Nothing can run here: the rest of the plan (or all of it) skipped, exit 0. */
void tap_skip_all(const char *why);
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The exit status: 1 if a check failed, no plan was given, or the number of
 * checks run differs from the plan. */
int tap_done(void);

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)
#define is_int(got, want, ...)                                                                     \
	do {                                                                                       \
		long long g_ = (long long)(got), w_ = (long long)(want);                           \
		if (!tap_ok(g_ == w_, __VA_ARGS__))                                                \
			tap_diag("got %lld, want %lld", g_, w_);                                   \
	} while (0)
#define is_str(got, want, ...)                                                                     \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		int same_ = (g_ && w_) ? strcmp(g_, w_) == 0 : g_ == w_;                           \
		if (!tap_ok(same_, __VA_ARGS__))                                                   \
			tap_diag("got '%s', want '%s'", g_ ? g_ : "(null)", w_ ? w_ : "(null)");   \
	} while (0)

#endif

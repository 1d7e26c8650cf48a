/* tap.h - a tiny TAP producer for the C unit tests (run by prove). */
#ifndef FS_TAP_H
#define FS_TAP_H

void tap_plan(int n);
/* ok(cond, fmt...) prints "ok N - msg" or "not ok N - msg"; returns cond. */
int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tap_skip_all(const char *why);
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the plan if none was given and returns the exit status. */
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

/* error.h - error reporting shared by every flamesidecar module.
 *
 * Fallible functions return 0 on success or a negative errno, and fill a
 * struct fs_error with context as the error travels up (fs_error_wrap:
 * "what the caller was doing: what failed: why"). Library code (lib/,
 * sidecar/<folder>/) never prints or logs: the program reports the error
 * once, where it decides what happens next: the sidecar's verbs print it
 * (sidecar/cli.h), the hook, the wrapper and the agent log it (lib/log.h).
 * A helper that cannot fail but for "no" returns -1 and says so in its
 * comment (a parser's "not this form", a lookup's "none").
 */
#ifndef FS_ERROR_H
#define FS_ERROR_H

#include <stddef.h>

#define FS_ERROR_MSG_MAX 512

struct fs_error {
	int code;		    /* positive errno, 0 when unset */
	char msg[FS_ERROR_MSG_MAX]; /* "what failed: on what: why" */
};

/* Set err (if not NULL) to code (errno, sign ignored) and a formatted
 * message; ": strerror(code)" is appended when code != 0. Returns -abs(code),
 * or -EIO when code is 0, so callers can `return fs_error_set(...)`. */
int fs_error_set(struct fs_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix context to an existing message ("context: old message").
 * Returns -err->code (or -EIO). */
int fs_error_wrap(struct fs_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reset to "no error". */
void fs_error_clear(struct fs_error *err);

#endif

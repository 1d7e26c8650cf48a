/* error.c - see error.h */
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fs_error_set(struct fs_error *err, int code, const char *fmt, ...)
{
	int c = abs(code);
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		if (n < 0)
			err->msg[0] = '\0';
		size_t len = strlen(err->msg);
		if (c && len < sizeof(err->msg))
			snprintf(err->msg + len, sizeof(err->msg) - len, ": %s", strerror(c));
		err->code = c;
	}
	return c ? -c : -EIO;
}

int fs_error_wrap(struct fs_error *err, const char *fmt, ...)
{
	if (!err)
		return -EIO;
	char prefix[FS_ERROR_MSG_MAX];
	char old[FS_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	if (n < 0)
		prefix[0] = '\0';
	memcpy(old, err->msg, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	/* Truncation is acceptable: the message is for people. */
	size_t pl = strnlen(prefix, sizeof(err->msg) - 3);
	memcpy(err->msg, prefix, pl);
	memcpy(err->msg + pl, ": ", 2);
	size_t room = sizeof(err->msg) - pl - 3;
	size_t ol = strnlen(old, room);
	memcpy(err->msg + pl + 2, old, ol);
	err->msg[pl + 2 + ol] = '\0';
	return err->code ? -err->code : -EIO;
}

void fs_error_clear(struct fs_error *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}

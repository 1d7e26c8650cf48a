/* logfile.h - the log file the hook and the runtime wrapper share
 * (config "log_file", default /run/flamesidecar/hook.log), a sink of
 * lib/log.h (which formats and escapes its lines): in a 0700 directory made
 * if missing, the file 0600, never through a symlink, moved to FILE.1 once
 * past LOGFILE_ROTATE_BYTES. Best effort: a log that cannot be written
 * never fails the caller. */
#ifndef FS_LOGFILE_H
#define FS_LOGFILE_H

#include <stddef.h>

#define LOGFILE_ROTATE_BYTES (1024 * 1024)

/* Printable ASCII is kept; every other byte and '\\' become \xNN (and '"'
 * too when quote is set, for quoted fields). dst is always terminated. */
void logfile_escape(const char *s, char *dst, size_t len, int quote);

/* Make the directory, rotate, open for appending: an fd, or -1. */
int logfile_open(const char *path);

/* Write one formatted line to fd (if >= 0); best effort. */
void logfile_write(int fd, const char *line, size_t n);

#endif

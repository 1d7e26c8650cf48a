/* logfile.h - the log file the hook and the runtime wrapper share
 * (config "log_file", default /run/flamesidecar/hook.log): one line per
 * event, "<UTC time> <program>[<pid>] <stage> <id>: <message>", in a 0700
 * directory made if missing, the file 0600, never through a symlink, moved
 * to FILE.1 once past LOGFILE_ROTATE_BYTES. Everything that came from
 * outside is escaped, so a line is always one line. Best effort: a log
 * that cannot be written never fails the caller. */
#ifndef FS_LOGFILE_H
#define FS_LOGFILE_H

#include <stddef.h>
#include <time.h>

#define LOGFILE_ROTATE_BYTES (1024 * 1024)

/* Printable ASCII is kept; every other byte and '\\' become \xNN (and '"'
 * too when quote is set, for quoted fields). dst is always terminated. */
void logfile_escape(const char *s, char *dst, size_t len, int quote);

/* Make the directory, rotate, open for appending: an fd, or -1. */
int logfile_open(const char *path);

/* secs since the epoch as YYYY-MM-DDTHH:MM:SS, UTC, without glibc's time
 * zone machinery (which reads /etc/localtime). */
void logfile_utc(time_t secs, char *out, size_t len);

/* Format one line (newline included) into line: the time now, prog and
 * the pid, stage, and id and msg escaped ("-" for an empty id). Returns its
 * length (truncated to len - 1). */
size_t logfile_format(char *line, size_t len, const char *prog, const char *stage, const char *id,
		      const char *msg);

/* Write one formatted line to fd (if >= 0); best effort. */
void logfile_write(int fd, const char *line, size_t n);

#endif

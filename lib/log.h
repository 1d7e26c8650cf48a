/* log.h - the one log of every flamesidecar program: the hook, the runtime
 * wrapper, the JVM agent and the sidecar.
 *
 * One line per event, one format everywhere:
 *
 *   <UTC time>Z <level> <program>[<pid>] <stage> <id>: <message>
 *
 *   2026-11-28T00:01:02.345Z info flamehook[812] createRuntime c1: registered pid 806 ...
 *
 * level is error, warn, info or debug; stage is what the program was doing
 * (a hook stage, a wrapper verb, "agent"), id the container ("-" when
 * none). Everything in id and message is escaped (lib/textsafe.h, ASCII:
 * bytes outside printable ASCII and '\\' become \xNN), so a line is always
 * one line whatever a container named itself.
 *
 * One level setting: lines above it (less severe) are dropped. The default
 * is info; FLAMESIDECAR_LOG_LEVEL=error|warn|info|debug in the environment,
 * or "log_level" in the configuration (lib/config.h), sets it.
 *
 * Sinks: a file descriptor (the shared log file, lib/logfile.h), stderr for
 * lines at or above a chosen severity, and one callback (the wrapper's
 * runtime log and syslog, the agent's JVM stderr). Best effort: logging
 * never fails its caller and keeps errno.
 *
 * Library code does not log: it fills a struct fs_error (lib/error.h) or
 * hands warnings to its caller's callback; programs log. */
#ifndef FS_LOG_H
#define FS_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <time.h>

/* Not LOG_*: <syslog.h> owns those names. */
enum fs_log_level {
	FS_LOG_ERROR = 0,
	FS_LOG_WARN = 1,
	FS_LOG_INFO = 2,
	FS_LOG_DEBUG = 3,
};

#define LOG_LEVEL_ENV "FLAMESIDECAR_LOG_LEVEL"
#define LOG_LINE_MAX  6144 /* bytes of one formatted line, newline included */
#define LOG_NO_STDERR (-1) /* log_setup's stderr_level: never to stderr */

/* Called for every line that passes the level: the formatted line (newline
 * included, n bytes) and its parts, unescaped. */
typedef void (*log_sink_fn)(void *ctx, enum fs_log_level level, const char *stage, const char *id,
			    const char *msg, const char *line, size_t n);

/* "error", "warn", "info", "debug". */
const char *log_level_name(enum fs_log_level level);

/* The level named s ("warning" is taken for warn), or -1. */
int log_level_parse(const char *s);

/* Start logging as prog: lines go to fd (if >= 0, not closed here), and
 * those at stderr_level or more severe also to stderr (LOG_NO_STDERR:
 * never). Level: info, or LOG_LEVEL_ENV when it names one. */
void log_setup(const char *prog, int fd, int stderr_level);

/* Change the file descriptor (-1: none); the previous one is not closed. */
void log_set_fd(int fd);
int log_get_fd(void);

/* The extra sink (NULL: none). */
void log_set_sink(log_sink_fn sink, void *ctx);

/* Set the level; an env var naming a level still wins (a one-off
 * FLAMESIDECAR_LOG_LEVEL=debug over the configuration's). */
void log_set_level(enum fs_log_level level);
enum fs_log_level log_get_level(void);

/* Whether a line at level would be written. */
int log_enabled(enum fs_log_level level);

/* Format one line into line (len bytes; the time now, this pid). Returns
 * its length, newline included (a truncated line keeps its newline). */
size_t log_format(char *line, size_t len, enum fs_log_level level, const char *prog,
		  const char *stage, const char *id, const char *msg);

/* Format and write one line (when level passes). stage NULL: the last
 * stage given. id NULL or "": "-". */
void log_msg(enum fs_log_level level, const char *stage, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void log_vmsg(enum fs_log_level level, const char *stage, const char *id, const char *fmt,
	      va_list ap) __attribute__((format(printf, 4, 0)));

#define log_error(stage, id, ...) log_msg(FS_LOG_ERROR, stage, id, __VA_ARGS__)
#define log_warn(stage, id, ...)  log_msg(FS_LOG_WARN, stage, id, __VA_ARGS__)
#define log_info(stage, id, ...)  log_msg(FS_LOG_INFO, stage, id, __VA_ARGS__)
#define log_debug(stage, id, ...) log_msg(FS_LOG_DEBUG, stage, id, __VA_ARGS__)

/* secs since the epoch as YYYY-MM-DDTHH:MM:SS, UTC, without glibc's time
 * zone machinery (which reads /etc/localtime: the hook may be in a
 * container's mount namespace). */
void log_utc(time_t secs, char *out, size_t len);

#endif

/* log.c - see log.h */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "textsafe.h"

static struct {
	const char *prog;
	int fd;
	int stderr_level; /* LOG_NO_STDERR or a level */
	int level;	  /* set by the program */
	int env_level;	  /* LOG_LEVEL_ENV's, or -1 */
	const char *stage;
	log_sink_fn sink;
	void *sink_ctx;
} log_state = {
    .prog = "flamesidecar",
    .fd = -1,
    .stderr_level = LOG_NO_STDERR,
    .level = FS_LOG_INFO,
    .env_level = -1,
    .stage = "",
};

static const char *const log_names[] = {"error", "warn", "info", "debug"};

const char *log_level_name(enum fs_log_level level)
{
	return (unsigned)level < 4 ? log_names[level] : "?";
}

int log_level_parse(const char *s)
{
	if (!s)
		return -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, log_names[i]))
			return i;
	return strcmp(s, "warning") ? -1 : FS_LOG_WARN;
}

void log_setup(const char *prog, int fd, int stderr_level)
{
	log_state.prog = prog;
	log_state.fd = fd;
	log_state.stderr_level = stderr_level;
	log_state.env_level = log_level_parse(getenv(LOG_LEVEL_ENV));
}

void log_set_fd(int fd)
{
	log_state.fd = fd;
}

int log_get_fd(void)
{
	return log_state.fd;
}

void log_set_sink(log_sink_fn sink, void *ctx)
{
	log_state.sink = sink;
	log_state.sink_ctx = ctx;
}

void log_set_level(enum fs_log_level level)
{
	log_state.level = level;
}

enum fs_log_level log_get_level(void)
{
	return (enum fs_log_level)(log_state.env_level >= 0 ? log_state.env_level
							    : log_state.level);
}

int log_enabled(enum fs_log_level level)
{
	return (int)level <= (int)log_get_level();
}

/* Civil date from days since the epoch (the proleptic Gregorian calendar,
 * eras of 400 years). */
void log_utc(time_t secs, char *out, size_t len)
{
	long long days = secs / 86400, rem = secs % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	long long z = days + 719468;
	long long era = (z >= 0 ? z : z - 146096) / 146097;
	long long doe = z - era * 146097;
	long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	long long mp = (5 * doy + 2) / 153;
	long long d = doy - (153 * mp + 2) / 5 + 1;
	long long m = mp < 10 ? mp + 3 : mp - 9;
	long long y = yoe + era * 400 + (m <= 2);
	snprintf(out, len, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", y, m, d, rem / 3600,
		 rem / 60 % 60, rem % 60);
}

size_t log_format(char *line, size_t len, enum fs_log_level level, const char *prog,
		  const char *stage, const char *id, const char *msg)
{
	char esc[4096], eid[1024], ts[32];
	/* By system call: the agent must not need clock_gettime@GLIBC_2.17. */
	struct timespec now = {0};
	if (!len)
		return 0;
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &now);
	textsafe(msg ? msg : "", esc, sizeof(esc), TEXTSAFE_ASCII);
	textsafe(id && *id ? id : "-", eid, sizeof(eid), TEXTSAFE_ASCII);
	log_utc(now.tv_sec, ts, sizeof(ts));
	int n = snprintf(line, len, "%s.%03ldZ %s %s[%d] %s %s: %s\n", ts, now.tv_nsec / 1000000,
			 log_level_name(level), prog ? prog : "", (int)getpid(),
			 stage && *stage ? stage : "-", eid, esc);
	if (n < 0) {
		line[0] = '\0';
		return 0;
	}
	if ((size_t)n < len)
		return (size_t)n;
	if (len >= 2)
		line[len - 2] = '\n';
	return len - 1;
}

static void log_put(int fd, const char *s, size_t n)
{
	/* One write per line where it fits: lines of concurrent hooks and of
	 * the agent's threads must not interleave. */
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

void log_vmsg(enum fs_log_level level, const char *stage, const char *id, const char *fmt,
	      va_list ap)
{
	if (!log_enabled(level))
		return;
	int saved = errno;
	char msg[1024], line[LOG_LINE_MAX];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Written only when it changes: the agent's threads all pass the same
	 * literal, so they only read it. */
	if (stage && stage != log_state.stage)
		log_state.stage = stage;
	size_t n = log_format(line, sizeof(line), level, log_state.prog, log_state.stage, id, msg);
	if (log_state.fd >= 0)
		log_put(log_state.fd, line, n);
	if (log_state.stderr_level != LOG_NO_STDERR && (int)level <= log_state.stderr_level &&
	    log_state.fd != STDERR_FILENO)
		log_put(STDERR_FILENO, line, n);
	if (log_state.sink)
		log_state.sink(log_state.sink_ctx, level, log_state.stage, id, msg, line, n);
	errno = saved;
}

void log_msg(enum fs_log_level level, const char *stage, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, stage, id, fmt, ap);
	va_end(ap);
}

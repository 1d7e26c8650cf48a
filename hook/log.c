/* log.c - the hook's log: one line per event, to the log file (config
 * "log_file", default /run/flamesidecar/hook.log, 0600, rotated at 1 MiB);
 * warnings also go to stderr, which runtimes show when a hook fails. Everything that
 * came from outside is escaped so a line is always one line. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hook.h"

#define HOOK_LOG_ROTATE_BYTES (1024 * 1024)

static int log_fd = -1;
static const char *log_stage = "";

void hook_log_escape(const char *s, char *dst, size_t len)
{
	size_t o = 0;
	if (!len)
		return;
	for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < len; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
			dst[o++] = (char)*p;
		} else {
			snprintf(dst + o, len - o, "\\x%02x", *p);
			o += 4;
		}
	}
	dst[o] = '\0';
}

void hook_log_open(const struct fs_config *cfg)
{
	if (!cfg->log_file[0])
		return;
	/* The log lives in run_dir normally; create that (0700) if needed. */
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", cfg->log_file);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0700);
	}
	struct stat sb;
	if (stat(cfg->log_file, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_size > HOOK_LOG_ROTATE_BYTES) {
		char old[PATH_MAX + 3];
		snprintf(old, sizeof(old), "%s.1", cfg->log_file);
		rename(cfg->log_file, old);
	}
	log_fd = open(cfg->log_file,
		      O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
}

static void hook_vlog(int to_stderr, const char *stage, const char *id, const char *fmt, va_list ap)
{
	char msg[1024], esc[4096], line[5120], ts[32];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	hook_log_escape(msg, esc, sizeof(esc));
	if (stage)
		log_stage = stage;
	struct timespec now;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	char eid[REGISTRY_ID_MAX * 4 + 8];
	hook_log_escape(id && *id ? id : "-", eid, sizeof(eid));
	int n = snprintf(line, sizeof(line), "%s.%03ldZ flamehook[%d] %s %s: %s\n", ts,
			 now.tv_nsec / 1000000, (int)getpid(), log_stage, eid, esc);
	if (n < 0)
		return;
	if (n >= (int)sizeof(line))
		n = (int)sizeof(line) - 1;
	if (log_fd >= 0 && write(log_fd, line, (size_t)n) < 0) {
		/* the log is best effort */
	}
	if (to_stderr && write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* likewise */
	}
}

void hook_log(const char *stage, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hook_vlog(0, stage, id, fmt, ap);
	va_end(ap);
}

void hook_warn(const char *stage, const char *id, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hook_vlog(1, stage, id, fmt, ap);
	va_end(ap);
}

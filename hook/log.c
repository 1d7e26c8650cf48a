/* log.c - the hook's log: one line per event, to the log file shared with
 * the runtime wrapper (lib/logfile.h: format, escaping, rotation);
 * warnings also go to stderr, which runtimes show when a hook fails. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "hook.h"
#include "logfile.h"

static int log_fd = -1;
static const char *log_stage = "";

void hook_log_open(const struct fs_config *cfg)
{
	log_fd = logfile_open(cfg->log_file);
}

int hook_log_fd(void)
{
	return log_fd;
}

static void hook_vlog(int to_stderr, const char *stage, const char *id, const char *fmt, va_list ap)
{
	char msg[1024], line[5120];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (stage)
		log_stage = stage;
	size_t n = logfile_format(line, sizeof(line), "flamehook", log_stage, id, msg);
	logfile_write(log_fd, line, n);
	if (to_stderr)
		logfile_write(STDERR_FILENO, line, n);
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

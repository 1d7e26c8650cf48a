/* test_log.c - lib/log.h: levels and their one setting, the line format,
 * escaping of what came from outside, and where lines go. */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "tap.h"

/* What a pipe holds now (non-blocking), terminated. */
static size_t drain(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return n;
}

static int matches(const char *s, const char *re)
{
	regex_t rx;
	if (regcomp(&rx, re, REG_EXTENDED | REG_NOSUB))
		return 0;
	int m = regexec(&rx, s, 0, NULL, 0) == 0;
	regfree(&rx);
	return m;
}

static int sink_calls, sink_level;
static char sink_msg[256], sink_stage[64];

static void sink(void *ctx, enum fs_log_level level, const char *stage, const char *id,
		 const char *msg, const char *line, size_t n)
{
	(void)ctx;
	(void)id;
	(void)line;
	(void)n;
	sink_calls++;
	sink_level = (int)level;
	snprintf(sink_msg, sizeof(sink_msg), "%s", msg);
	snprintf(sink_stage, sizeof(sink_stage), "%s", stage);
}

int main(void)
{
	tap_plan(24);
	char buf[8192];
	int p[2];
	unsetenv(LOG_LEVEL_ENV);

	/* Levels: names both ways. */
	is_int(log_level_parse("error"), FS_LOG_ERROR, "parse error");
	is_int(log_level_parse("warn"), FS_LOG_WARN, "parse warn");
	is_int(log_level_parse("warning"), FS_LOG_WARN, "parse warning (runc's name)");
	is_int(log_level_parse("debug"), FS_LOG_DEBUG, "parse debug");
	is_int(log_level_parse("INFO"), -1, "a level is lower case");
	is_int(log_level_parse(NULL), -1, "no level");
	is_str(log_level_name(FS_LOG_INFO), "info", "name of info");

	/* The format. */
	size_t n = log_format(buf, sizeof(buf), FS_LOG_WARN, "flamehook", "createRuntime", "c1",
			      "registered pid 42");
	ok(n == strlen(buf) && buf[n - 1] == '\n', "one line, newline included, length returned");
	ok(matches(buf, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "
			"warn flamehook\\[[0-9]+\\] createRuntime c1: registered pid 42\n$"),
	   "time, level, program[pid], stage, id: message");
	log_format(buf, sizeof(buf), FS_LOG_INFO, "p", NULL, "", "m");
	ok(matches(buf, "Z info p\\[[0-9]+\\] - -: m\n$"), "no stage and no id: '-' each");

	/* Whatever a container names itself, a line stays one line. */
	log_format(buf, sizeof(buf), FS_LOG_INFO, "p", "s", "id\nFAKE 2026-01-01",
		   "a\nb\rc\x1b[2Jd\\e\x7f\xff");
	ok(strchr(buf, '\n') == buf + strlen(buf) - 1, "exactly one newline, at the end");
	ok(strstr(buf, " s id\\x0aFAKE 2026-01-01: ") != NULL, "newline in the id escaped");
	ok(strstr(buf, ": a\\x0ab\\x0dc\\x1b[2Jd\\x5ce\\x7f\\xff\n") != NULL,
	   "control bytes, backslash, DEL and non-ASCII escaped as \\xNN");

	/* Truncated, a line still ends with its newline. */
	char small[40];
	n = log_format(small, sizeof(small), FS_LOG_INFO, "p", "s", "i", "0123456789abcdef");
	ok(n == sizeof(small) - 1 && small[n - 1] == '\n' && strlen(small) == n,
	   "a truncated line keeps its newline");

	/* Where lines go, and the level that drops them. */
	if (pipe2(p, O_NONBLOCK) < 0)
		return tap_done();
	log_setup("prog", p[1], LOG_NO_STDERR);
	log_set_sink(sink, NULL);
	is_int(log_get_level(), FS_LOG_INFO, "default level: info");
	log_debug("st", "x", "dropped %d", 1);
	log_info("st", "x", "kept %d", 2);
	drain(p[0], buf, sizeof(buf));
	ok(!strstr(buf, "dropped") && strstr(buf, " info prog[") && strstr(buf, " st x: kept 2\n"),
	   "info written, debug dropped at info");
	ok(sink_calls == 1 && sink_level == FS_LOG_INFO && !strcmp(sink_msg, "kept 2") &&
	       !strcmp(sink_stage, "st"),
	   "the sink gets the passing line's parts");
	log_warn(NULL, NULL, "stage kept");
	drain(p[0], buf, sizeof(buf));
	ok(strstr(buf, " warn prog[") && strstr(buf, " st -: stage kept\n"),
	   "a NULL stage is the last one given");

	log_set_level(FS_LOG_ERROR);
	errno = 1234;
	log_warn("st", NULL, "warn at error");
	log_error("st", NULL, "error at error");
	int saved = errno;
	drain(p[0], buf, sizeof(buf));
	ok(!strstr(buf, "warn at error") && strstr(buf, "error at error"),
	   "level error: warnings dropped, errors kept");
	is_int(saved, 1234, "errno kept across a log call");

	/* The environment wins over the program's setting. */
	setenv(LOG_LEVEL_ENV, "debug", 1);
	log_setup("prog", p[1], LOG_NO_STDERR);
	log_set_level(FS_LOG_ERROR);
	log_debug("st", NULL, "debug by env");
	drain(p[0], buf, sizeof(buf));
	ok(strstr(buf, " debug prog[") && strstr(buf, "debug by env"),
	   LOG_LEVEL_ENV "=debug overrides the configured level");
	setenv(LOG_LEVEL_ENV, "loud", 1);
	log_setup("prog", p[1], LOG_NO_STDERR);
	log_set_level(FS_LOG_WARN);
	is_int(log_get_level(), FS_LOG_WARN, "a value that is no level is ignored");
	unsetenv(LOG_LEVEL_ENV);

	/* stderr gets the lines at or above its level. */
	int e[2], olderr = dup(STDERR_FILENO);
	if (pipe2(e, O_NONBLOCK) < 0 || olderr < 0)
		return tap_done();
	dup2(e[1], STDERR_FILENO);
	log_setup("prog", p[1], FS_LOG_WARN);
	log_set_level(FS_LOG_DEBUG);
	log_info("st", NULL, "info line");
	log_warn("st", NULL, "warn line");
	dup2(olderr, STDERR_FILENO);
	char ebuf[4096];
	drain(e[0], ebuf, sizeof(ebuf));
	drain(p[0], buf, sizeof(buf));
	ok(strstr(ebuf, "warn line") && !strstr(ebuf, "info line"), "stderr: warn, not info");
	ok(strstr(buf, "warn line") && strstr(buf, "info line"), "the file: both");
	log_set_sink(NULL, NULL);
	log_set_fd(-1);
	return tap_done();
}

/* precreate.c - `flamehook precreate`: the config filter Podman and CRI-O
 * run from a hooks.d entry with the stage "precreate". The engine writes the
 * proposed OCI config on stdin and uses what the hook prints on stdout as
 * the config, so this stage prints a config, always: the input unchanged,
 * or the input with -XX:+PreserveFramePointer appended to process.env's
 * JAVA_TOOL_OPTIONS (lib/jvmenv.c) for an opted-in container.
 *
 * Fail-open: any problem (config unusable, input too large or not JSON,
 * an env we will not touch) prints the input byte for byte and logs why.
 * Input beyond HOOK_BUNDLE_CONFIG_MAX is passed through unread. An alarm
 * (hook_timeout_ms) bounds the run, reading included; once the whole input
 * is in memory the alarm prints it unchanged before exiting, so a deadline
 * never loses a config that was read. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "hook.h"
#include "json.h"
#include "jvmenv.h"

#define PRECREATE_STAGE "precreate"

/* What the alarm prints: the whole input, once read, until we write. */
static const char *volatile precreate_echo;
static volatile size_t precreate_echo_len;

static void precreate_write_raw(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(STDOUT_FILENO, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void precreate_alarm(int sig)
{
	static const char msg[] =
	    "flamehook precreate: deadline reached; config passed through unchanged\n";
	(void)sig;
	if (precreate_echo)
		precreate_write_raw(precreate_echo, precreate_echo_len);
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* exiting anyway */
	}
	_exit(0);
}

static bool precreate_opted_in(const struct fs_config *cfg, yajl_val root)
{
	switch (cfg->enable) {
	case CONFIG_ENABLE_ALWAYS: return true;
	case CONFIG_ENABLE_NEVER: return false;
	default: break;
	}
	const char *v = json_get_string(json_get_object(root, "annotations"), ANNOTATION_ENABLE);
	return v && !strcmp(v, "true");
}

int hook_precreate_filter(const struct fs_config *cfg, const char *in, size_t len, char **out,
			  size_t *out_len, char *note, size_t note_len)
{
	struct fs_error err;
	*out = NULL;
	*out_len = 0;
	note[0] = '\0';
	cleanup_json yajl_val root = NULL;
	if (json_parse(in, len, JSON_MAX_DEPTH, &root, &err) < 0) {
		snprintf(note, note_len, "config unchanged: %s", err.msg);
		return -EINVAL;
	}
	if (!YAJL_IS_OBJECT(root)) {
		snprintf(note, note_len, "config unchanged: not a JSON object");
		return -EINVAL;
	}
	if (!precreate_opted_in(cfg, root))
		return 0;
	if (!cfg->preserve_frame_pointer && !cfg->debug_nonsafepoints) {
		snprintf(note, note_len,
			 "config unchanged: \"preserve_frame_pointer\" and "
			 "\"debug_nonsafepoints\" are false in the host config");
		return 0;
	}
	if (json_has_escaped_nul(in, len)) {
		snprintf(note, note_len,
			 "config unchanged: a string holds \\u0000, which would not survive a "
			 "rewrite");
		return -EINVAL;
	}
	cleanup_jvmenv_plan struct jvmenv_plan p = {0};
	const struct jvmenv_want want = {.fp = cfg->preserve_frame_pointer,
					 .dns = cfg->debug_nonsafepoints};
	int r = jvmenv_plan_want(root, &want, &p, &err);
	if (r < 0) {
		snprintf(note, note_len, "JAVA_TOOL_OPTIONS left alone: %s", err.msg);
		return r;
	}
	jvmenv_describe(&p, note, note_len);
	if (!p.entry)
		return 0;
	cleanup_free char *buf = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&buf, &blen);
	if (!f) {
		snprintf(note, note_len, "config unchanged: out of memory");
		return -ENOMEM;
	}
	jvmenv_write_config(f, root, &p);
	if (ferror(f) | fclose(f)) {
		snprintf(note, note_len, "config unchanged: out of memory");
		return -ENOMEM;
	}
	*out = steal_pointer(&buf);
	*out_len = blen;
	return 1;
}

/* Read stdin up to max bytes into *buf. 1 when all of it fit, 0 when there
 * is more (the first max bytes are in *buf), -errno on a read error. */
static int precreate_read(int fd, size_t max, char **buf, size_t *len)
{
	size_t cap = 64 * 1024, n = 0;
	char *b = malloc(cap);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap >= max) {
				*buf = b;
				*len = n;
				return 0;
			}
			size_t ncap = cap * 2 > max ? max : cap * 2;
			char *nb = realloc(b, ncap);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			*buf = b;
			*len = n;
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = b;
	*len = n;
	return 1;
}

/* Copy the rest of in_fd to stdout unchanged (input larger than we parse). */
static void precreate_pump(int in_fd)
{
	char chunk[65536];
	for (;;) {
		ssize_t r = read(in_fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		precreate_write_raw(chunk, (size_t)r);
	}
}

int hook_precreate(const char *config_path, int in_fd)
{
	struct fs_config cfg;
	struct fs_error err;
	signal(SIGALRM, precreate_alarm);
	/* The configuration first (a small local file), so that its deadline
	 * bounds the read too; without one, the hooks.d entry's 5 s. */
	int cfg_ok = config_load(config_path, &cfg, &err) == 0;
	alarm(cfg_ok ? (cfg.hook_timeout_ms + 999) / 1000 : 5);
	if (cfg_ok)
		hook_log_open(&cfg);
	cleanup_free char *in = NULL;
	size_t len = 0;
	int whole = precreate_read(in_fd, HOOK_BUNDLE_CONFIG_MAX, &in, &len);
	if (whole <= 0) {
		/* Too large or unreadable: what we have, then the rest, as is. */
		alarm(0);
		precreate_write_raw(in ? in : "", len);
		if (whole == 0)
			precreate_pump(in_fd);
		log_warn(PRECREATE_STAGE, NULL, "config passed through unchanged: %s",
			 whole == 0 ? "larger than 4 MiB" : strerror(-whole));
		return 0;
	}
	precreate_echo_len = len;
	precreate_echo = in;
	if (!cfg_ok) {
		alarm(0);
		precreate_echo = NULL;
		precreate_write_raw(in, len);
		log_error(PRECREATE_STAGE, NULL, "configuration unusable, config unchanged: %s",
			  err.msg);
		return 0;
	}

	cleanup_free char *out = NULL;
	size_t out_len = 0;
	char note[512];
	int r = hook_precreate_filter(&cfg, in, len, &out, &out_len, note, sizeof(note));
	/* From here the output is being written: no second copy from the alarm. */
	alarm(0);
	precreate_echo = NULL;
	if (r == 1)
		precreate_write_raw(out, out_len);
	else
		precreate_write_raw(in, len);
	if (r < 0)
		log_warn(PRECREATE_STAGE, NULL, "%s", note);
	else if (note[0])
		log_info(PRECREATE_STAGE, NULL, "%s", note);
	return 0;
}

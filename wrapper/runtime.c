/* runtime.c - the wrapper's configuration, the real runtime, our hook, and
 * the log.
 *
 * The configuration is the host's /etc/flamesidecar/config.json (or the
 * file named by $FLAMESIDECAR_CONFIG: engines pass fixed arguments, so the
 * environment is the only way to point a wrapper at another file). The
 * wrapper reads one key of its own from it, "runtime_path"; lib/config.c
 * ignores keys it does not know. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "json.h"
#include "log.h"
#include "logfile.h"
#include "wrapper.h"

#define RUNTIME_CONFIG_MAX (256 * 1024)

/* "runtime_path", read from the same file as config_load() reads. */
static int runtime_config_own_keys(const char *path, struct wrapper_config *cfg,
				   struct fs_error *err)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT && !cfg->config_path[0]
			   ? 0
			   : fs_error_set(err, errno, "opening config %s", path);
	cleanup_free char *buf = NULL;
	size_t len;
	cleanup_json yajl_val root = NULL;
	if (json_read_fd(fd, RUNTIME_CONFIG_MAX, &buf, &len, err) < 0 ||
	    json_parse(buf, len, 16, &root, err) < 0)
		return fs_error_wrap(err, "config %s", path);
	yajl_val v = yajl_tree_get(root, (const char *[]){"runtime_path", NULL}, yajl_t_any);
	if (!v)
		return 0;
	const char *s = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
	if (!s || s[0] != '/' || strlen(s) >= sizeof(cfg->runtime_path))
		return fs_error_set(err, EINVAL,
				    "config %s: \"runtime_path\" must be an absolute path to the "
				    "runtime (e.g. /usr/sbin/runc)",
				    path);
	snprintf(cfg->runtime_path, sizeof(cfg->runtime_path), "%s", s);
	return 0;
}

int runtime_config_load(struct wrapper_config *cfg, struct fs_error *err)
{
	memset(cfg, 0, sizeof(*cfg));
	config_defaults(&cfg->fs);
	const char *env = getenv(WRAPPER_CONFIG_ENV);
	if (env && *env) {
		/* The hook runs with the bundle as its cwd: give it an absolute path. */
		char abs[PATH_MAX];
		if (!realpath(env, abs))
			return fs_error_set(err, errno, "config %s (from $%s)", env,
					    WRAPPER_CONFIG_ENV);
		if (strcmp(abs, CONFIG_DEFAULT_PATH))
			snprintf(cfg->config_path, sizeof(cfg->config_path), "%s", abs);
	}
	const char *path = cfg->config_path[0] ? cfg->config_path : NULL;
	int r = config_load(path, &cfg->fs, err);
	if (r < 0) {
		config_defaults(&cfg->fs);
		return r;
	}
	r = runtime_config_own_keys(path ? path : CONFIG_DEFAULT_PATH, cfg, err);
	if (r < 0)
		return r;
	cfg->loaded = 1;
	return 0;
}

static int runtime_is_self(const char *path)
{
	struct stat a, b;
	return stat("/proc/self/exe", &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static int runtime_executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int runtime_find(const struct wrapper_config *cfg, char *out, size_t len, struct fs_error *err)
{
	if (cfg->runtime_path[0]) {
		if (!runtime_executable(cfg->runtime_path))
			return fs_error_set(err, ENOENT,
					    "runtime_path %s is not an executable file",
					    cfg->runtime_path);
		if (runtime_is_self(cfg->runtime_path))
			return fs_error_set(
			    err, ELOOP,
			    "runtime_path %s is flamesidecar-runtime itself; point it at runc",
			    cfg->runtime_path);
		snprintf(out, len, "%s", cfg->runtime_path);
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = WRAPPER_DEFAULT_PATH;
	const char *s = path;
	while (*s) {
		const char *e = strchrnul(s, ':');
		int n = (int)(e - s);
		if (n > 0 && s[0] == '/') {
			char cand[PATH_MAX];
			if (snprintf(cand, sizeof(cand), "%.*s/runc", n, s) < (int)sizeof(cand) &&
			    runtime_executable(cand) && !runtime_is_self(cand)) {
				snprintf(out, len, "%s", cand);
				return 0;
			}
		}
		s = *e ? e + 1 : e;
	}
	return fs_error_set(
	    err, ENOENT, "no runc in PATH (%s); install runc or set \"runtime_path\" in the config",
	    path);
}

int runtime_hook_path(char *out, size_t len, struct fs_error *err)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return fs_error_set(err, errno, "reading /proc/self/exe");
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (!slash)
		return fs_error_set(err, EINVAL, "/proc/self/exe is %s", self);
	*slash = '\0';
	if (snprintf(out, len, "%s/flamehook", self) >= (int)len)
		return fs_error_set(err, ENAMETOOLONG, "%s/flamehook", self);
	if (!runtime_executable(out))
		return fs_error_set(err, ENOENT,
				    "%s is missing or not executable (flamehook must sit next to "
				    "flamesidecar-runtime)",
				    out);
	return 0;
}

/* The runtime's own log (--log) quotes fields: '"' is escaped too, as
 * \u00NN inside JSON. */
static void runtime_escape_json(const char *s, char *dst, size_t len)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p && o + 7 < len; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\\' && *p != '"')
			dst[o++] = (char)*p;
		else
			o += (size_t)snprintf(dst + o, len - o, "\\u%04x", *p);
	}
	dst[o] = '\0';
}

static void runtime_append(const char *path, mode_t mode, const char *line, size_t n)
{
	cleanup_close int fd =
	    open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
	logfile_write(fd, line, n);
}

/* The wrapper's sink of lib/log.h: syslog for warnings and errors, and the
 * runtime's own log (--log) in its format, which engines show on failure. */
static void runtime_log_sink(void *ctx, enum fs_log_level level, const char *stage, const char *id,
			     const char *msg, const char *line, size_t n)
{
	const struct wrapper_args *a = ctx;
	char esc[4096], eid[1024], out[6144], ts[32];
	(void)stage;
	(void)line;
	(void)n;
	logfile_escape(msg, esc, sizeof(esc), 1);
	logfile_escape(id ? id : "-", eid, sizeof(eid), 1);
	if (level <= FS_LOG_WARN) {
		openlog("flamesidecar-runtime", LOG_PID, LOG_DAEMON);
		syslog(level == FS_LOG_ERROR ? LOG_ERR : LOG_WARNING, "%s: %s", eid, esc);
		closelog();
	}
	if (!a->log || a->log[0] != '/')
		return;
	/* runc's levels (logrus): warning, not warn. */
	const char *lv = level == FS_LOG_WARN ? "warning" : log_level_name(level);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	log_utc(now.tv_sec, ts, sizeof(ts));
	int k;
	if (a->log_json) {
		runtime_escape_json(msg, esc, sizeof(esc));
		runtime_escape_json(id ? id : "-", eid, sizeof(eid));
		k = snprintf(out, sizeof(out),
			     "{\"level\":\"%s\",\"msg\":\"flamesidecar-runtime: %s: "
			     "%s\",\"time\":\"%sZ\"}\n",
			     lv, eid, esc, ts);
	} else {
		k = snprintf(out, sizeof(out),
			     "time=\"%sZ\" level=%s msg=\"flamesidecar-runtime: %s: %s\"\n", ts, lv,
			     eid, esc);
	}
	if (k > 0)
		runtime_append(a->log, 0644, out,
			       (size_t)(k < (int)sizeof(out) ? k : (int)sizeof(out) - 1));
}

void runtime_log(const struct wrapper_config *cfg, const struct wrapper_args *a,
		 enum fs_log_level level, const char *fmt, ...)
{
	const char *verb = a->verb == WRAPPER_VERB_RUN	    ? "run"
			   : a->verb == WRAPPER_VERB_CREATE ? "create"
			   : a->verb == WRAPPER_VERB_DELETE ? "delete"
							    : "exec";
	/* The log shared with the hook (lib/logfile.h), opened per line: the
	 * wrapper logs a line or two and then execs the runtime. */
	log_setup("flamesidecar-runtime", -1, LOG_NO_STDERR);
	log_set_level((enum fs_log_level)cfg->fs.log_level);
	if (!log_enabled(level))
		return;
	cleanup_close int fd = cfg->fs.log_file[0] ? logfile_open(cfg->fs.log_file) : -1;
	log_set_fd(fd);
	log_set_sink(runtime_log_sink, (void *)a);
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, verb, a->id, fmt, ap);
	va_end(ap);
	log_set_fd(-1);
	log_set_sink(NULL, NULL);
}

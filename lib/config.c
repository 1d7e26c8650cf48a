/* config.c - see config.h */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "budget.h"
#include "cleanup.h"
#include "json.h"
#include "log.h"

#define CONFIG_MAX_BYTES (256 * 1024)

void config_defaults(struct fs_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->enable = CONFIG_ENABLE_ANNOTATION;
	snprintf(cfg->bundle_dir, sizeof(cfg->bundle_dir), "/usr/lib/flamesidecar/bundle");
	snprintf(cfg->mount_point, sizeof(cfg->mount_point), "/opt/flamesidecar");
	snprintf(cfg->run_dir, sizeof(cfg->run_dir), "/run/flamesidecar");
	cfg->log_level = FS_LOG_INFO;
	snprintf(cfg->log_file, sizeof(cfg->log_file), "/run/flamesidecar/hook.log");
	snprintf(cfg->profile_dir, sizeof(cfg->profile_dir), "/var/lib/flamesidecar/profiles");
	snprintf(cfg->sidecar_path, sizeof(cfg->sidecar_path), "/usr/bin/flamesidecar");
	cfg->hook_timeout_ms = 2000;
	cfg->max_profile_seconds = 600;
	cfg->max_frequency = 999;
	cfg->default_delay_seconds = 0;
	cfg->max_concurrent_profiles = 4;
	cfg->max_concurrent_profiles_per_container = 1;
	cfg->max_profiles_per_container = 10;
	cfg->max_profile_mib_per_container = 256;
	cfg->max_profiles_total = 200;
	cfg->max_profile_mib_total = 2048;
	cfg->profile_retention_seconds = 7 * 86400;
	cfg->preserve_frame_pointer = 1;
	cfg->debug_nonsafepoints = 1;
	cfg->max_stack_table_mib = BUDGET_STACK_TABLE_MIB_DEFAULT;
	cfg->debuginfo = 1;
}

void config_registry_dir(const struct fs_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "%s/containers", cfg->run_dir);
}

/* An absolute, normalised path: no "." or ".." components, no "//". */
static int config_path_ok(const char *p)
{
	if (p[0] != '/')
		return 0;
	for (const char *c = p; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return 0;
	const char *s = p;
	while (*s) {
		while (*s == '/')
			s++;
		const char *e = strchrnul(s, '/');
		size_t n = (size_t)(e - s);
		if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		s = e;
	}
	return 1;
}

static int config_string(yajl_val root, const char *key, char *dst, size_t len, int is_path,
			 int may_be_empty, struct fs_error *err)
{
	yajl_val v = yajl_tree_get(root, (const char *[]){key, NULL}, yajl_t_any);
	if (!v)
		return 0;
	if (!YAJL_IS_STRING(v))
		return fs_error_set(err, EINVAL, "config key \"%s\" must be a string", key);
	const char *s = YAJL_GET_STRING(v);
	if (strlen(s) >= len)
		return fs_error_set(err, ENAMETOOLONG, "config key \"%s\"", key);
	if (is_path && !(may_be_empty && !*s) && !config_path_ok(s))
		return fs_error_set(
		    err, EINVAL,
		    "config key \"%s\" must be an absolute path without . or .. (got \"%s\")", key,
		    s);
	snprintf(dst, len, "%s", s);
	return 0;
}

static int config_uint(yajl_val root, const char *key, unsigned *dst, unsigned lo, unsigned hi,
		       struct fs_error *err)
{
	long long v;
	int r = json_get_int(root, key, &v);
	if (r == -ENOENT) {
		if (yajl_tree_get(root, (const char *[]){key, NULL}, yajl_t_any))
			return fs_error_set(err, EINVAL, "config key \"%s\" must be an integer",
					    key);
		return 0;
	}
	if (r < 0 || v < lo || v > hi)
		return fs_error_set(err, EINVAL, "config key \"%s\" must be between %u and %u", key,
				    lo, hi);
	*dst = (unsigned)v;
	return 0;
}

static int config_bool(yajl_val root, const char *key, int *dst, struct fs_error *err)
{
	yajl_val v = yajl_tree_get(root, (const char *[]){key, NULL}, yajl_t_any);
	if (!v)
		return 0;
	if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
		return fs_error_set(err, EINVAL, "config key \"%s\" must be true or false", key);
	*dst = YAJL_IS_TRUE(v);
	return 0;
}

/* "profile_quota_full": "remove_oldest" (default) or "refuse". */
static int config_quota_full(yajl_val root, int *refuse, struct fs_error *err)
{
	yajl_val v = yajl_tree_get(root, (const char *[]){"profile_quota_full", NULL}, yajl_t_any);
	if (!v)
		return 0;
	const char *s = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : "";
	if (!strcmp(s, "remove_oldest"))
		*refuse = 0;
	else if (!strcmp(s, "refuse"))
		*refuse = 1;
	else
		return fs_error_set(
		    err, EINVAL,
		    "config key \"profile_quota_full\" must be \"remove_oldest\" or \"refuse\"");
	return 0;
}

/* "log_level" and "enable": a keyword each. 0 or -EINVAL naming the key. */
static int config_keywords(yajl_val root, struct fs_config *cfg, const char *path,
			   struct fs_error *err)
{
	const char *ll = json_get_string(root, "log_level");
	if (ll && (cfg->log_level = log_level_parse(ll)) < 0)
		return fs_error_set(
		    err, EINVAL,
		    "config %s: \"log_level\" must be \"error\", \"warn\", \"info\" or \"debug\"",
		    path);
	if (!ll && yajl_tree_get(root, (const char *[]){"log_level", NULL}, yajl_t_any))
		return fs_error_set(err, EINVAL, "config %s: \"log_level\" must be a string", path);

	const char *en = json_get_string(root, "enable");
	if (en) {
		if (!strcmp(en, "annotation"))
			cfg->enable = CONFIG_ENABLE_ANNOTATION;
		else if (!strcmp(en, "always"))
			cfg->enable = CONFIG_ENABLE_ALWAYS;
		else if (!strcmp(en, "never"))
			cfg->enable = CONFIG_ENABLE_NEVER;
		else
			return fs_error_set(
			    err, EINVAL,
			    "config %s: \"enable\" must be \"annotation\", \"always\" or \"never\"",
			    path);
	} else if (yajl_tree_get(root, (const char *[]){"enable", NULL}, yajl_t_any)) {
		return fs_error_set(err, EINVAL, "config %s: \"enable\" must be a string", path);
	}
	return 0;
}

/* Every path, number and boolean key: 0, or -errno naming the key. */
static int config_values(yajl_val root, struct fs_config *cfg, struct fs_error *err)
{
	int r;
	if ((r = config_string(root, "bundle_dir", cfg->bundle_dir, sizeof(cfg->bundle_dir), 1, 0,
			       err)) ||
	    (r = config_string(root, "mount_point", cfg->mount_point, sizeof(cfg->mount_point), 1,
			       0, err)) ||
	    (r = config_string(root, "run_dir", cfg->run_dir, sizeof(cfg->run_dir), 1, 0, err)) ||
	    (r = config_string(root, "log_file", cfg->log_file, sizeof(cfg->log_file), 1, 1,
			       err)) ||
	    (r = config_string(root, "profile_dir", cfg->profile_dir, sizeof(cfg->profile_dir), 1,
			       0, err)) ||
	    (r = config_string(root, "sidecar_path", cfg->sidecar_path, sizeof(cfg->sidecar_path),
			       1, 0, err)) ||
	    (r = config_uint(root, "hook_timeout_ms", &cfg->hook_timeout_ms, 10, 60000, err)) ||
	    (r = config_uint(root, "max_profile_seconds", &cfg->max_profile_seconds, 1, 86400,
			     err)) ||
	    (r = config_uint(root, "max_frequency", &cfg->max_frequency, 1, 10000, err)) ||
	    (r = config_uint(root, "default_delay_seconds", &cfg->default_delay_seconds, 0, 3600,
			     err)) ||
	    (r = config_uint(root, "max_concurrent_profiles", &cfg->max_concurrent_profiles, 0, 64,
			     err)) ||
	    (r = config_uint(root, "max_concurrent_profiles_per_container",
			     &cfg->max_concurrent_profiles_per_container, 1, 64, err)) ||
	    (r = config_uint(root, "max_profiles_per_container", &cfg->max_profiles_per_container,
			     1, 100000, err)) ||
	    (r = config_uint(root, "max_profile_mib_per_container",
			     &cfg->max_profile_mib_per_container, 1, 1048576, err)) ||
	    (r = config_uint(root, "max_profiles_total", &cfg->max_profiles_total, 1, 100000,
			     err)) ||
	    (r = config_uint(root, "max_profile_mib_total", &cfg->max_profile_mib_total, 1, 1048576,
			     err)) ||
	    (r = config_uint(root, "profile_retention_seconds", &cfg->profile_retention_seconds, 0,
			     366 * 86400 * 10, err)) ||
	    (r = config_quota_full(root, &cfg->profile_quota_refuse, err)) ||
	    (r = config_uint(root, "max_stack_table_mib", &cfg->max_stack_table_mib,
			     BUDGET_STACK_TABLE_MIB_MIN, BUDGET_STACK_TABLE_MIB_MAX, err)) ||
	    (r = config_bool(root, "preserve_frame_pointer", &cfg->preserve_frame_pointer, err)) ||
	    (r = config_string(root, "debuginfod_urls", cfg->debuginfod_urls,
			       sizeof(cfg->debuginfod_urls), 0, 1, err)) ||
	    (r = config_bool(root, "debuginfo", &cfg->debuginfo, err)) ||
	    (r = config_bool(root, "debug_nonsafepoints", &cfg->debug_nonsafepoints, err)))
		return r;
	return 0;
}

int config_load(const char *path, struct fs_config *cfg, struct fs_error *err)
{
	int explicit_path = path != NULL;
	config_defaults(cfg);
	if (!path)
		path = CONFIG_DEFAULT_PATH;
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT && !explicit_path)
			return 0;
		return fs_error_set(err, errno, "opening config %s", path);
	}
	cleanup_free char *buf = NULL;
	size_t len;
	int r = json_read_fd(fd, CONFIG_MAX_BYTES, &buf, &len, err);
	if (r < 0)
		return fs_error_wrap(err, "config %s", path);
	cleanup_json yajl_val root = NULL;
	r = json_parse(buf, len, 16, &root, err);
	if (r < 0)
		return fs_error_wrap(err, "config %s", path);
	if (!YAJL_IS_OBJECT(root))
		return fs_error_set(err, EINVAL, "config %s: the top level must be an object",
				    path);

	if ((r = config_keywords(root, cfg, path, err)) < 0)
		return r;
	if ((r = config_values(root, cfg, err)) < 0)
		return fs_error_wrap(err, "config %s", path);
	if (!strcmp(cfg->mount_point, "/"))
		return fs_error_set(err, EINVAL, "config %s: \"mount_point\" cannot be /", path);
	return 0;
}

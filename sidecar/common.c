/* common.c - see common.h */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int common_load_config(const char *verb, struct fs_config *cfg, char *regdir, size_t len)
{
	struct fs_error err;
	if (config_load(cli_config_path, cfg, &err) < 0)
		return cli_fail_file(verb, &err);
	if (regdir)
		config_registry_dir(cfg, regdir, len);
	return FS_EXIT_OK;
}

int common_find_container(const char *verb, const char *regdir, const char *id,
			  struct registry_entry *e)
{
	struct fs_error err;
	if (registry_find(regdir, id, e, &err) < 0)
		return cli_fail(verb, &err);
	return FS_EXIT_OK;
}

int common_open_container(const char *verb, const char *why, const char *id, struct fs_config *cfg,
			  struct registry_entry *e)
{
	char regdir[PATH_MAX];
	if (geteuid() != 0)
		return cli_failf(verb, FS_EXIT_PERM, "must run as root (%s)", why);
	int rc = common_load_config(verb, cfg, regdir, sizeof(regdir));
	if (rc)
		return rc;
	return common_find_container(verb, regdir, id, e);
}

int common_parse_uint(const char *verb, const char *opt, const char *arg, unsigned long lo,
		      unsigned long hi, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < lo || v > hi) {
		cli_usage_error(verb, "%s takes a number from %lu to %lu, not '%s'", opt, lo, hi,
				arg);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

int common_parse_map_mode(const char *verb, const char *opt, const char *arg, enum map_mode *mode)
{
	if (!strcmp(arg, "agent"))
		*mode = MAP_MODE_AGENT;
	else if (!strcmp(arg, "jcmd"))
		*mode = MAP_MODE_JCMD;
	else {
		cli_usage_error(verb, "%s must be agent or jcmd, not '%s'", opt, arg);
		return -EINVAL;
	}
	return 0;
}

int common_id_width(const char *id)
{
	size_t l = strlen(id);
	return l == 64 && strspn(id, "0123456789abcdef") == 64 ? 12 : (int)l;
}

void common_warn(void *ctx, const char *msg)
{
	cli_warn(ctx ? (const char *)ctx : "", "%s", msg);
}

void common_format_age(long long s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%llds", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
	else
		snprintf(buf, len, "%lldd%02lldh", s / 86400, (s % 86400) / 3600);
}

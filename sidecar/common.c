/* common.c - see common.h */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

const char *cli_config_path;

/* The --pod options main() took out of argv (common_take_target). */
static struct registry_query common_target;
char common_pod_arg[] = "(--pod)";

int common_load_config(const char *verb, struct fs_config *cfg, char *regdir, size_t len)
{
	struct fs_error err;
	if (config_load(cli_config_path, cfg, &err) < 0) {
		fprintf(stderr, "flamesidecar %s: %s\n", verb, err.msg);
		return FS_EXIT_FAIL;
	}
	if (regdir)
		config_registry_dir(cfg, regdir, len);
	return FS_EXIT_OK;
}

/* "--pod X", "--pod=X": 1 and *val when argv[*i] is opt, *i moved past
 * it; -1 when its value is missing. */
static int common_target_opt(int argc, char **argv, int *i, const char *opt, const char **val)
{
	size_t l = strlen(opt);
	if (strncmp(argv[*i], opt, l))
		return 0;
	if (argv[*i][l] == '=') {
		*val = argv[*i] + l + 1;
		(*i)++;
		return 1;
	}
	if (argv[*i][l])
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*val = argv[*i + 1];
	*i += 2;
	return 1;
}

int common_take_target(const char *verb, int *argc, char **argv)
{
	static const char *const opts[] = {"--pod", "--namespace", "--container"};
	const char **vals[] = {&common_target.pod, &common_target.pod_namespace,
			       &common_target.container};
	int out = 1, i = 1;
	while (i < *argc) {
		if (!strcmp(argv[i], "--"))
			break;
		int taken = 0;
		for (size_t k = 0; k < 3 && !taken; k++) {
			taken = common_target_opt(*argc, argv, &i, opts[k], vals[k]);
			if (taken < 0) {
				fprintf(stderr, "flamesidecar %s: %s needs a value\n", verb,
					opts[k]);
				return FS_EXIT_USAGE;
			}
		}
		if (!taken)
			argv[out++] = argv[i++];
	}
	while (i < *argc)
		argv[out++] = argv[i++];
	if (!common_target.pod && (common_target.pod_namespace || common_target.container)) {
		fprintf(stderr, "flamesidecar %s: --namespace and --container need --pod NAME\n",
			verb);
		return FS_EXIT_USAGE;
	}
	/* Each option took at least one slot, so there is room. */
	if (common_target.pod)
		argv[out++] = common_pod_arg;
	argv[out] = NULL;
	*argc = out;
	return FS_EXIT_OK;
}

int common_find_container(const char *verb, const char *regdir, const char *id,
			  struct registry_entry *e)
{
	struct fs_error err;
	struct registry_query q = {.ref = id};
	if (id == common_pod_arg)
		q = common_target;
	int r = registry_find_query(regdir, &q, e, &err);
	if (r == 0)
		return FS_EXIT_OK;
	fprintf(stderr, "flamesidecar %s: %s\n", verb, err.msg);
	if (r == -EACCES || r == -EPERM)
		return FS_EXIT_PERM;
	if (r == -EINVAL) /* a bad --pod name is a usage error; a bad id just unknown */
		return id == common_pod_arg ? FS_EXIT_USAGE : FS_EXIT_NOTFOUND;
	return r == -ENOENT || r == -EEXIST ? FS_EXIT_NOTFOUND : FS_EXIT_FAIL;
}

int common_open_container(const char *verb, const char *why, const char *id, struct fs_config *cfg,
			  struct registry_entry *e)
{
	char regdir[PATH_MAX];
	if (geteuid() != 0) {
		fprintf(stderr, "flamesidecar %s: must run as root (%s)\n", verb, why);
		return FS_EXIT_PERM;
	}
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
		fprintf(stderr, "flamesidecar %s: %s takes a number from %lu to %lu, not '%s'\n",
			verb, opt, lo, hi, arg);
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
		fprintf(stderr, "flamesidecar %s: %s must be agent or jcmd, not '%s'\n", verb, opt,
			arg);
		return -EINVAL;
	}
	return 0;
}

uint64_t common_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int common_id_width(const char *id)
{
	size_t l = strlen(id);
	return l == 64 && strspn(id, "0123456789abcdef") == 64 ? 12 : (int)l;
}

void common_warn(void *ctx, const char *msg)
{
	fprintf(stderr, "flamesidecar %s: warning: %s\n", ctx ? (const char *)ctx : "", msg);
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

int common_parse_duration_ms(const char *s, unsigned long long *ms)
{
	char *end;
	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0 || v > 1e9)
		return -EINVAL;
	double mult;
	if (!*end || !strcmp(end, "s"))
		mult = 1000;
	else if (!strcmp(end, "ms"))
		mult = 1;
	else if (!strcmp(end, "m"))
		mult = 60000;
	else if (!strcmp(end, "h"))
		mult = 3600000;
	else
		return -EINVAL;
	*ms = (unsigned long long)(v * mult + 0.5);
	return 0;
}

/* common.c - see common.h */
#include "common.h"
#include "profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "offcpu.h"

/* The --pod options main() took out of argv (common_take_target). */
static struct registry_query common_target;
/* --exact-process PID:START (common_take_target). */
static pid_t common_exact_pid;
static uint64_t common_exact_start;
char common_pod_arg[] = "(--pod)";

int common_load_config(const char *verb, struct fs_config *cfg, char *regdir, size_t len)
{
	struct fs_error err;
	if (config_load(cli_config_path, cfg, &err) < 0)
		return cli_fail_file(verb, &err);
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
	static const char *const opts[] = {"--pod", "--namespace", "--container",
					   "--exact-process"};
	const char *exact = NULL;
	const char **vals[] = {&common_target.pod, &common_target.pod_namespace,
			       &common_target.container, &exact};
	int out = 1, i = 1;
	while (i < *argc) {
		if (!strcmp(argv[i], "--"))
			break;
		int taken = 0;
		for (size_t k = 0; k < FS_ARRAY_SIZE(opts) && !taken; k++) {
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
	if (exact) {
		char *end;
		errno = 0;
		unsigned long pid = strtoul(exact, &end, 10);
		unsigned long long st = 0;
		if (!errno && *end == ':' && end > exact && exact[0] != '-' && end[1] != '-')
			st = strtoull(end + 1, &end, 10);
		if (errno || *end || pid < 1 || pid > INT32_MAX || st == 0) {
			fprintf(stderr,
				"flamesidecar %s: --exact-process takes PID:START (a pid and "
				"its start time in clock ticks)\n",
				verb);
			return FS_EXIT_USAGE;
		}
		common_exact_pid = (pid_t)pid;
		common_exact_start = st;
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
	struct registry_query q = {
	    .ref = id, .exact_pid = common_exact_pid, .exact_start = common_exact_start};
	if (id == common_pod_arg)
		q = common_target;
	int r = registry_find_query(regdir, &q, e, &err);
	if (r == 0)
		return FS_EXIT_OK;
	if (r == -EINVAL && id == common_pod_arg) /* a bad --pod name is a usage error */
		return cli_usage_error(verb, "%s", err.msg);
	if (r == -EINVAL) /* a malformed id is simply not registered */
		err.code = ENOENT;
	return cli_fail(verb, &err);
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
	else if (!strcmp(arg, "vmstructs"))
		*mode = MAP_MODE_VMSTRUCTS;
	else {
		cli_usage_error(verb, "%s must be agent, jcmd or vmstructs, not '%s'", opt, arg);
		return -EINVAL;
	}
	return 0;
}

int common_parse_kernel_filter(const char *verb, const char *arg, enum sampler_kfilter *out)
{
	if (!strcmp(arg, "auto"))
		*out = SAMPLER_KFILTER_AUTO;
	else if (!strcmp(arg, "on"))
		*out = SAMPLER_KFILTER_ON;
	else if (!strcmp(arg, "off"))
		*out = SAMPLER_KFILTER_OFF;
	else {
		cli_usage_error(verb, "--kernel-filter takes auto, on or off; not '%s'", arg);
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

void common_debuginfo(const struct fs_config *cfg, struct profile_opts *prof)
{
	const char *env = getenv("DEBUGINFOD_URLS");
	prof->no_debuginfo = !cfg->debuginfo;
	prof->debuginfod_urls = cfg->debuginfod_urls[0] ? cfg->debuginfod_urls
				: env && env[0]		? env
							: NULL;
}

int common_profile_open(struct profile_opts *o, int ev, struct profile **p, struct offcpu **oc,
			struct fs_error *err)
{
	*oc = NULL;
	if (ev != OFFCPU_EVENT_CPU) {
		o->no_events = ev == OFFCPU_EVENT_OFFCPU;
		o->on_cpu_frame = ev == OFFCPU_EVENT_WALL ? "[running]" : NULL;
		/* wall: on-CPU samples are scaled per thread (offcpu.h) */
		o->per_thread |= ev == OFFCPU_EVENT_WALL;
	}
	int r = profile_open(o, p, err);
	if (r < 0 || ev == OFFCPU_EVENT_CPU)
		return r;
	struct offcpu_opts oo = {.entry = o->entry,
				 .pid = o->pid,
				 .event = (enum offcpu_event)ev,
				 .frequency = o->frequency,
				 .user_only = o->user_only};
	r = offcpu_new(*p, &oo, oc, err);
	if (r < 0) {
		profile_close(*p);
		*p = NULL;
	}
	return r;
}

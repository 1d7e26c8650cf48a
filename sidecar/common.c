/* common.c - see common.h */
#include "common.h"
#include "profile.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "offcpu.h"

int common_load_config(const char *verb, struct fs_config *cfg, char *regdir, size_t len)
{
	struct fs_error err;
	if (config_load(cli_config_path, cfg, &err) < 0)
		return cli_fail_file(verb, &err);
	if (regdir)
		config_registry_dir(cfg, regdir, len);
	return FS_EXIT_OK;
}

/* --exact-process PID:START */
static int common_set_exact(void *group, const char *arg, struct fs_error *err)
{
	struct registry_query *q = group;
	char *end;
	errno = 0;
	unsigned long pid = strtoul(arg, &end, 10);
	unsigned long long st = 0;
	if (!errno && *end == ':' && end > arg && arg[0] != '-' && end[1] != '-')
		st = strtoull(end + 1, &end, 10);
	if (errno || *end || pid < 1 || pid > INT32_MAX || st == 0)
		return fs_error_set(err, 0,
				    "--exact-process takes PID:START (a pid and its start time in "
				    "clock ticks), not '%s'",
				    arg);
	q->exact_pid = (pid_t)pid;
	q->exact_start = st;
	return 0;
}

static const struct opt common_target_opts[] = {
    {.name = "pod",
     .arg = "NAME",
     .help = "the container is in this Kubernetes pod (instead of CONTAINER)",
     .kind = OPT_STRING,
     .off = offsetof(struct registry_query, pod)},
    {.name = "namespace",
     .arg = "NS",
     .help = "the pod's namespace (default: any, if the name is unique)",
     .kind = OPT_STRING,
     .off = offsetof(struct registry_query, pod_namespace),
     .needs = "pod"},
    {.name = "container",
     .arg = "NAME",
     .help = "the container of the pod, when it has several",
     .kind = OPT_STRING,
     .off = offsetof(struct registry_query, container),
     .needs = "pod"},
    {.name = "exact-process",
     .arg = "PID:START",
     .help = "CONTAINER is an exact id whose process must still be this pid with this "
	     "start time (clock ticks): a triggered profile never profiles a restarted "
	     "container",
     .kind = OPT_CALL,
     .set = common_set_exact},
};
const struct opt_group common_target_group = OPT_GROUP("Container options", common_target_opts);

int common_target_operand(const char *verb, struct registry_query *q, int argc, char **argv,
			  int first)
{
	if (q->pod && first < argc)
		return cli_usage_error(verb, "a container id and --pod: give one of them");
	if (q->pod)
		return 0;
	if (argc - first != 1)
		return cli_usage_error(
		    verb, "expected one container id or unique prefix (see `flamesidecar list`)");
	q->ref = argv[first];
	return 0;
}

int common_find_container(const char *verb, const char *regdir, const struct registry_query *q,
			  struct registry_entry *e)
{
	struct fs_error err;
	int r = registry_find_query(regdir, q, e, &err);
	if (r == 0)
		return FS_EXIT_OK;
	if (r == -EINVAL && q->pod) /* a bad --pod name is a usage error */
		return cli_usage_error(verb, "%s", err.msg);
	if (r == -EINVAL) /* a malformed id is simply not registered */
		err.code = ENOENT;
	return cli_fail(verb, &err);
}

int common_open_container(const char *verb, const char *why, const struct registry_query *q,
			  struct fs_config *cfg, struct registry_entry *e)
{
	char regdir[PATH_MAX];
	if (geteuid() != 0)
		return cli_failf(verb, FS_EXIT_PERM, "must run as root (%s)", why);
	int rc = common_load_config(verb, cfg, regdir, sizeof(regdir));
	if (rc)
		return rc;
	return common_find_container(verb, regdir, q, e);
}

/* ---- the profile session options (run, top) ------------------------------ */

#define CS(field) offsetof(struct common_session, field)
/* OPT_ENUM stores an int */
_Static_assert(sizeof(enum offcpu_event) == sizeof(int) && sizeof(enum map_mode) == sizeof(int) &&
		   sizeof(enum sampler_kfilter) == sizeof(int),
	       "the session's enums are int-sized");

static const struct opt_choice common_events[] = {
    {"cpu", OFFCPU_EVENT_CPU}, {"offcpu", OFFCPU_EVENT_OFFCPU}, {"wall", OFFCPU_EVENT_WALL}, {0}};
const struct opt_choice common_map_modes[] = {
    {"agent", MAP_MODE_AGENT}, {"jcmd", MAP_MODE_JCMD}, {"vmstructs", MAP_MODE_VMSTRUCTS}, {0}};
static const struct opt_choice common_kfilters[] = {
    {"auto", SAMPLER_KFILTER_AUTO}, {"on", SAMPLER_KFILTER_ON}, {"off", SAMPLER_KFILTER_OFF}, {0}};

static const struct opt common_session_opts[] = {
    {.name = "frequency",
     .key = 'F',
     .arg = "HZ",
     .help = "samples per second per CPU (default 99, max " OPT_XSTR(
	 SAMPLER_MAX_FREQUENCY) "); "
				"with --event offcpu|wall, thread-state reads per second",
     .more = "At most kernel.perf_event_max_sample_rate, too.",
     .kind = OPT_UINT,
     .off = CS(prof.frequency),
     .lo = 1,
     .hi = SAMPLER_MAX_FREQUENCY},
    {.name = "pid",
     .key = 'p',
     .arg = "PID",
     .help = "only this process of the container (host pid)",
     .more = "Every thread of it, also threads started later. A pid that is not in the "
	     "container's pid namespace is refused with exit status 3.",
     .kind = OPT_PID,
     .off = CS(prof.pid)},
    {.name = "event",
     .arg = "EVENT",
     .help = "cpu (default: CPU samples), offcpu (the time threads are blocked, under the "
	     "stack they block at, kernel frames and the thread state as the leaf) or wall "
	     "(offcpu plus on-CPU and runnable time: each thread's total is the window); "
	     "counts are then microseconds of thread time",
     .more = "With offcpu and wall, -F is the rate at which thread states are read from "
	     "/proc (docs/run.md).",
     .kind = OPT_ENUM,
     .off = CS(event),
     .choices = common_events},
    {.name = "no-map",
     .help = "do not attach to JVMs (Java frames stay [unknown])",
     .kind = OPT_FLAG,
     .off = CS(prof.no_map)},
    {.name = "map-mode",
     .arg = "MODE",
     .help = "agent (default when the bundle is mounted), jcmd, or vmstructs (read the code "
	     "cache from the host, no attach; the fallback when attach is impossible or fails)",
     .kind = OPT_ENUM,
     .off = CS(prof.map.mode),
     .choices = common_map_modes},
    {.name = "user-only", .help = "no kernel frames", .kind = OPT_FLAG, .off = CS(prof.user_only)},
    {.name = "kernel-filter",
     .arg = "MODE",
     .help = "how samples are kept to the container (or --pid): auto (default: a tiny BPF "
	     "program on system-wide events drops other tasks' samples in the kernel; where "
	     "it cannot load, per-cgroup events, or the pid checked here, and the summary "
	     "says why), on (the BPF filter or fail), off (per-cgroup events, whose cost the "
	     "kernel pays at every context switch into or out of the container; with --pid, "
	     "every host sample read and checked here)",
     .more = "The BPF program (BPF_PROG_TYPE_PERF_EVENT, loaded with bpf(2)) drops every "
	     "sample of a task outside the container's cgroup v2 directory and its "
	     "sub-cgroups (or of another process than --pid), so nothing is paid at context "
	     "switches. It cannot load without cgroup v2, without CONFIG_BPF_SYSCALL, without "
	     "root or CAP_BPF with CAP_PERFMON, or in a cgroup namespace. The summary's "
	     "container line (top: the header) says which one ran: scope \"cgroup (kernel "
	     "filter)\" or \"cgroup (cgroup events)\"; see docs/perf-run.md for the costs.",
     .kind = OPT_ENUM,
     .off = CS(prof.kernel_filter),
     .choices = common_kfilters},
};
const struct opt_group common_session_group =
    OPT_GROUP("Profile session options", common_session_opts);

void common_session_init(struct common_session *s)
{
	s->prof.map.mode = MAP_MODE_AUTO;
	s->prof.map.fallback = 1; /* JVMs that cannot be attached to: vmstructs */
	s->prof.map.timeout_ms = MAP_DEFAULT_TIMEOUT_MS;
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

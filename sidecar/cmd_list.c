/* list.c - `flamesidecar list`: the registered containers. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "cli.h"
#include "common.h"
#include "deadmark.h"
#include "json.h"
#include "logfile.h"
#include "proc.h"
#include "profiles.h"
#include "registry.h"

static void list_profiles_table(const struct profile_info *p, size_t n, time_t now)
{
	printf("%-16s %-9s %8s %s\n", "PROFILE OF", "STATE", "AGE", "FILE");
	for (size_t i = 0; i < n; i++) {
		char age[32], id[17];
		common_format_age((long long)(now - p[i].time), age, sizeof(age));
		snprintf(id, sizeof(id), "%s", p[i].id);
		printf("%-16s %-9s %8s %s\n", id, p[i].running ? "profiling" : "done", age,
		       p[i].path);
	}
}

static int list_profiles(const struct fs_config *cfg, int json)
{
	cleanup_free struct profile_info *p = NULL;
	size_t n = 0;
	time_t now = time(NULL);
	profiles_list(cfg, &p, &n);
	if (!json) {
		if (n == 0)
			printf("No triggered profiles (annotate a container "
			       "flamesidecar.io/profile=30s).\n");
		else
			list_profiles_table(p, n, now);
		return FS_EXIT_OK;
	}
	printf("[");
	for (size_t i = 0; i < n; i++) {
		printf("%s\n  {\"id\":", i ? "," : "");
		json_write_string(stdout, p[i].id);
		printf(",\"state\":\"%s\",\"time\":%lld,\"svg\":",
		       p[i].running ? "profiling" : "done", p[i].time);
		json_write_string(stdout, p[i].path);
		/* the files beside the SVG; null when absent */
		printf(",\"folded\":");
		if (p[i].folded[0])
			json_write_string(stdout, p[i].folded);
		else
			printf("null");
		printf(",\"pprof\":");
		if (p[i].pprof[0])
			json_write_string(stdout, p[i].pprof);
		else
			printf("null");
		printf("}");
	}
	printf("%s]\n", n ? "\n" : "");
	return FS_EXIT_OK;
}

/* Opted-in containers whose hook ran out of time before registering them
 * (lib/deadmark.h): those still running with no entry. */
static size_t list_unregistered(const struct fs_config *cfg, const struct registry_entry *all,
				size_t n, struct deadmark_info **out)
{
	size_t nd = 0, kept = 0;
	if (deadmark_list(cfg->run_dir, out, &nd) < 0)
		return 0;
	for (size_t i = 0; i < nd; i++) {
		struct deadmark_info *d = &(*out)[i];
		int registered = 0;
		for (size_t j = 0; j < n && !registered; j++)
			registered = !strcmp(all[j].id, d->id);
		if (!registered && proc_alive(d->pid, d->start_time))
			(*out)[kept++] = *d;
	}
	return kept;
}

static void list_unregistered_print(const struct deadmark_info *d, size_t n, time_t now, int json)
{
	if (json) {
		printf("[");
		for (size_t i = 0; i < n; i++) {
			printf("%s\n  {\"id\":", i ? "," : "");
			json_write_string(stdout, d[i].id);
			printf(",\"pid\":%d,\"state\":\"not registered\",\"reason\":\"deadline\","
			       "\"time\":%lld,\"stage\":",
			       (int)d[i].pid, (long long)d[i].time);
			json_write_string(stdout, d[i].stage);
			printf(",\"phase\":");
			json_write_string(stdout, d[i].phase);
			printf("}");
		}
		printf("%s]\n", n ? "\n" : "");
		return;
	}
	printf("%-16s %8s %8s %s\n", "OPTED IN", "PID", "AGE", "STATE");
	for (size_t i = 0; i < n; i++) {
		char age[32], id[17], ph[64];
		common_format_age((long long)(now - d[i].time), age, sizeof(age));
		snprintf(id, sizeof(id), "%s", d[i].id);
		logfile_escape(d[i].phase, ph, sizeof(ph), 0);
		printf("%-16s %8d %8s not registered: deadline (hook gave up after phase %s)\n", id,
		       (int)d[i].pid, age, ph);
	}
}

/* Engines' ids (64 hex digits) as the shortest prefix of at least 12 that
 * no other entry shares; other ids whole. */
static int list_id_width(const struct registry_entry *all, size_t n, size_t i)
{
	int w = common_id_width(all[i].id);
	if (w == (int)strlen(all[i].id))
		return w;
	for (size_t j = 0; j < n; j++) {
		size_t k = 0;
		while (j != i && all[i].id[k] && all[i].id[k] == all[j].id[k])
			k++;
		if (j != i && (int)k >= w)
			w = (int)k + 1;
	}
	return w > (int)strlen(all[i].id) ? (int)strlen(all[i].id) : w;
}

static void list_json_entry(const struct registry_entry *e, time_t now)
{
	printf("{\"id\":");
	json_write_string(stdout, e->id);
	printf(",\"pid\":%d,\"ns_pid\":%d,\"uid\":%u,\"gid\":%u,\"age_seconds\":%lld,"
	       "\"created\":%lld,\"state\":\"%s\",\"mount_point\":",
	       (int)e->pid, (int)e->ns_pid, (unsigned)e->uid, (unsigned)e->gid,
	       (long long)(now - e->created), (long long)e->created,
	       registry_entry_alive(e) ? "alive" : "stale");
	json_write_string(stdout, e->mount_point);
	const struct {
		const char *key, *val;
	} names[] = {{"engine", e->engine},
		     {"name", e->name},
		     {"pod", e->pod},
		     {"namespace", e->pod_namespace},
		     {"container", e->container}};
	for (size_t k = 0; k < FS_ARRAY_SIZE(names); k++) {
		printf(",\"%s\":", names[k].key);
		if (names[k].val[0])
			json_write_string(stdout, names[k].val);
		else
			printf("null");
	}
	/* name_source: the name's, or the pod's when there is no name. */
	const char *src =
	    e->name[0] ? registry_name_source_str(e->name_source) : registry_entry_label_source(e);
	const char *pod_src = e->pod[0] ? registry_name_source_str(REGISTRY_NAME_ANNOTATION) : NULL;
	printf(",\"name_source\":");
	if (src)
		printf("\"%s\"", src);
	else
		printf("null");
	printf(",\"pod_source\":");
	if (pod_src)
		printf("\"%s\"", pod_src);
	else
		printf("null");
	printf("}");
}

/* The SOURCE column: where the NAME column's words came from. */
static const char *list_source(const struct registry_entry *e)
{
	const char *src = registry_entry_label_source(e);
	if (!src)
		return "-";
	return e->pod[0] || e->name_source != REGISTRY_NAME_ENGINE ? "annotation" : "engine";
}

static void list_table(const struct registry_entry *all, size_t n, time_t now)
{
	int idw = 12, namew = 4;
	for (size_t i = 0; i < n; i++) {
		char name[REGISTRY_LABEL_MAX + 1];
		registry_entry_label(&all[i], name, sizeof(name));
		int w = list_id_width(all, n, i);
		idw = w > idw ? w : idw;
		namew = (int)strlen(name) > namew ? (int)strlen(name) : namew;
	}
	printf("%-*s %-*s %-10s %8s %7s %6s %8s %s\n", idw, "CONTAINER", namew, "NAME", "SOURCE",
	       "PID", "NS-PID", "UID", "AGE", "STATE");
	for (size_t i = 0; i < n; i++) {
		const struct registry_entry *e = &all[i];
		char age[32], name[REGISTRY_LABEL_MAX + 1];
		common_format_age((long long)(now - e->created), age, sizeof(age));
		registry_entry_label(e, name, sizeof(name));
		printf("%-*.*s %-*s %-10s %8d %7d %6u %8s %s\n", idw, list_id_width(all, n, i),
		       e->id, namew, name, list_source(e), (int)e->pid, (int)e->ns_pid,
		       (unsigned)e->uid, age, registry_entry_alive(e) ? "alive" : "stale");
	}
}

struct list_args {
	int json, only_profiles, only_unreg;
};

static const struct opt list_opts_table[] = {
    {.name = "json",
     .help = "one JSON object per container (or profile), in an array; full ids, and engine, "
	     "name, pod, namespace, container, and name_source: \"annotation\" (a claim: "
	     "whoever can annotate a container can set it) or \"engine state\" (Docker, "
	     "Podman)",
     .more = "A profile names its svg, folded and pprof files (null when absent). A "
	     "container's name_source is the name's, or the pod's when it has no name, null "
	     "when it has neither; pod_source is \"annotation\" for a pod (pods are only ever "
	     "named by annotations), else null.",
     .kind = OPT_FLAG,
     .off = offsetof(struct list_args, json)},
    {.name = "profiles",
     .help = "only the triggered profiles",
     .kind = OPT_FLAG,
     .off = offsetof(struct list_args, only_profiles)},
    {.name = "unregistered",
     .help = "only the opted-in containers the hook's deadline left unregistered (still "
	     "running, no entry)",
     .kind = OPT_FLAG,
     .off = offsetof(struct list_args, only_unreg)},
};
static const struct opt_group list_group = OPT_GROUP(NULL, list_opts_table);
static const struct opt_use list_uses[] = {{&list_group, 0}};

static int list_check(void *args, struct fs_error *err)
{
	const struct list_args *a = args;
	if (a->only_profiles && a->only_unreg)
		return fs_error_set(err, 0, "--profiles and --unregistered: give one of them");
	return 0;
}

const struct opt_verb cmd_list_opts = {
    .name = "list",
    .summary = "list registered containers (and profiles)",
    .synopsis = "[--json] [--profiles | --unregistered]",
    .intro = "List the containers the hook registered: id (engines' 64-digit ids as the\n"
	     "shortest unambiguous prefix of at least 12), the name the engine gave\n"
	     "(Docker/Podman name, or NAMESPACE/POD/CONTAINER for Kubernetes) and where\n"
	     "that name came from (SOURCE: \"engine\", the engine's own record on disk;\n"
	     "\"annotation\", a claim anyone who can annotate a container can make;\n"
	     "set; \"-\", no name), host pid,\n"
	     "pid inside the container, uid, age, and whether it is alive (\"stale\"\n"
	     "entries are left by runtimes killed before poststop; `flamesidecar gc`\n"
	     "removes them); then the annotation-triggered profiles, in progress and\n"
	     "finished, with their files; then the opted-in containers that run\n"
	     "unregistered because the hook ran out of time (\"not registered: deadline\").\n",
    .outro = "Examples:\n"
	     "  flamesidecar list\n"
	     "  flamesidecar list --json | jq -r '.[] | select(.state == \"alive\") | .id'\n"
	     "  flamesidecar list --profiles --json | jq -r '.[] | select(.state == \"done\") | "
	     ".svg'\n",
    .uses = OPT_USES(list_uses),
    .check = list_check,
};

/* The registered containers, as a table or JSON. */
static int list_registered(const struct fs_config *cfg, const char *regdir, int json,
			   int only_unreg);

int cmd_list(int argc, char **argv)
{
	struct list_args a = {0};
	int first;
	int rc = cli_parse(&cmd_list_opts, argc, argv, &a, &first);
	if (rc != CLI_GO_ON)
		return rc;
	if (first < argc)
		return cli_usage_error("list", "unexpected argument '%s'", argv[first]);
	struct fs_config cfg;
	char regdir[PATH_MAX];
	rc = common_load_config("list", &cfg, regdir, sizeof(regdir));
	if (rc)
		return rc;
	if (a.only_profiles)
		return list_profiles(&cfg, a.json);
	return list_registered(&cfg, regdir, a.json, a.only_unreg);
}

static int list_registered(const struct fs_config *cfg, const char *regdir, int json,
			   int only_unreg)
{
	struct fs_error err;
	cleanup_free struct registry_entry *all = NULL;
	size_t n;
	if (registry_list(regdir, &all, &n, common_warn, "list", &err) < 0) {
		return cli_failf("list", cli_exit_code(err.code), "%s%s", err.msg,
				 err.code == EACCES ? " (run as root)" : "");
	}
	registry_sweep(regdir, all, &n);
	time_t now = time(NULL);
	cleanup_free struct deadmark_info *dead = NULL;
	size_t ndead = list_unregistered(cfg, all, n, &dead);
	if (only_unreg) {
		list_unregistered_print(dead, ndead, now, json);
		return FS_EXIT_OK;
	}
	if (json) {
		printf("[");
		for (size_t i = 0; i < n; i++) {
			printf("%s\n  ", i ? "," : "");
			list_json_entry(&all[i], now);
		}
		printf("%s]\n", n ? "\n" : "");
		return FS_EXIT_OK;
	}
	if (ndead) {
		list_unregistered_print(dead, ndead, now, 0);
		printf("\n");
	}
	if (n == 0) {
		printf("No registered containers in %s.\n"
		       "Start a container with the annotation flamesidecar.io/enable=true and the\n"
		       "flamesidecar hook installed (see `man flamesidecar`).\n",
		       regdir);
		return FS_EXIT_OK;
	}
	list_table(all, n, now);
	cleanup_free struct profile_info *profs = NULL;
	size_t np = 0;
	profiles_list(cfg, &profs, &np);
	if (np) {
		printf("\n");
		list_profiles_table(profs, np, now);
	}
	return FS_EXIT_OK;
}

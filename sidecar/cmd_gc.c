/* gc.c - `flamesidecar gc`: remove entries whose process is gone. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "cli.h"
#include "common.h"
#include "deadmark.h"
#include "proc.h"
#include "profquota.h"
#include "registry.h"

static const struct opt gc_opts[] = {
    {.name = "dry-run", .key = 'n', .help = "print what would be removed", .kind = OPT_FLAG},
};
static const struct opt_group gc_group = OPT_GROUP(NULL, gc_opts);
static const struct opt_use gc_uses[] = {{&gc_group, 0}};

const struct opt_verb cmd_gc_opts = {
    .name = "gc",
    .summary = "remove registry entries whose process is gone",
    .synopsis = "[--dry-run]",
    .intro = "Remove registry entries whose process is gone or whose pid now belongs to\n"
	     "another process (start time differs). Every verb that reads the registry\n"
	     "(list, and the lookups of run, top, map...) already removes the entries it\n"
	     "meets that are proven stale, and the optional poststop hook removes them at\n"
	     "once; gc sweeps them all explicitly. It also brings the name index\n"
	     "(names/ beside the entries, which lookups by name and --pod read) in line\n"
	     "with the entries: built when missing, stale names dropped, missing ones added.\n"
	     "Triggered profiles (profile_dir) past profile_retention_seconds go, and\n"
	     "the oldest beyond the count and size quotas of the config (per container\n"
	     "name or pod, and in total), as the hook does before each new one.\n",
    .outro = "Examples:\n"
	     "  flamesidecar gc\n"
	     "  flamesidecar gc --dry-run\n",
    .uses = OPT_USES(gc_uses),
};

/* Retention and quotas of the triggered profiles, as a sweep. */
static void gc_profiles(const struct fs_config *cfg, int dry)
{
	cleanup_close int lock = dry ? -1 : profquota_lock(cfg);
	cleanup_free struct profquota_item *items = NULL;
	size_t n = 0, removed = 0;
	struct profquota_limits lim;
	profquota_limits_from_config(cfg, &lim);
	if (profquota_scan(cfg, &items, &n) < 0) {
		cli_warn("gc", "cannot read %s: its triggered profiles are not swept",
			 cfg->profile_dir);
		return;
	}
	profquota_plan(items, n, NULL, &lim, (int64_t)time(NULL));
	for (size_t i = 0; i < n; i++)
		if (items[i].remove) {
			printf("%s profile %s/%s/%s (%s)\n", dry ? "would remove" : "removed",
			       cfg->profile_dir, items[i].id, items[i].base, items[i].why);
			removed++;
		}
	if (!dry)
		profquota_apply(cfg, items, n);
	printf("%zu of %zu triggered profiles %s\n", removed, n,
	       dry ? "would be removed (dry run)" : "removed");
}

/* Deadline markers (lib/deadmark.h) of containers that are gone or have
 * been registered since. */
static void gc_deadmarks(const struct fs_config *cfg, const struct registry_entry *all, size_t n,
			 int dry)
{
	cleanup_free struct deadmark_info *d = NULL;
	size_t nd = 0, removed = 0;
	if (!dry)
		removed += deadmark_sweep_junk(cfg->run_dir);
	if (deadmark_list(cfg->run_dir, &d, &nd) < 0)
		return;
	for (size_t i = 0; i < nd; i++) {
		int registered = 0;
		for (size_t j = 0; j < n && !registered; j++)
			registered = !strcmp(all[j].id, d[i].id);
		if (!registered && proc_alive(d[i].pid, d[i].start_time))
			continue;
		if (!dry)
			deadmark_remove(cfg->run_dir, d[i].id);
		removed++;
	}
	if (nd)
		printf("%zu of %zu deadline markers %s\n", removed, nd,
		       dry ? "would be removed (dry run)" : "removed");
}

int cmd_gc(int argc, char **argv)
{
	int dry = 0, first;
	int rc = cli_parse(&cmd_gc_opts, argc, argv, &dry, &first);
	if (rc != CLI_GO_ON)
		return rc;
	struct fs_config cfg;
	char regdir[PATH_MAX];
	rc = common_load_config("gc", &cfg, regdir, sizeof(regdir));
	if (rc)
		return rc;
	struct fs_error err;
	cleanup_free struct registry_entry *all = NULL;
	size_t n, removed = 0;
	if (registry_list(regdir, &all, &n, common_warn, "gc", &err) < 0)
		return cli_fail("gc", &err);
	size_t kept = 0; /* all[0..kept): the entries left, still sorted by id */
	for (size_t i = 0; i < n; i++) {
		if (!registry_entry_dead(&all[i])) {
			all[kept++] = all[i]; /* alive, or not proven gone */
			continue;
		}
		if (dry) {
			printf("would remove %s (pid %d gone)\n", all[i].id, (int)all[i].pid);
			removed++;
			continue;
		}
		/* Judged again on the file itself: a new container of the same
		 * id may have replaced the entry since it was listed (its hook
		 * indexes its names). */
		if (!registry_remove_dead(regdir, all[i].id))
			continue;
		printf("removed %s (pid %d gone)\n", all[i].id, (int)all[i].pid);
		removed++;
	}
	printf("%zu stale of %zu entries %s\n", removed, n, dry ? "(dry run)" : "removed");
	gc_profiles(&cfg, dry);
	gc_deadmarks(&cfg, all, kept, dry);
	if (dry)
		return rc;
	/* The index against the entries left (each removal above dropped its
	 * own names). */
	struct registry_index_stats st;
	if (registry_index_check(regdir, all, kept, &st, &err) < 0)
		return cli_fail("gc", &err);
	if (st.built)
		printf("name index built\n");
	else
		printf("name index: %zu stale names dropped, %zu missing added\n", st.dropped,
		       st.added);
	if (st.leftovers)
		printf("registry: %zu files left by interrupted sweeps removed\n", st.leftovers);
	return rc;
}

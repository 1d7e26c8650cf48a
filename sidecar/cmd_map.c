/* cmd_map.c - `flamesidecar map`: the JIT map of a container's JVMs for
 * stock perf (map.h does the work). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "common.h"
#include "map.h"

struct map_args {
	struct registry_query target;
	struct map_opts o;
	pid_t only; /* --pid */
};

#define MA(field) offsetof(struct map_args, field)

static const struct opt map_opts_table[] = {
    {.name = "pid",
     .key = 'p',
     .arg = "PID",
     .help = "only this JVM (host pid; must be in the container)",
     .kind = OPT_PID,
     .off = MA(only)},
    {.name = "mode",
     .key = 'm',
     .arg = "MODE",
     .help = "agent: load <mount point>/" MAP_AGENT_NAME " (the default when the bundle is "
	     "mounted); jcmd: Compiler.perfmap (JDK 17+; the default when it is not); "
	     "vmstructs: read the code cache from the host through the JVM's VMStructs, no "
	     "attach, nothing written in the container: for JVMs that cannot be attached to "
	     "(run and top fall back to it)",
     .more = "vmstructs reads every code blob of the JVM's code cache from the host through "
	     "its VMStructs tables (compiled methods are split at their inlining boundaries). "
	     "For JVMs that cannot be attached to (-XX:+DisableAttachMechanism, SIGQUIT "
	     "ignored, no writable /tmp, read-only rootfs), map without --mode reports why "
	     "attach is impossible; run and top fall back to vmstructs by themselves.",
     .kind = OPT_ENUM,
     .off = MA(o.mode),
     .choices = common_map_modes},
    {.name = "continuous",
     .key = 'c',
     .help = "the agent keeps the container's map up to date as code is compiled; run map "
	     "again to copy it to the host",
     .more = "The host map is a copy taken when map runs. A JVM runs one continuous session; "
	     "when our agent is already loaded, --continuous first stops it and starts a new "
	     "session, so repeating it is safe. Not with --mode jcmd or vmstructs.",
     .kind = OPT_FLAG,
     .off = MA(o.continuous)},
    {.name = "timeout",
     .key = 't',
     .arg = "MS",
     .help = "per JVM, attach included (default " OPT_XSTR(MAP_DEFAULT_TIMEOUT_MS) ", {lo} to "
										   "{hi})",
     .kind = OPT_UINT,
     .off = MA(o.timeout_ms),
     .lo = 1,
     .hi = 600000},
};
static const struct opt_group map_group = OPT_GROUP(NULL, map_opts_table);
static const struct opt_use map_uses[] = {{&map_group, 0}, {&common_target_group, MA(target)}};

static int map_check(void *args, struct fs_error *err)
{
	const struct map_args *a = args;
	if (a->o.continuous && (a->o.mode == MAP_MODE_JCMD || a->o.mode == MAP_MODE_VMSTRUCTS))
		return fs_error_set(err, 0, "--continuous needs the agent, not --mode %s",
				    map_mode_name(a->o.mode));
	return 0;
}

const struct opt_verb cmd_map_opts = {
    .name = "map",
    .summary = "write /tmp/perf-<host pid>.map for the JVMs in a container",
    .synopsis = "CONTAINER [--pid N] [--mode agent|jcmd|vmstructs]\n"
		"                        [--continuous] [--timeout MS]",
    .intro = "CONTAINER: an id, a name (docker/podman ps), a unique id prefix, or\n"
	     "--pod NAME [--namespace NS] [--container NAME] for a Kubernetes pod.\n\n"
	     "Make every JVM of a registered container write its JIT symbol map, read it\n"
	     "safely (as the JVM's own user, inside the container's mount namespace), and\n"
	     "write /tmp/perf-<host pid>.map on the host so that perf can name Java frames.\n",
    .outro = "Output: one line per JVM: host pid, ns pid, uid, mode, entries, time.\n\n"
	     "Examples:\n"
	     "  flamesidecar map 3f2a9c\n"
	     "  flamesidecar map 3f2a9c --pid 41236 --mode jcmd\n"
	     "  flamesidecar map 3f2a9c --mode vmstructs   # JVM with attach disabled\n"
	     "  flamesidecar map 3f2a9c --continuous\n"
	     "  flamesidecar map 3f2a9c && perf record -g -p 41236 -- sleep 10 && perf report\n\n"
	     "Exit codes: 0 every JVM mapped, 1 one failed, 2 usage, 3 container or JVM not\n"
	     "found, 4 not permitted (run as root).\n",
    .uses = OPT_USES(map_uses),
    .check = map_check,
};

/* Map each JVM and print its line. The exit code: the first failure's. */
static int map_each(const struct registry_entry *e, struct map_opts *o, const pid_t *pids, size_t n)
{
	struct fs_error err = {0};
	int exit_code = FS_EXIT_OK;
	printf("%-8s %-7s %-6s %-5s %8s %9s  %s\n", "HOST_PID", "NS_PID", "UID", "MODE", "ENTRIES",
	       "TIME_MS", "MAP");
	fflush(stdout);
	for (size_t i = 0; i < n; i++) {
		struct map_result res;
		fs_error_clear(&err);
		int r = map_jvm(e, pids[i], o, NULL, &res, &err);
		if (r < 0) {
			int code = cli_fail("map", &err);
			if (o->mode != MAP_MODE_VMSTRUCTS && r != -ESRCH && r != -ENOEXEC)
				cli_warn("map",
					 "--mode vmstructs maps a JVM without attaching to it");
			if (exit_code == FS_EXIT_OK)
				exit_code = code;
			continue;
		}
		if (res.cut[0])
			cli_warn("map",
				 "pid %d: code cache walk stopped at its %s (VMStructs): code past "
				 "it is not in the map",
				 (int)res.host_pid, res.cut);
		printf("%-8d %-7d %-6u %-5s %8zu %9.1f  %s/perf-%d.map\n", (int)res.host_pid,
		       (int)res.ns_pid, (unsigned)res.uid, map_mode_name(res.mode), res.entries,
		       (double)res.elapsed_us / 1000.0, o->host_tmp ? o->host_tmp : "/tmp",
		       (int)res.host_pid);
		fflush(stdout);
	}
	return exit_code;
}

int cmd_map(int argc, char **argv)
{
	struct map_args a = {
	    .o = {.mode = MAP_MODE_AUTO, .timeout_ms = MAP_DEFAULT_TIMEOUT_MS, .write_host = 1}};
	int first;
	int rc = cli_parse(&cmd_map_opts, argc, argv, &a, &first);
	if (rc != CLI_GO_ON)
		return rc;
	if ((rc = common_target_operand("map", &a.target, argc, argv, first)))
		return rc;
	struct fs_config cfg;
	struct registry_entry e;
	rc = common_open_container("map", "it joins the container's mount namespace", &a.target,
				   &cfg, &e);
	if (rc)
		return rc;
	if (!registry_entry_alive(&e))
		return cli_failf("map", FS_EXIT_NOTFOUND,
				 "container %s is not running (pid %d is gone); "
				 "`flamesidecar gc` removes stale entries",
				 e.id, (int)e.pid);

	struct fs_error err = {0};
	cleanup_free pid_t *pids = NULL;
	size_t n = 0;
	if (a.only) {
		pids = malloc(sizeof(*pids));
		if (!pids)
			return cli_failf("map", FS_EXIT_FAIL, "out of memory");
		pids[0] = a.only;
		n = 1;
	} else if (map_find_jvms(&e, &pids, &n, &err) < 0) {
		return cli_fail("map", &err);
	}
	if (n == 0)
		return cli_failf("map", FS_EXIT_NOTFOUND,
				 "no JVM found in container %s (no process in its pid namespace "
				 "maps libjvm.so)",
				 e.id);

	return map_each(&e, &a.o, pids, n);
}

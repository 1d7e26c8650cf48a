/* cmd_map.c - `flamesidecar map`: the JIT map of a container's JVMs for
 * stock perf (map.h does the work). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cli.h"
#include "common.h"
#include "map.h"

static void map_usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: flamesidecar map CONTAINER [--pid N] [--mode agent|jcmd|vmstructs]\n"
	    "                        [--continuous] [--timeout MS]\n\n"
	    "CONTAINER: an id, a name (docker/podman ps), a unique id prefix, or\n"
	    "--pod NAME [--namespace NS] [--container NAME] for a Kubernetes pod.\n\n"
	    "Make every JVM of a registered container write its JIT symbol map, read it\n"
	    "safely (as the JVM's own user, inside the container's mount namespace), and\n"
	    "write /tmp/perf-<host pid>.map on the host so that perf can name Java frames.\n\n"
	    "Options:\n"
	    "  -p, --pid N        only this JVM (host pid; must be in the container)\n"
	    "  -m, --mode MODE    agent: load <mount point>/%s (the default when\n"
	    "                     the bundle is mounted); jcmd: Compiler.perfmap (JDK 17+;\n"
	    "                     the default when it is not); vmstructs: read the code\n"
	    "                     cache from the host through the JVM's VMStructs, no\n"
	    "                     attach, nothing written in the container: for JVMs that\n"
	    "                     cannot be attached to (run and top fall back to it)\n"
	    "  -c, --continuous   the agent keeps the container's map up to date as code\n"
	    "                     is compiled; run map again to copy it to the host\n"
	    "  -t, --timeout MS   per JVM, attach included (default %d)\n"
	    "  -h, --help         this text\n\n"
	    "Output: one line per JVM: host pid, ns pid, uid, mode, entries, time.\n\n"
	    "Examples:\n"
	    "  flamesidecar map 3f2a9c\n"
	    "  flamesidecar map 3f2a9c --pid 41236 --mode jcmd\n"
	    "  flamesidecar map 3f2a9c --mode vmstructs   # JVM with attach disabled\n"
	    "  flamesidecar map 3f2a9c --continuous\n"
	    "  flamesidecar map 3f2a9c && perf record -g -p 41236 -- sleep 10 && perf report\n\n"
	    "Exit codes: 0 every JVM mapped, 1 one failed, 2 usage, 3 container or JVM not\n"
	    "found, 4 not permitted (run as root).\n",
	    MAP_AGENT_NAME, MAP_DEFAULT_TIMEOUT_MS);
}

int cmd_map(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"pid", required_argument, NULL, 'p'},  {"mode", required_argument, NULL, 'm'},
	    {"continuous", no_argument, NULL, 'c'}, {"timeout", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},	    {NULL, 0, NULL, 0},
	};
	struct map_opts o = {
	    .mode = MAP_MODE_AUTO, .timeout_ms = MAP_DEFAULT_TIMEOUT_MS, .write_host = 1};
	pid_t only = 0;
	int c;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:m:ct:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > INT32_MAX)
				return cli_usage_error("map", "--pid '%s' is not a pid", optarg);
			only = (pid_t)v;
			break;
		}
		case 'm':
			if (common_parse_map_mode("map", "--mode", optarg, &o.mode) < 0)
				return FS_EXIT_USAGE;
			break;
		case 'c': o.continuous = 1; break;
		case 't': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !v || v > 600000 || optarg[0] == '-')
				return cli_usage_error(
				    "map", "--timeout takes milliseconds (1..600000), not '%s'",
				    optarg);
			o.timeout_ms = (unsigned)v;
			break;
		}
		case 'h': map_usage(stdout); return FS_EXIT_OK;
		default: map_usage(stderr); return FS_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("map", "expected one container id");
	if (o.continuous && (o.mode == MAP_MODE_JCMD || o.mode == MAP_MODE_VMSTRUCTS))
		return cli_usage_error("map", "--continuous needs the agent, not --mode %s",
				       map_mode_name(o.mode));
	struct fs_config cfg;
	struct registry_entry e;
	int rc = common_open_container("map", "it joins the container's mount namespace",
				       argv[optind], &cfg, &e);
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
	if (only) {
		pids = malloc(sizeof(*pids));
		if (!pids)
			return cli_failf("map", FS_EXIT_FAIL, "out of memory");
		pids[0] = only;
		n = 1;
	} else if (map_find_jvms(&e, &pids, &n, &err) < 0) {
		return cli_fail("map", &err);
	}
	if (n == 0)
		return cli_failf("map", FS_EXIT_NOTFOUND,
				 "no JVM found in container %s (no process in its pid namespace "
				 "maps libjvm.so)",
				 e.id);

	int exit_code = FS_EXIT_OK;
	printf("%-8s %-7s %-6s %-5s %8s %9s  %s\n", "HOST_PID", "NS_PID", "UID", "MODE", "ENTRIES",
	       "TIME_MS", "MAP");
	fflush(stdout);
	for (size_t i = 0; i < n; i++) {
		struct map_result res;
		fs_error_clear(&err);
		int r = map_jvm(&e, pids[i], &o, NULL, &res, &err);
		if (r < 0) {
			int code = cli_fail("map", &err);
			if (o.mode != MAP_MODE_VMSTRUCTS && r != -ESRCH && r != -ENOEXEC)
				cli_warn("map",
					 "--mode vmstructs maps a JVM without attaching to it");
			if (exit_code == FS_EXIT_OK)
				exit_code = code;
			continue;
		}
		if (res.cut[0])
			fprintf(stderr,
				"flamesidecar map: pid %d: code cache walk stopped at its %s "
				"(VMStructs): code past it is not in the map\n",
				(int)res.host_pid, res.cut);
		printf("%-8d %-7d %-6u %-5s %8zu %9.1f  %s/perf-%d.map\n", (int)res.host_pid,
		       (int)res.ns_pid, (unsigned)res.uid, map_mode_name(res.mode), res.entries,
		       (double)res.elapsed_us / 1000.0, o.host_tmp ? o.host_tmp : "/tmp",
		       (int)res.host_pid);
		fflush(stdout);
	}
	return exit_code;
}

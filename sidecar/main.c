/* main.c - flamesidecar: dispatch to the verbs (one file per verb). */
#include "cli.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct verb {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
	int takes_container; /* accepts --pod NAME [--namespace NS] [--container NAME] */
};

static const struct verb verbs[] = {
    {"run", cmd_run, "profile a registered container and write a flame graph", 1},
    {"top", cmd_top, "live view of the hottest frames in a container", 1},
    {"map", cmd_map, "write /tmp/perf-<host pid>.map for the JVMs in a container", 1},
    {"list", cmd_list, "list registered containers (and profiles)", 0},
    {"gc", cmd_gc, "remove registry entries whose process is gone", 0},
    {"collapse", cmd_collapse, "perf script text -> folded stacks (stackcollapse-perf.pl)", 0},
    {"render", cmd_render, "folded stacks -> interactive SVG flame graph", 0},
    {"diff", cmd_diff, "two folded profiles -> differential flame graph", 0},
    {"convert", cmd_convert, "folded stacks -> pprof and speedscope profiles", 0},
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: flamesidecar [--config FILE] VERB [OPTIONS]\n\n"
		"CPU flame graphs of JVMs and other processes in containers, from the host.\n\n"
		"Verbs:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(out, "  %-9s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(out, "\nGlobal options:\n"
		     "  --config FILE  host configuration (default /etc/flamesidecar/config.json,\n"
		     "                 or $FLAMESIDECAR_CONFIG)\n"
		     "  --version      print the version\n"
		     "  -h, --help     this text; `flamesidecar VERB --help` for a verb\n\n"
		     "A container (run, top, map) is its id, a unique id prefix, the name its\n"
		     "engine gave it (docker/podman ps), or --pod NAME [--namespace NS]\n"
		     "[--container NAME] for a Kubernetes pod.\n\n"
		     "Examples:\n"
		     "  flamesidecar list\n"
		     "  flamesidecar run 3f2a9c -d 30s -o profile.svg\n"
		     "  flamesidecar run --pod checkout-7d9f --namespace shop -d 30s\n"
		     "  perf script | flamesidecar collapse | flamesidecar render > out.svg\n\n"
		     "Exit codes: 0 ok, 1 failed, 2 usage, 3 not found, 4 not permitted.\n");
}

int main(int argc, char **argv)
{
	int i = 1;
	cli_config_path = getenv("FLAMESIDECAR_CONFIG");
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--version")) {
			printf("flamesidecar %s\n", FS_VERSION);
			return FS_EXIT_OK;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return FS_EXIT_OK;
		} else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			cli_config_path = argv[++i];
		} else if (!strncmp(argv[i], "--config=", 9)) {
			cli_config_path = argv[i] + 9;
		} else {
			fprintf(stderr, "flamesidecar: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return FS_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return FS_EXIT_USAGE;
	}
	for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++) {
		if (strcmp(argv[i], verbs[v].name))
			continue;
		if (!verbs[v].fn) {
			fprintf(stderr, "flamesidecar: '%s' is not available in this build\n",
				argv[i]);
			return FS_EXIT_FAIL;
		}
		int vargc = argc - i;
		if (verbs[v].takes_container) {
			int rc = common_take_target(argv[i], &vargc, argv + i);
			if (rc)
				return rc;
		}
		return verbs[v].fn(vargc, argv + i);
	}
	fprintf(stderr, "flamesidecar: unknown verb '%s' (see flamesidecar --help)\n", argv[i]);
	return FS_EXIT_USAGE;
}

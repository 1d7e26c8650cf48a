/* main.c - flamesidecar: dispatch to the verbs (one file per verb). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct verb {
	int (*fn)(int, char **);
	const struct opt_verb *opts; /* its name, summary and options */
};

static const struct verb verbs[] = {
    {cmd_run, &cmd_run_opts},	    {cmd_top, &cmd_top_opts},	{cmd_map, &cmd_map_opts},
    {cmd_list, &cmd_list_opts},	    {cmd_gc, &cmd_gc_opts},	{cmd_collapse, &cmd_collapse_opts},
    {cmd_render, &cmd_render_opts}, {cmd_diff, &cmd_diff_opts}, {cmd_convert, &cmd_convert_opts},
};

static const struct verb *find_verb(const char *name)
{
	for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (!strcmp(name, verbs[v].opts->name))
			return &verbs[v];
	return NULL;
}

/* --print-man-options VERB: the OPTIONS of the verb's section of
 * docs/man/flamesidecar.1, from its table (tests/integration/cli.bats
 * checks that the page holds exactly this). */
static int print_man_options(const char *name)
{
	const struct verb *v = name ? find_verb(name) : NULL;
	if (!v) {
		fprintf(stderr, "flamesidecar: --print-man-options takes a verb\n");
		return FS_EXIT_USAGE;
	}
	opt_man(v->opts, stdout);
	return FS_EXIT_OK;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: flamesidecar [--config FILE] VERB [OPTIONS]\n\n"
		"CPU flame graphs of JVMs and other processes in containers, from the host.\n\n"
		"Verbs:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(out, "  %-9s %s\n", verbs[i].opts->name, verbs[i].opts->summary);
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
		} else if (!strcmp(argv[i], "--print-man-options")) {
			return print_man_options(i + 1 < argc ? argv[i + 1] : NULL);
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
	const struct verb *v = find_verb(argv[i]);
	if (v)
		return v->fn(argc - i, argv + i);
	fprintf(stderr, "flamesidecar: unknown verb '%s' (see flamesidecar --help)\n", argv[i]);
	return FS_EXIT_USAGE;
}

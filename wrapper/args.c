/* args.c - find the verb, the bundle and the runtime's log in a runc (or
 * crun) command line, without changing it.
 *
 * runc parses options with Go's flag package (via urfave/cli): "-opt" and
 * "--opt" are the same, a value follows as the next argument or after "=",
 * boolean options never take the next argument, and parsing stops at the
 * first argument that is not an option. crun (argp) accepts the same
 * forms for the options engines use. */
#include <stdbool.h>
#include <string.h>

#include "cleanup.h"
#include "wrapper.h"

struct args_opt {
	const char *name;
	bool has_value;
};

/* Global options of runc 1.1 and crun 1.x, before the verb. */
static const struct args_opt args_global[] = {
    {"root", true},
    {"log", true},
    {"log-format", true},
    {"log-level", true},
    {"criu", true},
    {"rootless", true},
    {"cgroup-manager", true},
    {"debug", false},
    {"systemd-cgroup", false},
    {"help", false},
    {"h", false},
    {"version", false},
    {"v", false},
    {"V", false},
};

/* Options of `create` and `run`. */
static const struct args_opt args_create[] = {
    {"bundle", true},	      {"b", true},
    {"console-socket", true}, {"pid-file", true},
    {"preserve-fds", true},   {"pidfd-socket", true},
    {"no-pivot", false},      {"no-new-keyring", false},
    {"detach", false},	      {"d", false},
    {"keep", false},	      {"no-subreaper", false},
    {"help", false},	      {"h", false},
};

/* Options of `delete` (runc 1.1, crun 1.x). */
static const struct args_opt args_delete[] = {
    {"force", false},
    {"f", false},
    {"help", false},
    {"h", false},
};

/* A boolean option's value, as Go's strconv.ParseBool reads it ("-d" alone
 * is true); anything it would reject counts as true, as it is not false. */
static bool args_bool(const char *value)
{
	static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
	for (size_t i = 0; value && i < FS_ARRAY_SIZE(no); i++)
		if (!strcmp(value, no[i]))
			return false;
	return true;
}

/* Split "-name", "--name" or "--name=value". Returns false for "-", "--"
 * and non-options. */
static bool args_split(const char *arg, const char **name, size_t *name_len, const char **value)
{
	if (arg[0] != '-' || !arg[1])
		return false;
	const char *n = arg + 1;
	if (*n == '-')
		n++;
	if (!*n)
		return false; /* "--" */
	const char *eq = strchr(n, '=');
	*name = n;
	*name_len = eq ? (size_t)(eq - n) : strlen(n);
	*value = eq ? eq + 1 : NULL;
	return true;
}

static const struct args_opt *args_lookup(const struct args_opt *tab, size_t n, const char *name,
					  size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(tab[i].name) == len && !strncmp(tab[i].name, name, len))
			return &tab[i];
	return NULL;
}

/* Walk options from *i; call back for each known option with a value.
 * Leaves *i at the first non-option (after a "--"). */
static void args_walk(int argc, char **argv, int *i, const struct args_opt *tab, size_t n,
		      struct wrapper_args *a, bool global)
{
	while (*i < argc) {
		const char *arg = argv[*i];
		const char *name, *value;
		size_t len;
		if (!strcmp(arg, "--")) {
			(*i)++;
			return;
		}
		if (!args_split(arg, &name, &len, &value))
			return;
		(*i)++;
		const struct args_opt *o = args_lookup(tab, n, name, len);
		if (!o) {
			/* Unknown: assume a boolean (we cannot know). */
			a->unknown_option = 1;
			continue;
		}
		if (!global && (!strcmp(o->name, "detach") || !strcmp(o->name, "d")))
			a->detach = args_bool(value);
		if (o->has_value && !value) {
			if (*i >= argc)
				return;
			value = argv[(*i)++];
		}
		if (!value)
			continue;
		if (global) {
			if (!strcmp(o->name, "log"))
				a->log = value;
			else if (!strcmp(o->name, "log-format"))
				a->log_json = !strcmp(value, "json");
		} else if (!strcmp(o->name, "bundle") || !strcmp(o->name, "b")) {
			a->bundle = value;
		}
	}
}

void args_parse(int argc, char **argv, struct wrapper_args *a)
{
	memset(a, 0, sizeof(*a));
	int i = 1;
	args_walk(argc, argv, &i, args_global, FS_ARRAY_SIZE(args_global), a, true);
	if (i >= argc)
		return;
	a->verb_index = i;
	if (!strcmp(argv[i], "create"))
		a->verb = WRAPPER_VERB_CREATE;
	else if (!strcmp(argv[i], "run"))
		a->verb = WRAPPER_VERB_RUN;
	else if (!strcmp(argv[i], "delete"))
		a->verb = WRAPPER_VERB_DELETE;
	else
		return;
	i++;
	if (a->verb == WRAPPER_VERB_DELETE)
		args_walk(argc, argv, &i, args_delete, FS_ARRAY_SIZE(args_delete), a, false);
	else
		args_walk(argc, argv, &i, args_create, FS_ARRAY_SIZE(args_create), a, false);
	if (i < argc)
		a->id = argv[i];
	/* delete takes one id; more (a newer runtime's form) is not ours to
	 * guess: unregister nothing. */
	if (a->verb == WRAPPER_VERB_DELETE && i + 1 < argc)
		a->unknown_option = 1;
}

int wrapper_take_opt_in(int *argc, char **argv)
{
	int taken = 0;
	while (*argc > 1 && !strcmp(argv[1], WRAPPER_OPT_IN)) {
		memmove(argv + 1, argv + 2, (size_t)(*argc - 1) * sizeof(*argv));
		(*argc)--;
		taken = 1;
	}
	return taken;
}

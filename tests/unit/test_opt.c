/* test_opt.c - option tables (sidecar/opt.c): each kind of value stored
 * and checked, the messages of a bad command line, groups at offsets,
 * needs and check rules, --help and the man page's list from the table. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "opt.h"
#include "tap.h"

struct grp {
	const char *where;
	int loud;
};

struct args {
	unsigned long long ms;
	unsigned n;
	pid_t pid;
	int mode;
	int flag;
	bool b;
	const char *name;
	int calls;
	struct grp g; /* a group at an offset */
};

static int set_call(void *args, const char *arg, struct fs_error *err)
{
	struct args *a = args;
	if (!strcmp(arg, "bad"))
		return fs_error_set(err, 0, "--call takes anything but 'bad'");
	a->calls++;
	return 0;
}

static const struct opt_choice modes[] = {{"one", 1}, {"two", 2}, {"three", 3}, {0}};

static const struct opt main_opts[] = {
    {.name = "duration",
     .key = 'd',
     .arg = "TIME",
     .help = "how long ({lo} to {hi})",
     .kind = OPT_DURATION,
     .off = offsetof(struct args, ms),
     .lo = 10,
     .hi = 3600000},
    {.name = "count",
     .key = 'n',
     .arg = "N",
     .help = "how many",
     .kind = OPT_UINT,
     .off = offsetof(struct args, n),
     .lo = 2,
     .hi = 9},
    {.name = "pid",
     .arg = "PID",
     .help = "a pid",
     .kind = OPT_PID,
     .off = offsetof(struct args, pid)},
    {.name = "mode",
     .arg = "MODE",
     .help = "one, two or three",
     .kind = OPT_ENUM,
     .off = offsetof(struct args, mode),
     .choices = modes},
    {.name = "flag",
     .key = 'f',
     .help = "a flag",
     .kind = OPT_FLAG,
     .off = offsetof(struct args, flag)},
    {.name = "bool", .help = "a bool", .kind = OPT_BOOL, .off = offsetof(struct args, b)},
    {.name = "name",
     .arg = "NAME",
     .help = "a name that needs --where",
     .kind = OPT_STRING,
     .off = offsetof(struct args, name),
     .needs = "where"},
    {.name = "call", .arg = "X", .help = "a setter", .kind = OPT_CALL, .set = set_call},
    {.name = "alias",
     .help = "hidden",
     .kind = OPT_FLAG,
     .off = offsetof(struct args, flag),
     .flags = OPT_HIDDEN},
};
static const struct opt grp_opts[] = {
    {.name = "where",
     .arg = "PLACE",
     .help = "where-to",
     .kind = OPT_STRING,
     .off = offsetof(struct grp, where)},
    {.name = "loud",
     .help = "a very long help text that has to be wrapped over more than one line of the "
	     "help because it goes on and on, - and .dots",
     .more = ".starts with a dot",
     .kind = OPT_FLAG,
     .off = offsetof(struct grp, loud)},
};
static const struct opt_group main_group = OPT_GROUP(NULL, main_opts);
static const struct opt_group grp_group = OPT_GROUP("Group options", grp_opts);
static const struct opt_use uses[] = {{&main_group, 0}, {&grp_group, offsetof(struct args, g)}};

static int check_rule(void *args, struct fs_error *err)
{
	const struct args *a = args;
	if (a->flag && a->b)
		return fs_error_set(err, 0, "--flag and --bool: give one of them");
	return 0;
}

static const struct opt_verb verb = {
    .name = "t",
    .summary = "a test verb",
    .synopsis = "[OPTIONS] ARG",
    .intro = "Intro.\n",
    .outro = "Examples:\n  t x\n",
    .uses = OPT_USES(uses),
    .check = check_rule,
};

/* Parse a NULL-terminated list of words (after the verb). */
static int parse(struct args *a, struct fs_error *err, int *first, ...)
{
	char *argv[32] = {"t"};
	int argc = 1;
	va_list ap;
	va_start(ap, first);
	for (char *w; (w = va_arg(ap, char *)) && argc < 31;)
		argv[argc++] = w;
	va_end(ap);
	argv[argc] = NULL;
	memset(a, 0, sizeof(*a));
	fs_error_clear(err);
	return opt_parse(&verb, argc, argv, a, first, err);
}

static void test_values(void)
{
	struct args a;
	struct fs_error err;
	int first = 0;
	int r = parse(&a, &err, &first, "-d", "2s", "--count=5", "--pid", "42", "--mode", "two",
		      "-f", "--where", "here", "--loud", "operand", "--call", "x", NULL);
	is_int(r, 0, "a good command line parses");
	is_int(a.ms, 2000, "-d 2s is 2000 ms");
	is_int(a.n, 5, "--count=5");
	is_int(a.pid, 42, "--pid 42");
	is_int(a.mode, 2, "--mode two is its value");
	ok(a.flag == 1 && !a.b, "-f sets the int flag, not the bool");
	ok(a.g.where && !strcmp(a.g.where, "here") && a.g.loud == 1,
	   "the group's options land at its offset");
	is_int(a.calls, 1, "--call ran its setter");
	is_int(first, 14, "the operand is left last, after the options (getopt permutes)");
}

static void test_errors(void)
{
	struct args a;
	struct fs_error err;
	int first;
	static const struct {
		const char *w[4];
		const char *msg;
	} cases[] = {
	    {{"-d", "5ms"},
	     "--duration takes a time from 10ms to 1h such as 30s, 500ms, 2m; not '5ms'"},
	    {{"-d", "soon"},
	     "--duration takes a time from 10ms to 1h such as 30s, 500ms, 2m; not 'soon'"},
	    {{"-n", "10"}, "--count takes a number from 2 to 9, not '10'"},
	    {{"-n", "-3"}, "--count takes a number from 2 to 9, not '-3'"},
	    {{"-n", "3x"}, "--count takes a number from 2 to 9, not '3x'"},
	    {{"--pid", "0"}, "--pid takes a pid (1 to 2147483647), not '0'"},
	    {{"--mode", "four"}, "--mode takes one, two or three; not 'four'"},
	    {{"--bogus"}, "unknown option '--bogus'"},
	    {{"-z"}, "unknown option '-z'"},
	    {{"-d"}, "--duration needs a value (TIME)"},
	    {{"--count"}, "--count needs a value (N)"},
	    {{"--flag=1"}, "--flag takes no value"},
	    {{"--c", "1"}, "ambiguous option '--c' (2 options begin with it)"},
	    {{"--call", "bad"}, "--call takes anything but 'bad'"},
	    {{"--name", "x"}, "--name without --where: --name needs --where PLACE"},
	    {{"-f", "--bool"}, "--flag and --bool: give one of them"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = parse(&a, &err, &first, cases[i].w[0], cases[i].w[1], cases[i].w[2], NULL);
		ok(r == -EINVAL && !strcmp(err.msg, cases[i].msg), "%s %s: -EINVAL, \"%s\"",
		   cases[i].w[0], cases[i].w[1] ? cases[i].w[1] : "", cases[i].msg);
		if (strcmp(err.msg, cases[i].msg))
			tap_diag("got \"%s\" (%d)", err.msg, r);
	}
	is_int(parse(&a, &err, &first, "--count", "3", "--help", "--bogus", NULL), 1,
	       "--help: 1, nothing after it checked");
	is_int(parse(&a, &err, &first, "--alias", NULL), 0, "a hidden option still parses");
}

/* What fn printed to a temporary file. */
static char *output_of(void (*fn)(const struct opt_verb *, FILE *))
{
	static char buf[8192];
	FILE *f = tmpfile();
	if (!f)
		return strcpy(buf, "(no tmpfile)");
	fn(&verb, f);
	rewind(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_help_and_man(void)
{
	const char *h = output_of(opt_help);
	ok(!strncmp(h, "Usage: flamesidecar t [OPTIONS] ARG\n\nIntro.\n\nOptions:\n", 52),
	   "help: usage line, intro, Options:");
	ok(strstr(h, "\n  -d, --duration TIME  how long (10ms to 1h)\n") != NULL,
	   "help: short and long name, argument, {lo}/{hi} as durations, column 23");
	ok(strstr(h, "\n      --pid PID        a pid\n") != NULL, "help: a long-only option");
	ok(strstr(h, "\nGroup options:\n      --where PLACE    where-to\n") != NULL,
	   "help: a titled group");
	ok(strstr(
	       h,
	       "\n      --loud           a very long help text that has to be wrapped over more\n"
	       "                       than one line") != NULL,
	   "help: wrapped at 79 columns under column 23");
	ok(!strstr(h, "alias") && !strstr(h, "starts with a dot"),
	   "help: no hidden option, no man-only text");
	ok(strstr(h, "  -h, --help           this text\n\nExamples:\n  t x\n") != NULL,
	   "help: -h, --help, then the outro");
	const char *m = output_of(opt_man);
	ok(strstr(m, ".TP\n.BI \\-d \", \" \\-\\-duration \" time\"\nHow long (10ms to 1h).\n") !=
	       NULL,
	   "man: tag with the argument in italics, the help as a sentence");
	ok(strstr(m, ".TP\n.BR \\-f \", \" \\-\\-flag\nA flag.\n") != NULL,
	   "man: a flag with a letter");
	ok(strstr(m, ".PP\nGroup options:\n") != NULL, "man: the group's title");
	ok(strstr(m, "\\- and .dots") != NULL && strstr(m, ".IP\n\\&.starts with a dot\n") != NULL,
	   "man: dashes escaped, no line starts with a dot, more text as .IP");
	ok(!strstr(m, "alias") && !strstr(m, "\\-\\-help"), "man: no hidden option, no --help");
}

int main(void)
{
	tap_plan(9 + 16 + 2 + 12);
	test_values();
	test_errors();
	test_help_and_man();
	return tap_done();
}

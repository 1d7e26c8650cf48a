/* opt.h - one declarative option table per verb. Each option is written
 * once: its long name, short letter, argument name, help text, the kind of
 * value it takes (with the range or the names it accepts) and where the
 * value goes. From that one table come the getopt_long parse, the checks
 * of each value, the verb's --help and the OPTIONS of its man page
 * (`flamesidecar --print-man-options VERB`, checked against
 * docs/man/flamesidecar.1 by tests/integration/cli.bats).
 *
 * Options are grouped: a group is a table of options whose fields are at
 * offsets into one struct, and a verb lists the groups it takes with the
 * offset of that struct in its own arguments. run and top share the
 * profile session group (common.h) that way, the SVG verbs the drawing
 * group (render_cli.h).
 *
 * Nothing here prints except opt_help and opt_man, on the FILE given:
 * opt_parse reports a bad command line in err, naming the option, and the
 * verb prints it (cli_parse, cli.h). */
#ifndef FS_OPT_H
#define FS_OPT_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"

enum opt_kind {
	OPT_FLAG,     /* no argument; the int field is set to 1 */
	OPT_BOOL,     /* no argument; the bool field is set to true */
	OPT_STRING,   /* the const char * field points at the argument */
	OPT_UINT,     /* unsigned field, a whole number in [lo, hi] */
	OPT_PID,      /* pid_t field, 1 to INT32_MAX */
	OPT_DURATION, /* unsigned long long field, milliseconds: "30s", "500ms", in [lo, hi] ms */
	OPT_ENUM,     /* int-sized enum field (assert it), one of choices */
	OPT_CALL,     /* set() decides: anything the kinds above cannot say */
};

struct opt_choice {
	const char *name;
	int value;
};

struct opt {
	const char *name; /* long name, without the dashes */
	int key;	  /* short letter, or 0 */
	const char *arg;  /* argument name in the help ("TIME"); NULL: takes none */
	/* One paragraph: --help wraps it, the man page fills it. "{lo}" and
	 * "{hi}" in it stand for the range (OPT_UINT, OPT_DURATION). */
	const char *help;
	const char *more; /* optional: further paragraphs for the man page only */
	enum opt_kind kind;
	size_t off;			  /* of the field, in the group's struct */
	unsigned long long lo, hi;	  /* OPT_UINT, OPT_DURATION */
	const struct opt_choice *choices; /* OPT_ENUM, ending with a NULL name */
	/* OPT_CALL: set from arg (NULL when arg is NULL); 0 or -EINVAL with
	 * err->msg saying what the option takes. */
	int (*set)(void *group, const char *arg, struct fs_error *err);
	const char *needs; /* another option (long name) this one needs */
	unsigned flags;
};

/* A number in a help text: OPT_XSTR(MAP_DEFAULT_TIMEOUT_MS). */
#define OPT_STR(x)  #x
#define OPT_XSTR(x) OPT_STR(x)

#define OPT_HIDDEN 1u /* an alias: parsed, not in the help nor the man page */

struct opt_group {
	const char *title; /* NULL: listed under "Options:" */
	const struct opt *opts;
	size_t n;
};

#define OPT_GROUP(title, table)                                                                    \
	{                                                                                          \
		title, table, sizeof(table) / sizeof((table)[0])                                   \
	}

struct opt_use {
	const struct opt_group *group;
	size_t base; /* offset of the group's struct in the verb's arguments */
};

struct opt_verb {
	const char *name;     /* "run" */
	const char *summary;  /* one line, for `flamesidecar --help` */
	const char *synopsis; /* after "Usage: flamesidecar VERB " */
	const char *intro;    /* text between the usage line and the options */
	const char *outro;    /* text after them: notes, examples, exit codes */
	const struct opt_use *uses;
	size_t nuses;
	int long_only; /* single-dash long options too (-pid), as getopt_long_only */
	/* Rules between options, once all are parsed (NULL: none): 0 or
	 * -EINVAL with err->msg naming the options. */
	int (*check)(void *args, struct fs_error *err);
};

#define OPT_USES(table) table, sizeof(table) / sizeof((table)[0])

/* Parse argv[1..argc) (argv[0] is the verb) into args. Returns 0 with
 * *first the index of the first operand; 1 when --help was given (nothing
 * else checked); -EINVAL for a bad command line with err->msg naming the
 * option: unknown, missing or unexpected argument, a value out of its
 * range or not among its names, a needed option missing, v->check. */
int opt_parse(const struct opt_verb *v, int argc, char **argv, void *args, int *first,
	      struct fs_error *err);

/* The verb's --help: usage line, intro, the options with their help
 * wrapped at 80 columns (and -h, --help), outro. */
void opt_help(const struct opt_verb *v, FILE *out);

/* The man page's option list (.TP paragraphs) for the verb, groups with a
 * title under a .PP naming it. */
void opt_man(const struct opt_verb *v, FILE *out);

#endif

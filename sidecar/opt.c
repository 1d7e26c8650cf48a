/* opt.c - see opt.h: a verb's option table -> getopt_long, value checks,
 * --help and the man page's option list. */
#include "opt.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "timeutil.h"

#define OPT_MAX	     128    /* options of one verb, --help included */
#define OPT_LONG_VAL 0x1000 /* getopt_long's val for the option at index i: this + i */
#define OPT_HELP_COL 23	    /* where the help text starts in --help */
#define OPT_WIDTH    79

static const struct opt opt_help_opt = {
    .name = "help", .key = 'h', .help = "this text", .kind = OPT_FLAG};

/* The verb's options in order, each with the address of its group's struct
 * in args (NULL for --help). */
struct opt_flat {
	const struct opt *o;
	char *base;
	bool seen;
};

static size_t opt_flatten(const struct opt_verb *v, void *args, struct opt_flat *f)
{
	size_t n = 0;
	for (size_t u = 0; u < v->nuses; u++)
		for (size_t i = 0; i < v->uses[u].group->n && n < OPT_MAX - 1; i++)
			f[n++] = (struct opt_flat){.o = &v->uses[u].group->opts[i],
						   .base = (char *)args + v->uses[u].base};
	f[n++] = (struct opt_flat){.o = &opt_help_opt};
	return n;
}

/* "24h", "10ms": a range end as people write it. */
static void opt_format_ms(unsigned long long ms, char *buf, size_t len)
{
	if (ms && ms % 3600000 == 0)
		snprintf(buf, len, "%lluh", ms / 3600000);
	else if (ms && ms % 60000 == 0)
		snprintf(buf, len, "%llum", ms / 60000);
	else if (ms && ms % 1000 == 0)
		snprintf(buf, len, "%llus", ms / 1000);
	else
		snprintf(buf, len, "%llums", ms);
}

static int opt_parse_ull(const char *arg, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || arg[0] == '+' || arg[0] == ' ')
		return -EINVAL;
	*out = v;
	return 0;
}

static int opt_set_enum(const struct opt *o, char *field, const char *arg, struct fs_error *err)
{
	char names[256] = "";
	size_t len = 0;
	for (const struct opt_choice *c = o->choices; c->name; c++) {
		if (!strcmp(c->name, arg)) {
			*(int *)field = c->value;
			return 0;
		}
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
					c == o->choices ? ""
					: c[1].name	? ", "
							: " or ",
					c->name);
		if (len >= sizeof(names))
			len = sizeof(names) - 1;
	}
	return fs_error_set(err, 0, "--%s takes %s; not '%s'", o->name, names, arg);
}

/* Check arg by the option's kind and store it. 0 or -EINVAL with err. */
static int opt_set(const struct opt_flat *f, const char *arg, struct fs_error *err)
{
	const struct opt *o = f->o;
	char *field = f->base + o->off;
	unsigned long long v;
	char lo[32], hi[32];
	switch (o->kind) {
	case OPT_FLAG: *(int *)field = 1; return 0;
	case OPT_BOOL: *(bool *)field = true; return 0;
	case OPT_STRING: *(const char **)field = arg; return 0;
	case OPT_UINT:
		if (opt_parse_ull(arg, &v) < 0 || v < o->lo || v > o->hi)
			return fs_error_set(err, 0,
					    "--%s takes a number from %llu to %llu, not '%s'",
					    o->name, o->lo, o->hi, arg);
		*(unsigned *)field = (unsigned)v;
		return 0;
	case OPT_PID:
		if (opt_parse_ull(arg, &v) < 0 || v < 1 || v > INT32_MAX)
			return fs_error_set(err, 0, "--%s takes a pid (1 to %d), not '%s'", o->name,
					    INT32_MAX, arg);
		*(pid_t *)field = (pid_t)v;
		return 0;
	case OPT_DURATION:
		if (timeutil_parse_duration_ms(arg, &v) < 0 || v < o->lo || v > o->hi) {
			opt_format_ms(o->lo, lo, sizeof(lo));
			opt_format_ms(o->hi, hi, sizeof(hi));
			return fs_error_set(err, 0,
					    "--%s takes a time from %s to %s such as 30s, 500ms, "
					    "2m; not '%s'",
					    o->name, lo, hi, arg);
		}
		*(unsigned long long *)field = v;
		return 0;
	case OPT_ENUM: return opt_set_enum(o, field, arg, err);
	case OPT_CALL: return o->set(f->base, arg, err);
	}
	return fs_error_set(err, 0, "--%s: unknown option kind", o->name);
}

/* getopt's '?' and ':' as a sentence naming the option. */
static int opt_bad(int c, const struct opt_flat *f, size_t n, char **argv, struct fs_error *err)
{
	const struct opt *o = NULL;
	for (size_t i = 0; i < n && optopt; i++)
		if ((int)(OPT_LONG_VAL + i) == optopt || f[i].o->key == optopt)
			o = f[i].o;
	if (c == ':' && o)
		return fs_error_set(err, 0, "--%s needs a value (%s)", o->name, o->arg);
	if (o) /* '?' for a known option: a value given to a flag */
		return fs_error_set(err, 0, "--%s takes no value", o->name);
	if (optopt)
		return fs_error_set(err, 0, "unknown option '-%c'", optopt);
	const char *bad = argv[optind - 1], *name = bad + strspn(bad, "-");
	size_t len = strcspn(name, "="), matches = 0;
	for (size_t i = 0; i < n; i++)
		matches += len && !strncmp(f[i].o->name, name, len);
	if (matches > 1)
		return fs_error_set(err, 0, "ambiguous option '%s' (%zu options begin with it)",
				    bad, matches);
	return fs_error_set(err, 0, "unknown option '%s'", bad);
}

/* The getopt_long tables for f[0..n). */
static void opt_tables(const struct opt_flat *f, size_t n, struct option *lo, char *so)
{
	size_t k = 0;
	so[k++] = ':'; /* a missing value returns ':', not '?' */
	for (size_t i = 0; i < n; i++) {
		const struct opt *o = f[i].o;
		lo[i] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL,
					(int)(OPT_LONG_VAL + i)};
		if (o->key) {
			so[k++] = (char)o->key;
			if (o->arg)
				so[k++] = ':';
		}
	}
	lo[n] = (struct option){0};
	so[k] = '\0';
}

static struct opt_flat *opt_find(struct opt_flat *f, size_t n, int c)
{
	for (size_t i = 0; i < n; i++)
		if ((int)(OPT_LONG_VAL + i) == c || (f[i].o->key && f[i].o->key == c))
			return &f[i];
	return NULL;
}

/* "--namespace and --container": the options that need the option named
 * need, and how many. */
static size_t opt_needers(const struct opt_flat *f, size_t n, const char *need, char *buf,
			  size_t len)
{
	size_t k = 0, total = 0, used = 0;
	for (size_t i = 0; i < n; i++)
		total += f[i].o->needs && !strcmp(f[i].o->needs, need);
	for (size_t i = 0; i < n && used < len; i++) {
		if (!f[i].o->needs || strcmp(f[i].o->needs, need))
			continue;
		k++;
		used += (size_t)snprintf(buf + used, len - used, "%s--%s",
					 k == 1	      ? ""
					 : k == total ? " and "
						      : ", ",
					 f[i].o->name);
	}
	return total;
}

/* Options that need another one given too. */
static int opt_check_needs(const struct opt_flat *f, size_t n, struct fs_error *err)
{
	for (size_t i = 0; i < n; i++) {
		if (!f[i].seen || !f[i].o->needs)
			continue;
		const struct opt *need = NULL;
		bool ok = false;
		for (size_t j = 0; j < n; j++)
			if (!strcmp(f[j].o->name, f[i].o->needs)) {
				need = f[j].o;
				ok |= f[j].seen;
			}
		if (ok)
			continue;
		char who[256] = "";
		size_t k = opt_needers(f, n, f[i].o->needs, who, sizeof(who));
		return fs_error_set(err, 0, "--%s without --%s: %s need%s --%s%s%s", f[i].o->name,
				    f[i].o->needs, who, k == 1 ? "s" : "", f[i].o->needs,
				    need && need->arg ? " " : "",
				    need && need->arg ? need->arg : "");
	}
	return 0;
}

/* The getopt_long loop over f[0..n): 0, 1 for --help, or -EINVAL. */
static int opt_loop(const struct opt_verb *v, int argc, char **argv, struct opt_flat *f, size_t n,
		    struct fs_error *err)
{
	struct option lo[OPT_MAX + 1];
	char so[2 * OPT_MAX + 2];
	int c;
	opt_tables(f, n, lo, so);
	optind = 0; /* glibc: start afresh, also after a parse that stopped in "-abc" */
	while ((c = v->long_only ? getopt_long_only(argc, argv, so, lo, NULL)
				 : getopt_long(argc, argv, so, lo, NULL)) != -1) {
		struct opt_flat *o = opt_find(f, n, c);
		if (c == '?' || c == ':' || !o) {
			opt_bad(c, f, n, argv, err);
			return -EINVAL;
		}
		if (o->o == &opt_help_opt)
			return 1;
		o->seen = true;
		if (opt_set(o, optarg, err) < 0)
			return -EINVAL;
	}
	return 0;
}

int opt_parse(const struct opt_verb *v, int argc, char **argv, void *args, int *first,
	      struct fs_error *err)
{
	struct opt_flat f[OPT_MAX];
	size_t n = opt_flatten(v, args, f);
	int saved = opterr;
	opterr = 0; /* our messages, not getopt's */
	int r = opt_loop(v, argc, argv, f, n, err);
	opterr = saved;
	if (r)
		return r;
	*first = optind;
	if (opt_check_needs(f, n, err) < 0 || (v->check && v->check(args, err) < 0))
		return -EINVAL;
	return 0;
}

/* ---- --help ---------------------------------------------------------------- */

/* text, wrapped at OPT_WIDTH, each line but the first indented by col;
 * the first starts at column *at. A '\n' in text starts a new line. */
static void opt_wrap(FILE *out, const char *text, int col, int at)
{
	const char *p = text;
	while (*p) {
		size_t word = strcspn(p, " \n");
		if (at > col && at + 1 + (int)word > OPT_WIDTH) {
			fprintf(out, "\n%*s", col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', out);
			at++;
		}
		fprintf(out, "%.*s", (int)word, p);
		at += (int)word;
		p += word;
		if (*p == '\n') {
			fprintf(out, "\n%*s", col, "");
			at = col;
		}
		p += strspn(p, " \n") > 0 && *p ? 1 : 0;
	}
	fputc('\n', out);
}

/* text with {lo} and {hi} replaced by o's range. */
static const char *opt_expand(const struct opt *o, const char *text, char *buf, size_t len)
{
	size_t n = 0;
	char num[32];
	while (*text && n + 1 < len) {
		const char *hole = !strncmp(text, "{lo}", 4)   ? "lo"
				   : !strncmp(text, "{hi}", 4) ? "hi"
							       : NULL;
		if (!hole) {
			buf[n++] = *text++;
			continue;
		}
		unsigned long long v = hole[0] == 'l' ? o->lo : o->hi;
		if (o->kind == OPT_DURATION)
			opt_format_ms(v, num, sizeof(num));
		else
			snprintf(num, sizeof(num), "%llu", v);
		n += (size_t)snprintf(buf + n, len - n, "%s", num);
		if (n >= len)
			n = len - 1;
		text += 4;
	}
	buf[n] = '\0';
	return buf;
}

static void opt_help_line(FILE *out, const struct opt *o)
{
	char text[4096];
	char label[128];
	int l = snprintf(label, sizeof(label), "  %c%c%c --%s%s%s", o->key ? '-' : ' ',
			 o->key ? o->key : ' ', o->key ? ',' : ' ', o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	if (l + 1 < OPT_HELP_COL)
		fprintf(out, "%-*s", OPT_HELP_COL, label);
	else
		fprintf(out, "%s\n%*s", label, OPT_HELP_COL, "");
	opt_wrap(out, opt_expand(o, o->help, text, sizeof(text)), OPT_HELP_COL, OPT_HELP_COL);
}

void opt_help(const struct opt_verb *v, FILE *out)
{
	fprintf(out, "Usage: flamesidecar %s %s\n\n", v->name, v->synopsis);
	if (v->intro)
		fprintf(out, "%s\n", v->intro);
	for (size_t u = 0; u < v->nuses; u++) {
		const struct opt_group *g = v->uses[u].group;
		if (u == 0 || g->title)
			fprintf(out, "%s%s:\n", u ? "\n" : "", g->title ? g->title : "Options");
		for (size_t i = 0; i < g->n; i++)
			if (!(g->opts[i].flags & OPT_HIDDEN))
				opt_help_line(out, &g->opts[i]);
	}
	if (!v->nuses)
		fprintf(out, "Options:\n");
	opt_help_line(out, &opt_help_opt);
	if (v->outro)
		fprintf(out, "\n%s", v->outro);
}

/* ---- the man page ------------------------------------------------------------ */

/* roff text: '-' and '\' escaped, no line starting with '.' or '\''. A
 * '\n' in text starts a new paragraph (.IP) under the same tag. As a
 * sentence: the help's first letter in capitals, a full stop at its end. */
static void opt_man_text(FILE *out, const char *text, bool sentence)
{
	int col = 0;
	size_t len = strlen(text);
	for (const char *p = text; *p; p++) {
		if (sentence && p == text && *p >= 'a' && *p <= 'z') {
			fputc(*p - 'a' + 'A', out);
			col++;
			continue;
		}
		if (*p == '\n') {
			fputs("\n.IP\n", out);
			col = 0;
			continue;
		}
		if (*p == ' ' && col > 60) { /* short lines: diffs of the page stay readable */
			fputc('\n', out);
			col = 0;
			continue;
		}
		if (col == 0 && (*p == '.' || *p == '\''))
			fputs("\\&", out);
		if (*p == '-')
			fputs("\\-", out);
		else if (*p == '\\')
			fputs("\\e", out);
		else
			fputc(*p, out);
		col++;
	}
	if (sentence && len && text[len - 1] != '.')
		fputc('.', out);
	fputc('\n', out);
}

static void opt_man_dashed(FILE *out, const char *s)
{
	for (; *s; s++)
		fputs(*s == '-' ? "\\-" : (char[]){*s, 0}, out);
}

static void opt_man_tag(FILE *out, const struct opt *o)
{
	char arg[64];
	size_t i = 0;
	for (; o->arg && o->arg[i] && i < sizeof(arg) - 1; i++)
		arg[i] = (char)(o->arg[i] >= 'A' && o->arg[i] <= 'Z' ? o->arg[i] - 'A' + 'a'
								     : o->arg[i]);
	arg[i] = '\0';
	fputs(".TP\n", out);
	if (o->key)
		fprintf(out, "%s \\-%c \", \" \\-\\-", o->arg ? ".BI" : ".BR", o->key);
	else
		fprintf(out, "%s \\-\\-", o->arg ? ".BI" : ".B");
	opt_man_dashed(out, o->name);
	if (o->arg) {
		fputs(" \" ", out);
		opt_man_dashed(out, arg);
		fputc('"', out);
	}
	fputc('\n', out);
}

void opt_man(const struct opt_verb *v, FILE *out)
{
	for (size_t u = 0; u < v->nuses; u++) {
		const struct opt_group *g = v->uses[u].group;
		if (g->title)
			fprintf(out, ".PP\n%s:\n", g->title);
		for (size_t i = 0; i < g->n; i++) {
			const struct opt *o = &g->opts[i];
			if (o->flags & OPT_HIDDEN)
				continue;
			char text[4096];
			opt_man_tag(out, o);
			opt_man_text(out, opt_expand(o, o->help, text, sizeof(text)), true);
			if (o->more) {
				fputs(".IP\n", out);
				opt_man_text(out, opt_expand(o, o->more, text, sizeof(text)),
					     false);
			}
		}
	}
}

/* jvmopts.c - see jvmopts.h */
#include "jvmopts.h"

#include <string.h>

#include "cleanup.h"

const struct jvmopts_flag jvmopts_fp = {JVMOPTS_FP_ON, JVMOPTS_FP_OFF};
const struct jvmopts_flag jvmopts_dns = {JVMOPTS_DNS_ON, JVMOPTS_DNS_OFF};
const struct jvmopts_flag jvmopts_diag = {JVMOPTS_DIAG_ON, JVMOPTS_DIAG_OFF};

void jvmopts_flag_word(const struct jvmopts_flag *f, const char *w, size_t len, int *state)
{
	if (len == strlen(f->on) && !memcmp(w, f->on, len))
		*state = 1;
	else if (len == strlen(f->off) && !memcmp(w, f->off, len))
		*state = 0;
}

void jvmopts_word(const char *w, size_t len, int *state)
{
	jvmopts_flag_word(&jvmopts_fp, w, len, state);
}

/* White space as the JVM's isspace() sees it in the C locale. */
static bool jvmopts_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool jvmopts_text(const char *s, int *state)
{
	return jvmopts_flag_text(&jvmopts_fp, s, state);
}

bool jvmopts_flag_text(const struct jvmopts_flag *f, const char *s, int *state)
{
	/* The longest word that can matter is a flag itself; a longer one is
	 * only walked over. */
	char word[JVMOPTS_WORD_MAX + 1];
	while (s && *s) {
		while (jvmopts_space(*s))
			s++;
		if (!*s)
			break;
		size_t n = 0;
		bool long_word = false;
		while (*s && !jvmopts_space(*s)) {
			char quote = 0;
			if (*s == '\'' || *s == '"')
				quote = *s++;
			/* In quotes: everything up to the same quote, spaces too. */
			while (*s && (quote ? *s != quote
					    : !jvmopts_space(*s) && *s != '\'' && *s != '"')) {
				if (n < sizeof(word))
					word[n++] = *s;
				else
					long_word = true;
				s++;
			}
			if (quote) {
				if (!*s)
					return false;
				s++;
			}
		}
		if (!long_word)
			jvmopts_flag_word(f, word, n, state);
	}
	return true;
}

/* Launcher options whose value is the next argument. */
static bool jvmopts_takes_value(const char *a, size_t len)
{
	static const char *const opts[] = {
	    "-cp",
	    "-classpath",
	    "--class-path",
	    "--module-path",
	    "-p",
	    "--upgrade-module-path",
	    "--add-modules",
	    "--limit-modules",
	    "--add-exports",
	    "--add-opens",
	    "--add-reads",
	    "--patch-module",
	    "--enable-native-access",
	};
	for (size_t i = 0; i < FS_ARRAY_SIZE(opts); i++)
		if (strlen(opts[i]) == len && !memcmp(a, opts[i], len))
			return true;
	return false;
}

static bool jvmopts_is(const char *a, size_t len, const char *lit)
{
	return strlen(lit) == len && !memcmp(a, lit, len);
}

bool jvmopts_arg(struct jvmopts_args *it, const char *a, size_t len, int *state)
{
	return jvmopts_flag_arg(&jvmopts_fp, it, a, len, state);
}

bool jvmopts_flag_arg(const struct jvmopts_flag *f, struct jvmopts_args *it, const char *a,
		      size_t len, int *state)
{
	if (it->done)
		return false;
	if (it->n++ == 0 || it->skip) { /* the launcher, or an option's value */
		it->skip = false;
		return true;
	}
	if (!len || a[0] != '-' || jvmopts_is(a, len, "-jar") || jvmopts_is(a, len, "-m") ||
	    jvmopts_is(a, len, "--module")) {
		it->done = true;
		return false;
	}
	if (jvmopts_takes_value(a, len))
		it->skip = true;
	else
		jvmopts_flag_word(f, a, len, state);
	return true;
}

bool jvmopts_is_launcher(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strcmp(base, "java");
}

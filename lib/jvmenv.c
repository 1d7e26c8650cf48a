/* jvmenv.c - see jvmenv.h */
#include "jvmenv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "json.h"
#include "jvmopts.h"

/* The JVM options variables, in the order the JVM applies them. */
static const char *const jvmenv_names[] = {JVMOPTS_ENV_TOOL, JVMOPTS_ENV_JDK,
					   JVMOPTS_ENV_UNDERSCORE};
#define JVMENV_NAMES FS_ARRAY_SIZE(jvmenv_names)

/* The one member key of obj: NULL when absent, -EINVAL when repeated (the
 * engine and we could then read different values). */
static int jvmenv_member(yajl_val obj, const char *key, yajl_val *out, struct fs_error *err)
{
	*out = NULL;
	int n = 0;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (!strcmp(obj->u.object.keys[i], key)) {
			*out = obj->u.object.values[i];
			n++;
		}
	if (n > 1)
		return fs_error_set(err, EINVAL, "\"%s\" appears %d times", key, n);
	if (*out && YAJL_IS_NULL(*out))
		*out = NULL;
	return 0;
}

struct jvmenv_vars {
	const char *value[JVMENV_NAMES];
	size_t index[JVMENV_NAMES];
};

/* Check every env entry and find the JVM's variables in it. */
static int jvmenv_scan_env(yajl_val env, struct jvmenv_vars *v, struct fs_error *err)
{
	for (size_t k = 0; k < JVMENV_NAMES; k++) {
		v->value[k] = NULL;
		v->index[k] = JVMENV_NO_INDEX;
	}
	if (!env)
		return 0;
	if (!YAJL_IS_ARRAY(env))
		return fs_error_set(err, EINVAL, "process.env is not an array");
	if (env->u.array.len > JVMENV_ENTRIES_MAX)
		return fs_error_set(err, E2BIG, "process.env has %zu entries (at most %d)",
				    env->u.array.len, JVMENV_ENTRIES_MAX);
	for (size_t i = 0; i < env->u.array.len; i++) {
		yajl_val e = env->u.array.values[i];
		if (!YAJL_IS_STRING(e))
			return fs_error_set(err, EINVAL, "process.env[%zu] is not a string", i);
		const char *s = YAJL_GET_STRING(e);
		const char *eq = strchr(s, '=');
		if (!eq || eq == s)
			return fs_error_set(err, EINVAL, "process.env[%zu] is not NAME=VALUE", i);
		for (size_t k = 0; k < JVMENV_NAMES; k++) {
			size_t nl = strlen(jvmenv_names[k]);
			if ((size_t)(eq - s) != nl || memcmp(s, jvmenv_names[k], nl))
				continue;
			if (v->value[k])
				return fs_error_set(
				    err, EINVAL, "process.env sets %s twice (entries %zu and %zu)",
				    jvmenv_names[k], v->index[k], i);
			if (strlen(eq + 1) > JVMENV_VALUE_MAX)
				return fs_error_set(err, E2BIG,
						    "process.env[%zu]: %s is longer than %d bytes",
						    i, jvmenv_names[k], JVMENV_VALUE_MAX);
			v->value[k] = eq + 1;
			v->index[k] = i;
		}
	}
	return 0;
}

/* What process.args say about flag f. A java launcher's arguments are read
 * as the launcher reads them; anything else (a shell, a start script) has
 * each argument read as option text, so `sh -c "java -XX:-Preserve..."`
 * counts. */
static int jvmenv_scan_args(const struct jvmopts_flag *f, yajl_val args, int *state,
			    struct fs_error *err)
{
	if (!args)
		return 0;
	if (!YAJL_IS_ARRAY(args))
		return fs_error_set(err, EINVAL, "process.args is not an array");
	for (size_t i = 0; i < args->u.array.len; i++)
		if (!YAJL_IS_STRING(args->u.array.values[i]))
			return fs_error_set(err, EINVAL, "process.args[%zu] is not a string", i);
	if (!args->u.array.len)
		return 0;
	bool launcher = jvmopts_is_launcher(YAJL_GET_STRING(args->u.array.values[0]));
	struct jvmopts_args it = {0};
	for (size_t i = 0; i < args->u.array.len; i++) {
		const char *a = YAJL_GET_STRING(args->u.array.values[i]);
		if (!launcher)
			jvmopts_flag_text(f, a,
					  state); /* shell quoting differs: no verdict on quotes */
		else if (!jvmopts_flag_arg(f, &it, a, strlen(a), state))
			break;
	}
	return 0;
}

/* One source in the JVM's order: the last that says something wins. */
static void jvmenv_apply(int said, const char *source, int *state, const char **from)
{
	if (said < 0)
		return;
	*state = said;
	*from = source;
}

/* What every source says about flag f, in the JVM's order: *state -1, 0
 * or 1 and *from the source that decided. */
static int jvmenv_flag_state(const struct jvmopts_flag *f, yajl_val args,
			     const struct jvmenv_vars *v, int *state, const char **from,
			     struct fs_error *err)
{
	int said = -1, r;
	*state = -1;
	*from = NULL;
	if (!jvmopts_flag_text(f, v->value[0], &said))
		return fs_error_set(err, EINVAL,
				    "%s has a quote that is not closed (the JVM would refuse it)",
				    JVMOPTS_ENV_TOOL);
	jvmenv_apply(said, JVMOPTS_ENV_TOOL, state, from);
	said = -1;
	jvmopts_flag_text(f, v->value[1], &said);
	jvmenv_apply(said, JVMOPTS_ENV_JDK, state, from);
	said = -1;
	if ((r = jvmenv_scan_args(f, args, &said, err)) < 0)
		return r;
	jvmenv_apply(said, "process.args", state, from);
	said = -1;
	jvmopts_flag_text(f, v->value[2], &said);
	jvmenv_apply(said, JVMOPTS_ENV_UNDERSCORE, state, from);
	return 0;
}

static enum jvmenv_verdict jvmenv_verdict_of(int state)
{
	return state == 1 ? JVMENV_ALREADY_ON : state == 0 ? JVMENV_USER_OFF : JVMENV_ADD;
}

static int jvmenv_decide(yajl_val root, yajl_val process, const struct jvmenv_want *w,
			 const struct jvmenv_vars *v, struct jvmenv_plan *p, struct fs_error *err)
{
	yajl_val args;
	int r = jvmenv_member(process, "args", &args, err);
	if (r < 0)
		return fs_error_wrap(err, "process");
	int state;
	const char *from;
	p->verdict = p->dns_verdict = JVMENV_NOT_ASKED;
	if (w->fp) {
		if ((r = jvmenv_flag_state(&jvmopts_fp, args, v, &state, &from, err)) < 0)
			return r;
		p->source = from;
		p->verdict = jvmenv_verdict_of(state);
	}
	if (!w->dns)
		return 0;
	const char *ann =
	    json_get_string(json_get_object(root, "annotations"), JVMENV_DNS_ANNOTATION);
	if (ann && !strcmp(ann, "false")) {
		p->dns_verdict = JVMENV_USER_OFF;
		p->dns_source = "the annotation " JVMENV_DNS_ANNOTATION "=false";
		return 0;
	}
	if ((r = jvmenv_flag_state(&jvmopts_dns, args, v, &state, &from, err)) < 0)
		return r;
	p->dns_source = from;
	p->dns_verdict = jvmenv_verdict_of(state);
	if (p->dns_verdict != JVMENV_ADD)
		return 0;
	/* A diagnostic flag is refused by a JVM whose options lock them again. */
	if ((r = jvmenv_flag_state(&jvmopts_diag, args, v, &state, &from, err)) < 0)
		return r;
	if (state == 0) {
		p->dns_verdict = JVMENV_USER_OFF;
		p->dns_source = from;
	}
	return 0;
}

int jvmenv_plan(yajl_val root, struct jvmenv_plan *p, struct fs_error *err)
{
	const struct jvmenv_want fp_only = {.fp = true};
	return jvmenv_plan_want(root, &fp_only, p, err);
}

int jvmenv_plan_want(yajl_val root, const struct jvmenv_want *w, struct jvmenv_plan *p,
		     struct fs_error *err)
{
	memset(p, 0, sizeof(*p));
	p->verdict = JVMENV_NO_PROCESS;
	p->dns_verdict = w->dns ? JVMENV_NO_PROCESS : JVMENV_NOT_ASKED;
	p->tool_index = JVMENV_NO_INDEX;
	if (!YAJL_IS_OBJECT(root))
		return fs_error_set(err, EINVAL, "the config is not an object");
	yajl_val process, env;
	int r = jvmenv_member(root, "process", &process, err);
	if (r < 0)
		return r;
	if (!process)
		return 0;
	if (!YAJL_IS_OBJECT(process))
		return fs_error_set(err, EINVAL, "\"process\" is not an object");
	const char *ann = json_get_string(json_get_object(root, "annotations"), JVMENV_ANNOTATION);
	if (ann && !strcmp(ann, "false")) {
		p->verdict = JVMENV_USER_OFF;
		p->source = "the annotation " JVMENV_ANNOTATION "=false";
		if (w->dns) { /* the container keeps its environment */
			p->dns_verdict = JVMENV_USER_OFF;
			p->dns_source = p->source;
		}
		return 0;
	}
	if ((r = jvmenv_member(process, "env", &env, err)) < 0)
		return fs_error_wrap(err, "process");
	struct jvmenv_vars v;
	if ((r = jvmenv_scan_env(env, &v, err)) < 0 ||
	    (r = jvmenv_decide(root, process, w, &v, p, err)) < 0)
		return r;
	p->process = process;
	p->tool_index = v.index[0];
	bool fp = p->verdict == JVMENV_ADD, dns = p->dns_verdict == JVMENV_ADD;
	if (!fp && !dns)
		return 0;
	const char *old = v.value[0] ? v.value[0] : "";
	/* One space between the old options and ours, none before the first. */
	const char *sep = *old ? " " : "";
	if (asprintf(&p->entry, "%s=%s%s%s%s%s", JVMOPTS_ENV_TOOL, old, sep,
		     fp ? JVMOPTS_FP_ON : "", fp && dns ? " " : "",
		     dns ? JVMOPTS_DNS_ADD : "") < 0) {
		p->entry = NULL;
		return fs_error_set(err, ENOMEM, "the new %s", JVMOPTS_ENV_TOOL);
	}
	return 0;
}

void jvmenv_plan_free(struct jvmenv_plan *p)
{
	free(p->entry);
	p->entry = NULL;
}

static void jvmenv_write_env(FILE *f, yajl_val env, const struct jvmenv_plan *p)
{
	size_t n = env && YAJL_IS_ARRAY(env) ? env->u.array.len : 0;
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		if (i == p->tool_index)
			json_write_string(f, p->entry);
		else
			json_write_value(f, env->u.array.values[i]);
	}
	if (p->tool_index == JVMENV_NO_INDEX) {
		if (n)
			fputc(',', f);
		json_write_string(f, p->entry);
	}
	fputc(']', f);
}

void jvmenv_write_process(FILE *f, const struct jvmenv_plan *p)
{
	yajl_val proc = p->process;
	bool wrote_env = false;
	fputc('{', f);
	for (size_t i = 0; i < proc->u.object.len; i++) {
		if (i)
			fputc(',', f);
		json_write_string(f, proc->u.object.keys[i]);
		fputc(':', f);
		if (!strcmp(proc->u.object.keys[i], "env")) {
			jvmenv_write_env(f, proc->u.object.values[i], p);
			wrote_env = true;
		} else {
			json_write_value(f, proc->u.object.values[i]);
		}
	}
	if (!wrote_env) {
		if (proc->u.object.len)
			fputc(',', f);
		fputs("\"env\":", f);
		jvmenv_write_env(f, NULL, p);
	}
	fputc('}', f);
}

void jvmenv_write_config(FILE *f, yajl_val root, const struct jvmenv_plan *p)
{
	fputc('{', f);
	for (size_t i = 0; i < root->u.object.len; i++) {
		if (i)
			fputc(',', f);
		json_write_string(f, root->u.object.keys[i]);
		fputc(':', f);
		if (root->u.object.values[i] == p->process && p->entry)
			jvmenv_write_process(f, p);
		else
			json_write_value(f, root->u.object.values[i]);
	}
	fputs("}\n", f);
}

static void jvmenv_describe_fp(const struct jvmenv_plan *p, char *buf, size_t len)
{
	switch (p->verdict) {
	case JVMENV_ADD:
		snprintf(buf, len, "%s %s %s",
			 p->tool_index == JVMENV_NO_INDEX ? "set" : "appended", JVMOPTS_FP_ON,
			 p->tool_index == JVMENV_NO_INDEX ? "as JAVA_TOOL_OPTIONS"
							  : "to JAVA_TOOL_OPTIONS");
		break;
	case JVMENV_ALREADY_ON:
		snprintf(buf, len, "JAVA_TOOL_OPTIONS left alone: %s already says %s", p->source,
			 JVMOPTS_FP_ON);
		break;
	case JVMENV_USER_OFF:
		if (!strncmp(p->source, "the annotation", 14))
			snprintf(buf, len, "JAVA_TOOL_OPTIONS left alone: %s", p->source);
		else
			snprintf(buf, len, "JAVA_TOOL_OPTIONS left alone: %s says %s", p->source,
				 JVMOPTS_FP_OFF);
		break;
	case JVMENV_NO_PROCESS:
		snprintf(buf, len, "JAVA_TOOL_OPTIONS left alone: the config has no process");
		break;
	case JVMENV_NOT_ASKED: snprintf(buf, len, "no %s (not asked)", JVMOPTS_FP_ON); break;
	}
}

/* "; DebugNonSafepoints: ..." after the frame pointer's description. */
static void jvmenv_describe_dns(const struct jvmenv_plan *p, char *buf, size_t len)
{
	const char *what = "";
	switch (p->dns_verdict) {
	case JVMENV_ADD:
		snprintf(buf, len, "; %s %s", p->verdict == JVMENV_ADD ? "and" : "added",
			 JVMOPTS_DNS_ADD);
		return;
	case JVMENV_ALREADY_ON: what = "already says " JVMOPTS_DNS_ON; break;
	case JVMENV_USER_OFF: what = "turns it off"; break;
	default: buf[0] = '\0'; return;
	}
	if (p->dns_source && !strncmp(p->dns_source, "the annotation", 14))
		snprintf(buf, len, "; no %s: %s", JVMOPTS_DNS_ON, p->dns_source);
	else
		snprintf(buf, len, "; no %s: %s %s", JVMOPTS_DNS_ON,
			 p->dns_source ? p->dns_source : "an option", what);
}

void jvmenv_describe(const struct jvmenv_plan *p, char *buf, size_t len)
{
	if (!len)
		return;
	jvmenv_describe_fp(p, buf, len);
	size_t n = strlen(buf);
	jvmenv_describe_dns(p, buf + n, len - n);
}

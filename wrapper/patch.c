/* patch.c - add flamehook to a bundle's config.json, and
 * -XX:+PreserveFramePointer to its JAVA_TOOL_OPTIONS (lib/jvmenv.c).
 *
 * The document is parsed with the bounded parser (lib/json.c) and written
 * back from the tree: key order, duplicate keys and the exact spelling of
 * every number are kept, strings keep their value (their escaping may
 * change), whitespace is dropped. Our entries go after any existing entry
 * of the same stage, so the engine's own hooks run first, as before. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "fileio.h"
#include "json.h"
#include "jvmenv.h"
#include "wrapper.h"

static const char *const patch_stages[] = {"createRuntime", "poststart", "poststop"};
#define PATCH_WANT(i) (1u << (i)) /* bit i: patch_stages[i] gets our entry */

/* Which stages get our entry. createRuntime always (mount + registry).
 * poststart only when a triggered profile is asked for, as hooks.d's
 * "when" does: it does nothing else, and each hook entry is a fork/exec
 * by the runtime on the start path. poststop only when the caller says no
 * later `delete` will come through the wrapper (wrapper/delete.c removes
 * the entry there, in-process). */
static unsigned patch_wanted(yajl_val root, const struct patch_opts *o)
{
	unsigned want = PATCH_WANT(0);
	if (json_get_string(json_get_object(root, "annotations"), "flamesidecar.io/profile"))
		want |= PATCH_WANT(1);
	if (o->poststop)
		want |= PATCH_WANT(2);
	return want;
}

static bool patch_stage_ours(const char *key)
{
	for (size_t i = 0; i < FS_ARRAY_SIZE(patch_stages); i++)
		if (!strcmp(key, patch_stages[i]))
			return true;
	return false;
}

static bool patch_stage_wanted(const char *key, unsigned want)
{
	for (size_t i = 0; i < FS_ARRAY_SIZE(patch_stages); i++)
		if (!strcmp(key, patch_stages[i]))
			return want & PATCH_WANT(i);
	return false;
}

static yajl_val patch_get(yajl_val obj, const char *key, int *count)
{
	yajl_val found = NULL;
	*count = 0;
	for (size_t i = 0; i < obj->u.object.len; i++) {
		if (!strcmp(obj->u.object.keys[i], key)) {
			found = obj->u.object.values[i];
			(*count)++;
		}
	}
	return found;
}

static void patch_write_entry(FILE *f, const struct patch_opts *o, const char *stage)
{
	fputs("{\"path\":", f);
	json_write_string(f, o->hook_path);
	fputs(",\"args\":[\"flamehook\",", f);
	if (o->config_path) {
		fputs("\"--config\",", f);
		json_write_string(f, o->config_path);
		fputc(',', f);
	}
	if (o->opt_in)
		fputs("\"" WRAPPER_OPT_IN "\",", f);
	json_write_string(f, stage);
	fprintf(f, "],\"env\":[\"%s\"],\"timeout\":%d}", WRAPPER_HOOK_ENV, WRAPPER_HOOK_TIMEOUT);
}

/* The hooks object with our entries merged into the stages of want. */
static void patch_write_hooks(FILE *f, yajl_val hooks, const struct patch_opts *o, unsigned want)
{
	bool first = true;
	fputc('{', f);
	for (size_t i = 0; hooks && i < hooks->u.object.len; i++) {
		const char *key = hooks->u.object.keys[i];
		yajl_val val = hooks->u.object.values[i];
		if (!first)
			fputc(',', f);
		first = false;
		json_write_string(f, key);
		fputc(':', f);
		if (!patch_stage_wanted(key, want)) {
			json_write_value(f, val);
			continue;
		}
		fputc('[', f);
		size_t n = YAJL_IS_ARRAY(val) ? val->u.array.len : 0;
		for (size_t j = 0; j < n; j++) {
			json_write_value(f, val->u.array.values[j]);
			fputc(',', f);
		}
		patch_write_entry(f, o, key);
		fputc(']', f);
	}
	for (size_t s = 0; s < FS_ARRAY_SIZE(patch_stages); s++) {
		int count = 0;
		if (!(want & PATCH_WANT(s)))
			continue;
		if (hooks)
			patch_get(hooks, patch_stages[s], &count);
		if (count)
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		json_write_string(f, patch_stages[s]);
		fputs(":[", f);
		patch_write_entry(f, o, patch_stages[s]);
		fputc(']', f);
	}
	fputc('}', f);
}

static bool patch_is_flamehook(const char *path, const struct patch_opts *o)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strcmp(path, o->hook_path) || !strcmp(base, "flamehook");
}

/* Check the hooks object: 1 when flamehook is already in it, 0 when it is
 * not, -EINVAL when it is not something we can merge into safely. */
static int patch_check_hooks(yajl_val hooks, const struct patch_opts *o, struct fs_error *err)
{
	if (!YAJL_IS_OBJECT(hooks))
		return fs_error_set(err, EINVAL, "\"hooks\" is not an object");
	int found = 0;
	for (size_t i = 0; i < hooks->u.object.len; i++) {
		const char *key = hooks->u.object.keys[i];
		yajl_val val = hooks->u.object.values[i];
		int count;
		patch_get(hooks, key, &count);
		if (count > 1)
			return fs_error_set(err, EINVAL, "\"hooks\" has \"%s\" more than once",
					    key);
		if (YAJL_IS_NULL(val))
			continue;
		if (!YAJL_IS_ARRAY(val)) {
			if (patch_stage_ours(key))
				return fs_error_set(err, EINVAL, "hooks.%s is not an array", key);
			continue;
		}
		for (size_t j = 0; j < val->u.array.len; j++) {
			const char *path = json_get_string(val->u.array.values[j], "path");
			if (path && patch_is_flamehook(path, o))
				found = 1;
		}
	}
	return found;
}

/* FLAMESIDECAR_ENABLE=1 (or true) in process.env; the last one counts,
 * as for execve. */
static bool patch_env_opted_in(yajl_val root)
{
	const char *k[] = {"env", NULL};
	yajl_val proc = json_get_object(root, "process");
	yajl_val env = proc ? yajl_tree_get(proc, k, yajl_t_array) : NULL;
	const size_t klen = strlen(WRAPPER_ENABLE_ENV "=");
	bool on = false;
	for (size_t i = 0; env && i < env->u.array.len; i++) {
		yajl_val v = env->u.array.values[i];
		const char *s = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : "";
		if (!strncmp(s, WRAPPER_ENABLE_ENV "=", klen))
			on = !strcmp(s + klen, "1") || !strcmp(s + klen, "true");
	}
	return on;
}

/* A Kubernetes pod sandbox ("pause") as containerd's CRI plugin or CRI-O
 * marks it: a pod annotation reaches it too, and it has nothing to profile. */
static bool patch_is_sandbox(yajl_val ann)
{
	const char *a = json_get_string(ann, "io.kubernetes.cri.container-type");
	const char *b = json_get_string(ann, "io.kubernetes.cri-o.ContainerType");
	return (a && !strcmp(a, "sandbox")) || (b && !strcmp(b, "sandbox"));
}

/* Sets o->opt_in when the container's environment opts it in. */
static bool patch_opted_in(yajl_val root, struct patch_opts *o)
{
	if (patch_is_sandbox(json_get_object(root, "annotations")))
		return false;
	switch (o->enable) {
	case CONFIG_ENABLE_ALWAYS: return true;
	case CONFIG_ENABLE_NEVER: return false;
	default: break;
	}
	if (o->opt_in)
		return true;
	const char *v =
	    json_get_string(json_get_object(root, "annotations"), "flamesidecar.io/enable");
	if (v && !strcmp(v, "true"))
		return true;
	o->opt_in = patch_env_opted_in(root);
	return o->opt_in;
}

/* Decide about frame pointers; a refusal is reported, never an error of
 * the patch (the hooks are still added). */
static void patch_plan_fp(yajl_val root, const struct patch_opts *o, struct jvmenv_plan *plan,
			  struct patch_report *rep)
{
	struct fs_error err;
	plan->verdict = JVMENV_NO_PROCESS;
	if (!o->preserve_fp && !o->dns) {
		snprintf(rep->fp_note, sizeof(rep->fp_note),
			 "JAVA_TOOL_OPTIONS left alone: \"preserve_frame_pointer\" and "
			 "\"debug_nonsafepoints\" are false");
		return;
	}
	const struct jvmenv_want want = {.fp = o->preserve_fp, .dns = o->dns};
	if (jvmenv_plan_want(root, &want, plan, &err) < 0) {
		plan->verdict = JVMENV_NO_PROCESS;
		rep->fp_refused = 1;
		snprintf(rep->fp_note, sizeof(rep->fp_note), "JAVA_TOOL_OPTIONS left alone: %s",
			 err.msg);
		return;
	}
	jvmenv_describe(plan, rep->fp_note, sizeof(rep->fp_note));
	rep->fp_added = plan->verdict == JVMENV_ADD;
	rep->dns_added = plan->dns_verdict == JVMENV_ADD;
}

static int patch_write(FILE *f, yajl_val root, yajl_val hooks, const struct patch_opts *o,
		       const struct jvmenv_plan *plan, int add_hooks)
{
	unsigned want = patch_wanted(root, o);
	bool wrote_hooks = false;
	fputc('{', f);
	for (size_t i = 0; i < root->u.object.len; i++) {
		yajl_val v = root->u.object.values[i];
		if (i)
			fputc(',', f);
		json_write_string(f, root->u.object.keys[i]);
		fputc(':', f);
		if (add_hooks && !strcmp(root->u.object.keys[i], "hooks")) {
			patch_write_hooks(f, hooks, o, want);
			wrote_hooks = true;
		} else if (plan->entry && v == plan->process) {
			jvmenv_write_process(f, plan);
		} else {
			json_write_value(f, v);
		}
	}
	if (add_hooks && !wrote_hooks) {
		if (root->u.object.len)
			fputc(',', f);
		fputs("\"hooks\":", f);
		patch_write_hooks(f, NULL, o, want);
	}
	fputs("}\n", f);
	return ferror(f) ? -ENOMEM : 0;
}

int patch_json(const char *in, size_t len, const struct patch_opts *o, char **out, size_t *out_len,
	       struct patch_report *rep, struct fs_error *err)
{
	*out = NULL;
	*out_len = 0;
	memset(rep, 0, sizeof(*rep));
	cleanup_json yajl_val root = NULL;
	int r = json_parse(in, len, WRAPPER_JSON_DEPTH, &root, err);
	if (r < 0)
		return r;
	if (!YAJL_IS_OBJECT(root))
		return fs_error_set(err, EINVAL, "the top level is not an object");
	struct patch_opts eff = *o;
	if (!patch_opted_in(root, &eff))
		return PATCH_NOT_OPTED_IN;
	o = &eff;
	if (json_has_escaped_nul(in, len))
		return fs_error_set(err, EINVAL,
				    "a string holds \\u0000, which would not survive a rewrite");

	int count;
	yajl_val hooks = patch_get(root, "hooks", &count);
	if (count > 1)
		return fs_error_set(err, EINVAL, "\"hooks\" appears more than once");
	if (YAJL_IS_NULL(hooks))
		hooks = NULL;
	int add_hooks = 1;
	if (hooks) {
		r = patch_check_hooks(hooks, o, err);
		if (r < 0)
			return r;
		add_hooks = !r;
	}
	struct jvmenv_plan plan;
	memset(&plan, 0, sizeof(plan));
	patch_plan_fp(root, o, &plan, rep);
	if (!add_hooks && !plan.entry) {
		jvmenv_plan_free(&plan);
		return PATCH_ALREADY;
	}

	cleanup_free char *buf = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&buf, &blen);
	if (!f) {
		jvmenv_plan_free(&plan);
		return fs_error_set(err, errno, "allocating the new config.json");
	}
	r = patch_write(f, root, hooks, o, &plan, add_hooks);
	jvmenv_plan_free(&plan);
	if (fclose(f) || r < 0)
		return fs_error_set(err, ENOMEM, "writing the new config.json");
	rep->hooks_added = add_hooks;
	*out_len = blen;
	*out = steal_pointer(&buf);
	return PATCH_ADDED;
}

struct patch_content {
	const struct stat *st;
	const char *buf;
	size_t len;
};

/* The new config.json: the original's owner, the content, on disk before
 * the rename (fileio_replace gives it the mode and renames it). */
static int patch_fill(int fd, void *arg, struct fs_error *err)
{
	const struct patch_content *c = arg;
	int r;
	if (fchown(fd, c->st->st_uid, c->st->st_gid) < 0)
		return fs_error_set(err, errno, "giving it the owner %u:%u",
				    (unsigned)c->st->st_uid, (unsigned)c->st->st_gid);
	if ((r = fileio_write_all(fd, c->buf, c->len)) < 0)
		return fs_error_set(err, -r, "writing %zu bytes", c->len);
	if (fsync(fd) < 0)
		return fs_error_set(err, errno, "syncing it");
	return 0;
}

int patch_bundle(const char *bundle, const struct patch_opts *o, struct patch_report *rep,
		 struct fs_error *err)
{
	const char *dir = bundle && *bundle ? bundle : ".";
	cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return fs_error_set(err, errno, "opening the bundle %s", dir);
	cleanup_close int fd =
	    openat(dfd, "config.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fs_error_set(err, errno, "opening %s/config.json%s", dir,
				    errno == ELOOP ? " (a symlink; not rewritten)" : "");
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fs_error_set(err, errno, "%s/config.json", dir);
	if (!S_ISREG(st.st_mode))
		return fs_error_set(err, EINVAL, "%s/config.json is not a regular file", dir);
	if (st.st_size > WRAPPER_BUNDLE_CONFIG_MAX)
		return fs_error_set(err, E2BIG, "%s/config.json is larger than %d bytes", dir,
				    WRAPPER_BUNDLE_CONFIG_MAX);
	cleanup_free char *in = NULL;
	size_t len;
	int r = json_read_fd(fd, WRAPPER_BUNDLE_CONFIG_MAX, &in, &len, err);
	if (r < 0)
		return fs_error_wrap(err, "%s/config.json", dir);
	cleanup_free char *out = NULL;
	size_t out_len;
	r = patch_json(in, len, o, &out, &out_len, rep, err);
	if (r < 0)
		return fs_error_wrap(err, "%s/config.json", dir);
	if (r != PATCH_ADDED)
		return r;
	struct patch_content c = {.st = &st, .buf = out, .len = out_len};
	r = fileio_replace(dfd, dir, "config.json", st.st_mode & 07777, patch_fill, &c, err);
	if (r < 0)
		return r;
	return PATCH_ADDED;
}

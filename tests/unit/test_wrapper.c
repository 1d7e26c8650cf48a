/* test_wrapper.c - unit tests of flamesidecar-runtime: command lines as
 * containerd, Docker and people write them, and config.json patching. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "json.h"
#include "tap.h"
#include "wrapper.h"

#define ARGV(...) ((char *[]){"rt", __VA_ARGS__, NULL})

static void parse_args(char **v, struct wrapper_args *a)
{
	int n = 0;
	while (v[n])
		n++;
	args_parse(n, v, a);
}

static void test_args(void)
{
	struct wrapper_args a;
	char **v = ARGV("--root", "/run/containerd/runc/k8s.io", "--log", "/b/log.json",
			"--log-format", "json", "--systemd-cgroup", "create", "--bundle", "/b",
			"--pid-file", "/b/init.pid", "--console-socket", "/tmp/s", "c1");
	parse_args(v, &a);
	is_int(a.verb, WRAPPER_VERB_CREATE, "containerd create: verb");
	is_str(a.bundle, "/b", "containerd create: bundle");
	is_str(a.id, "c1", "containerd create: id");
	is_str(a.log, "/b/log.json", "containerd create: --log");
	ok(a.log_json, "containerd create: --log-format json");
	ok(!a.unknown_option, "containerd create: every option known");
	is_int(a.verb_index, 8, "containerd create: verb index");

	char **w = ARGV("-root=/r", "-debug", "run", "-d", "-b=/x", "--no-pivot", "--preserve-fds",
			"3", "c2");
	parse_args(w, &a);
	is_int(a.verb, WRAPPER_VERB_RUN, "single dashes and =: verb run");
	is_str(a.bundle, "/x", "single dashes and =: bundle");
	is_str(a.id, "c2", "single dashes and =: id after a valued option");
	ok(!a.log, "no --log");

	char **s = ARGV("--root", "/r", "start", "c1");
	parse_args(s, &a);
	is_int(a.verb, WRAPPER_VERB_OTHER, "start is passed through");
	is_int(a.verb_index, 3, "start: verb index");

	char **d = ARGV("create", "c3");
	parse_args(d, &a);
	ok(a.verb == WRAPPER_VERB_CREATE && !a.bundle,
	   "create without --bundle: bundle is the cwd");
	is_str(a.id, "c3", "create without options: id");

	char **u = ARGV("--frobnicate", "create", "--bundle", "/b", "c4");
	parse_args(u, &a);
	ok(a.unknown_option, "an unknown global option is noticed");
	char **u2 = ARGV("create", "--config", "/other.json", "c5");
	parse_args(u2, &a);
	ok(a.unknown_option, "crun's create --config is not ours to guess: noticed");

	char **n = ARGV("--version");
	parse_args(n, &a);
	is_int(a.verb_index, 0, "--version alone: no verb");
	char **dd = ARGV("--", "create", "--", "c6");
	parse_args(dd, &a);
	ok(a.verb == WRAPPER_VERB_CREATE, "-- before the verb");
	is_str(a.id, "c6", "-- before the id");
	char **del = ARGV("--root", "/r", "--log", "/b/log.json", "delete", "--force", "c7");
	parse_args(del, &a);
	ok(a.verb == WRAPPER_VERB_DELETE && !a.unknown_option, "delete --force: known");
	is_str(a.id, "c7", "delete: id");
	char **del2 = ARGV("delete", "-f=false", "c8");
	parse_args(del2, &a);
	is_str(a.id, "c8", "delete -f=false: id");
	char **del3 = ARGV("delete", "--frob", "c9");
	parse_args(del3, &a);
	ok(a.unknown_option, "delete with an unknown option: noticed");
	char **del4 = ARGV("delete", "c9", "c10");
	parse_args(del4, &a);
	ok(a.unknown_option, "delete with two ids: not ours to guess");
	ok(!a.detach, "delete: not detached");
	parse_args(w, &a);
	ok(a.detach, "run -d: detached");
	char **fg = ARGV("run", "--detach=false", "--bundle", "/b", "c10");
	parse_args(fg, &a);
	ok(!a.detach && a.verb == WRAPPER_VERB_RUN, "run --detach=false: foreground");
	char **fg2 = ARGV("run", "--bundle", "/b", "c11");
	parse_args(fg2, &a);
	ok(!a.detach, "run: foreground");
	char **t = ARGV("create", "--bundle");
	parse_args(t, &a);
	ok(!a.bundle && !a.id, "a missing option value is not read past argv");
}

static const struct patch_opts opts = {
    .hook_path = "/usr/bin/flamehook",
    .config_path = NULL,
    .enable = CONFIG_ENABLE_ANNOTATION,
};

static struct patch_report last_report;

static int patch(const char *in, const struct patch_opts *o, char **out)
{
	size_t len;
	struct fs_error err = {0};
	int r = patch_json(in, strlen(in), o, out, &len, &last_report, &err);
	if (r < 0)
		tap_diag("patch_json: %s", err.msg);
	else if (*out && strlen(*out) != len)
		tap_diag("length %zu, strlen %zu", len, strlen(*out));
	return r;
}

static yajl_val parse(const char *s)
{
	yajl_val v = NULL;
	struct fs_error err;
	if (json_parse(s, strlen(s), 64, &v, &err) < 0)
		tap_diag("output does not parse: %s: %s", err.msg, s);
	return v;
}

/* Element i of an array as a string, "" when it is not one. */
static const char *str_at(yajl_val arr, size_t i)
{
	if (!arr || i >= arr->u.array.len || !YAJL_IS_STRING(arr->u.array.values[i]))
		return "";
	return arr->u.array.values[i]->u.string;
}

static const char *path_str(yajl_val root, const char **path)
{
	yajl_val v = yajl_tree_get(root, path, yajl_t_string);
	return v ? YAJL_GET_STRING(v) : NULL;
}

#define ANNOTATED "\"annotations\":{\"flamesidecar.io/enable\":\"true\"}"
#define PROFILED                                                                                   \
	"\"annotations\":{\"flamesidecar.io/enable\":\"true\",\"flamesidecar.io/"                  \
	"profile\":\"10s\"}"

static void test_patch_decisions(void)
{
	char *out = NULL;
	is_int(patch("{\"ociVersion\":\"1.0.2\"}", &opts, &out), PATCH_NOT_OPTED_IN,
	       "no annotation: left alone");
	ok(!out, "no annotation: no output");
	is_int(patch("{\"annotations\":{\"flamesidecar.io/enable\":\"false\"}}", &opts, &out),
	       PATCH_NOT_OPTED_IN, "enable=false: left alone");
	is_int(patch("{\"annotations\":{\"flamesidecar.io/enable\":true}}", &opts, &out),
	       PATCH_NOT_OPTED_IN, "enable as a JSON boolean is not \"true\": left alone");

	struct patch_opts always = opts, never = opts;
	always.enable = CONFIG_ENABLE_ALWAYS;
	never.enable = CONFIG_ENABLE_NEVER;
	is_int(patch("{}", &always, &out), PATCH_ADDED, "enable always: added without annotation");
	free(out);
	out = NULL;
	is_int(patch("{" ANNOTATED "}", &never, &out), PATCH_NOT_OPTED_IN,
	       "enable never: never added");

	is_int(patch("{" ANNOTATED ",\"hooks\":{\"prestart\":[{\"path\":\"/usr/bin/"
		     "flamehook\",\"args\":[\"flamehook\",\"prestart\"]}]}}",
		     &opts, &out),
	       PATCH_ALREADY, "flamehook already there (hooks.d): left alone");
	is_int(patch("{" ANNOTATED
		     ",\"hooks\":{\"createRuntime\":[{\"path\":\"/opt/x/flamehook\"}]}}",
		     &opts, &out),
	       PATCH_ALREADY, "a flamehook at another path counts too");

	is_int(patch("[1]", &opts, &out), -EINVAL, "top level array: error");
	is_int(patch("{" ANNOTATED ",\"hooks\":[]}", &opts, &out), -EINVAL,
	       "hooks an array: error");
	is_int(patch("{" ANNOTATED ",\"hooks\":{\"poststart\":\"x\"}}", &opts, &out), -EINVAL,
	       "hooks.poststart a string: error");
	is_int(patch("{" ANNOTATED ",\"hooks\":{},\"hooks\":{}}", &opts, &out), -EINVAL,
	       "two hooks keys: error");
	is_int(patch("{" ANNOTATED ",\"hooks\":{\"poststop\":[],\"poststop\":[]}}", &opts, &out),
	       -EINVAL, "a stage twice: error");
	is_int(patch("{" ANNOTATED ",\"x\":\"a\\u0000b\"}", &opts, &out), -EINVAL,
	       "\\u0000 in a string: error");
	is_int(patch("{" ANNOTATED ",\"x\":", &opts, &out), -EINVAL, "truncated: error");
	char deep[300] = "{" ANNOTATED ",\"x\":";
	size_t l = strlen(deep);
	for (int i = 0; i < 70; i++)
		deep[l++] = '[';
	deep[l] = '\0';
	is_int(patch(deep, &opts, &out), -EINVAL, "nested 70 deep: error");
	ok(!out, "errors leave no output");
}

/* The per-container opt-ins for engines without annotations. */
static void test_patch_opt_in(void)
{
	char *out = NULL;
	const char *hook_args[] = {"hooks", "createRuntime", NULL};
	struct patch_opts forced = opts;
	forced.opt_in = 1;
	is_int(patch("{\"process\":{\"args\":[\"java\"]}}", &forced, &out), PATCH_ADDED,
	       "runtime --opt-in: added without annotation");
	yajl_val root = out ? parse(out) : NULL;
	yajl_val cr = root ? yajl_tree_get(root, hook_args, yajl_t_array) : NULL;
	yajl_val args =
	    cr && cr->u.array.len
		? yajl_tree_get(cr->u.array.values[0], (const char *[]){"args", NULL}, yajl_t_array)
		: NULL;
	ok(args && !strcmp(str_at(args, 1), "--opt-in") &&
	       !strcmp(str_at(args, 2), "createRuntime"),
	   "the hook entry carries --opt-in before the stage");
	yajl_tree_free(root);
	free(out);
	out = NULL;

	is_int(
	    patch("{\"process\":{\"env\":[\"PATH=/bin\",\"FLAMESIDECAR_ENABLE=1\"]}}", &opts, &out),
	    PATCH_ADDED, "FLAMESIDECAR_ENABLE=1 in process.env: added");
	ok(out && strstr(out, "\"--opt-in\",\"createRuntime\""), "with --opt-in");
	free(out);
	out = NULL;
	is_int(patch("{\"process\":{\"env\":[\"FLAMESIDECAR_ENABLE=true\"]}}", &opts, &out),
	       PATCH_ADDED, "FLAMESIDECAR_ENABLE=true: added");
	free(out);
	out = NULL;
	is_int(patch("{\"process\":{\"env\":[\"FLAMESIDECAR_ENABLE=1\","
		     "\"FLAMESIDECAR_ENABLE=0\"]}}",
		     &opts, &out),
	       PATCH_NOT_OPTED_IN, "the last FLAMESIDECAR_ENABLE counts (0)");
	is_int(patch("{\"process\":{\"env\":[\"FLAMESIDECAR_ENABLEX=1\",7,\"X=FLAMESIDECAR_ENABLE="
		     "1\"]}}",
		     &opts, &out),
	       PATCH_NOT_OPTED_IN, "only the exact variable counts");
	is_int(patch("{\"process\":{\"env\":\"FLAMESIDECAR_ENABLE=1\"}}", &opts, &out),
	       PATCH_NOT_OPTED_IN, "env not an array: not opted in");
	struct patch_opts never = forced;
	never.enable = CONFIG_ENABLE_NEVER;
	is_int(patch("{\"process\":{\"env\":[\"FLAMESIDECAR_ENABLE=1\"]}}", &never, &out),
	       PATCH_NOT_OPTED_IN, "\"never\" wins over --opt-in and the environment");
	is_int(patch("{\"annotations\":{\"flamesidecar.io/enable\":\"true\","
		     "\"io.kubernetes.cri.container-type\":\"sandbox\"}}",
		     &forced, &out),
	       PATCH_NOT_OPTED_IN, "a pod sandbox (containerd CRI) is never patched");
	is_int(patch("{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\"}}",
		     &forced, &out),
	       PATCH_NOT_OPTED_IN, "nor CRI-O's");
	is_int(patch("{" ANNOTATED "}", &opts, &out), PATCH_ADDED, "the annotation alone");
	ok(out && !strstr(out, "--opt-in"), "needs no --opt-in in the hook");
	free(out);

	char a0[] = "flamesidecar-runtime", a1[] = "--opt-in", a2[] = "--opt-in", a3[] = "--root",
	     a4[] = "/r", a5[] = "create", a6[] = "--opt-in";
	char *v[] = {a0, a1, a2, a3, a4, a5, a6, NULL};
	int argc = 7;
	is_int(wrapper_take_opt_in(&argc, v), 1, "leading --opt-in taken");
	ok(argc == 5 && v[1] == a3 && v[3] == a5 && v[4] == a6 && !v[5],
	   "both leading ones gone, a later one (the runtime's business) kept");
	is_int(wrapper_take_opt_in(&argc, v), 0, "none left in front");
}

static void test_patch_content(void)
{
	char *out = NULL;
	const char *in =
	    "{\"ociVersion\":\"1.0.2-dev\",\"n\":1.50e+3,\"big\":123456789012345678901234567890,"
	    "\"neg\":-0,\"t\":true,\"f\":false,\"z\":null,\"dup\":1,\"dup\":2,"
	    "\"s\":\"caf\\u00e9 \\ud83d\\ude00 tab\\t quote\\\" "
	    "nl\\n\",\"e\":{},\"a\":[]," PROFILED
	    ",\"hooks\":{\"prestart\":[{\"path\":\"/usr/bin/nvidia\"}],"
	    "\"poststart\":[{\"path\":\"/bin/a\"},{\"path\":\"/bin/b\"}],\"poststop\":null}}";
	struct patch_opts all = opts;
	all.poststop = 1; /* a foreground run: every stage of ours */
	is_int(patch(in, &all, &out), PATCH_ADDED, "annotated: added");
	if (!out)
		return;
	ok(strstr(out, "\"n\":1.50e+3,\"big\":123456789012345678901234567890,\"neg\":-0,") != NULL,
	   "numbers keep their spelling");
	ok(strstr(out, "\"dup\":1,\"dup\":2") != NULL, "duplicate keys kept, in order");
	ok(strstr(out, "{\"ociVersion\":\"1.0.2-dev\",\"n\":") == out, "key order kept");
	ok(strstr(out, "\"t\":true,\"f\":false,\"z\":null,") != NULL, "literals kept");
	ok(strstr(out, "\"e\":{},\"a\":[],") != NULL, "empty containers kept");
	yajl_val root = parse(out);
	ok(root != NULL, "output parses");
	if (!root) {
		free(out);
		return;
	}
	is_str(path_str(root, (const char *[]){"s", NULL}),
	       "caf\xc3\xa9 \xf0\x9f\x98\x80 tab\t quote\" nl\n",
	       "string value kept (escapes, non-ASCII, surrogate pair)");
	yajl_val hooks = json_get_object(root, "hooks");
	const char *stages[] = {"prestart", "poststart", "poststop", "createRuntime"};
	size_t want_len[] = {1, 3, 1, 1};
	for (size_t i = 0; i < FS_ARRAY_SIZE(stages); i++) {
		yajl_val arr =
		    yajl_tree_get(hooks, (const char *[]){stages[i], NULL}, yajl_t_array);
		ok(arr && arr->u.array.len == want_len[i], "hooks.%s has %zu entries", stages[i],
		   want_len[i]);
	}
	ok(hooks && hooks->u.object.len == 4 && !strcmp(hooks->u.object.keys[3], "createRuntime"),
	   "existing stages keep their place; createRuntime is added last");
	yajl_val ps = yajl_tree_get(hooks, (const char *[]){"poststart", NULL}, yajl_t_array);
	if (ps && ps->u.array.len == 3) {
		is_str(json_get_string(ps->u.array.values[0], "path"), "/bin/a",
		       "poststart: existing first");
		is_str(json_get_string(ps->u.array.values[1], "path"), "/bin/b",
		       "poststart: existing second");
		yajl_val e = ps->u.array.values[2];
		is_str(json_get_string(e, "path"), "/usr/bin/flamehook", "poststart: ours last");
		yajl_val args = yajl_tree_get(e, (const char *[]){"args", NULL}, yajl_t_array);
		ok(args && args->u.array.len == 2 && !strcmp(str_at(args, 0), "flamehook") &&
		       !strcmp(str_at(args, 1), "poststart"),
		   "args are [flamehook, poststart]");
		yajl_val env = yajl_tree_get(e, (const char *[]){"env", NULL}, yajl_t_array);
		ok(env && env->u.array.len == 1 && !strcmp(str_at(env, 0), WRAPPER_HOOK_ENV),
		   "explicit minimal env");
		long long to = 0;
		ok(json_get_int(e, "timeout", &to) == 0 && to == WRAPPER_HOOK_TIMEOUT, "timeout 5");
	}
	yajl_tree_free(root);
	free(out);
	out = NULL;

	/* No hooks key: appended at the end, with --config when given. */
	struct patch_opts o = opts;
	o.config_path = "/etc/other dir/c.json";
	is_int(patch("{" ANNOTATED ",\"process\":{\"args\":[\"sh\"]}}", &o, &out), PATCH_ADDED,
	       "no hooks key: added");
	if (!out)
		return;
	root = parse(out);
	ok(root && root->u.object.len == 3 && !strcmp(root->u.object.keys[2], "hooks"),
	   "hooks key appended last");
	yajl_val cr =
	    yajl_tree_get(root, (const char *[]){"hooks", "createRuntime", NULL}, yajl_t_array);
	yajl_val args =
	    cr && cr->u.array.len == 1
		? yajl_tree_get(cr->u.array.values[0], (const char *[]){"args", NULL}, yajl_t_array)
		: NULL;
	ok(args && args->u.array.len == 4 && !strcmp(str_at(args, 1), "--config") &&
	       !strcmp(str_at(args, 2), "/etc/other dir/c.json") &&
	       !strcmp(str_at(args, 3), "createRuntime"),
	   "args are [flamehook, --config, FILE, createRuntime]");
	/* Patching the output again finds our hook. */
	char *again = NULL;
	is_int(patch(out, &o, &again), PATCH_ALREADY, "patching twice is a no-op");
	if (root)
		yajl_tree_free(root);
	free(out);
}

/* The number of entries of hooks.<stage>, -1 when it is not an array. */
static int stage_len(const char *doc, const char *stage)
{
	yajl_val root = parse(doc);
	yajl_val arr =
	    root ? yajl_tree_get(root, (const char *[]){"hooks", stage, NULL}, yajl_t_array) : NULL;
	int n = arr ? (int)arr->u.array.len : -1;
	if (root)
		yajl_tree_free(root);
	return n;
}

/* Which stages get our entry: each is a process the runtime forks on
 * the container's way in or out. */
static void test_patch_stages(void)
{
	char *out = NULL;
	is_int(patch("{" ANNOTATED ",\"hooks\":{\"poststart\":[{\"path\":\"/bin/a\"}],"
		     "\"poststop\":null}}",
		     &opts, &out),
	       PATCH_ADDED, "enabled, no profile: added");
	if (out) {
		is_int(stage_len(out, "createRuntime"), 1, "no profile: createRuntime added");
		is_int(stage_len(out, "poststart"), 1, "no profile: poststart left as it was");
		is_int(stage_len(out, "poststop"), -1,
		       "no poststop (delete through the wrapper unregisters)");
		ok(strstr(out, "\"poststop\":null") != NULL, "an existing null stage kept");
	}
	free(out);
	out = NULL;
	is_int(patch("{" PROFILED "}", &opts, &out), PATCH_ADDED, "profile annotation: added");
	if (out) {
		is_int(stage_len(out, "createRuntime"), 1, "profile: createRuntime");
		is_int(stage_len(out, "poststart"), 1, "profile: poststart (the trigger) too");
		is_int(stage_len(out, "poststop"), -1, "profile: still no poststop");
	}
	free(out);
	out = NULL;
	struct patch_opts fg = opts;
	fg.poststop = 1;
	is_int(patch("{" ANNOTATED "}", &fg, &out), PATCH_ADDED, "foreground run: added");
	if (out) {
		is_int(stage_len(out, "poststart"), -1, "foreground run: no poststart");
		is_int(stage_len(out, "poststop"), 1, "foreground run: poststop");
	}
	free(out);
}

static void test_patch_bundle(void)
{
	char dir[] = "/tmp/fswrap.XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	char cfgp[64], link[64];
	snprintf(cfgp, sizeof(cfgp), "%s/config.json", dir);
	snprintf(link, sizeof(link), "%s/b2", dir);
	FILE *f = fopen(cfgp, "w");
	fputs("{" ANNOTATED ", \"x\": 1}\n", f);
	fclose(f);
	chmod(cfgp, 0640);
	int as_root = geteuid() == 0 && chown(cfgp, 1234, 4321) == 0;
	struct stat before, after;
	stat(cfgp, &before);
	struct fs_error err;
	is_int(patch_bundle(dir, &opts, &last_report, &err), PATCH_ADDED, "bundle patched");
	stat(cfgp, &after);
	is_int(after.st_mode & 07777, 0640, "mode kept");
	if (as_root)
		ok(after.st_uid == 1234 && after.st_gid == 4321, "owner kept (%u:%u)",
		   (unsigned)after.st_uid, (unsigned)after.st_gid);
	else
		tap_skip(1, "owner: not root");
	ok(after.st_ino != before.st_ino, "replaced by rename (new inode)");
	is_int(patch_bundle(dir, &opts, &last_report, &err), PATCH_ALREADY,
	       "second time: already there");
	struct stat again;
	stat(cfgp, &again);
	ok(again.st_ino == after.st_ino, "second time: file untouched");

	/* A symlinked config.json is refused, not followed or replaced. */
	mkdir(link, 0755);
	char lcfg[80];
	snprintf(lcfg, sizeof(lcfg), "%s/config.json", link);
	if (symlink(cfgp, lcfg) == 0) {
		int r = patch_bundle(link, &opts, &last_report, &err);
		ok(r == -ELOOP && strstr(err.msg, "symlink"), "symlinked config.json refused: %s",
		   err.msg);
		struct stat ls;
		ok(lstat(lcfg, &ls) == 0 && S_ISLNK(ls.st_mode), "the symlink stays");
		unlink(lcfg);
	}
	is_int(patch_bundle(link, &opts, &last_report, &err), -ENOENT,
	       "missing config.json: -ENOENT");
	ok(strstr(err.msg, link) != NULL, "the error names the bundle: %s", err.msg);
	rmdir(link);
	/* Nothing but config.json is left in the bundle (no temporary files). */
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s)\" = config.json", dir);
	ok(system(cmd) == 0, "no temporary file left");
	unlink(cfgp);
	rmdir(dir);
}

/* The env of a patched config: process.env as one string "a|b|c". */
static void env_of(const char *doc, char *buf, size_t len)
{
	buf[0] = '\0';
	yajl_val root = parse(doc);
	yajl_val env =
	    root ? yajl_tree_get(root, (const char *[]){"process", "env", NULL}, yajl_t_array)
		 : NULL;
	size_t o = 0;
	for (size_t i = 0; env && i < env->u.array.len; i++)
		o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", i ? "|" : "",
				      str_at(env, i));
	if (root)
		yajl_tree_free(root);
}

/* -XX:+PreserveFramePointer through the wrapper: appended to the image's
 * JAVA_TOOL_OPTIONS, alongside the hooks; never twice; not against a -XX:-;
 * a hostile env keeps its value and the hooks are still added. */
static void test_patch_fp(void)
{
	struct patch_opts o = opts;
	o.preserve_fp = 1;
	char *out = NULL, env[512];
	is_int(patch("{" ANNOTATED ",\"process\":{\"args\":[\"java\",\"-jar\",\"a.jar\"],"
		     "\"env\":[\"PATH=/bin\",\"JAVA_TOOL_OPTIONS=-Xmx1g -Dx='a b'\"]}}",
		     &o, &out),
	       PATCH_ADDED, "image JAVA_TOOL_OPTIONS: patched");
	ok(last_report.hooks_added && last_report.fp_added && !last_report.fp_refused,
	   "report: hooks and the flag added (%s)", last_report.fp_note);
	env_of(out ? out : "", env, sizeof(env));
	is_str(env, "PATH=/bin|JAVA_TOOL_OPTIONS=-Xmx1g -Dx='a b' -XX:+PreserveFramePointer",
	       "the image's options kept, the flag appended in place");
	char *again = NULL;
	is_int(patch(out ? out : "", &o, &again), PATCH_ALREADY,
	       "patching the output again: nothing to do");
	ok(strstr(last_report.fp_note, "already") != NULL, "and it says so: %s",
	   last_report.fp_note);
	free(again);
	free(out);
	out = NULL;

	is_int(patch("{" ANNOTATED ",\"process\":{\"args\":[\"sh\"],\"env\":[\"PATH=/bin\"]}}", &o,
		     &out),
	       PATCH_ADDED, "no JAVA_TOOL_OPTIONS: patched");
	env_of(out ? out : "", env, sizeof(env));
	is_str(env, "PATH=/bin|JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer",
	       "a new entry at the end");
	free(out);
	out = NULL;

	is_int(patch("{" ANNOTATED ",\"process\":{\"args\":[\"java\",\"-XX:-PreserveFramePointer\","
		     "\"Main\"],\"env\":[\"PATH=/bin\"]}}",
		     &o, &out),
	       PATCH_ADDED, "-XX:- on the command line: hooks still added");
	ok(last_report.hooks_added && !last_report.fp_added, "but not the flag: %s",
	   last_report.fp_note);
	env_of(out ? out : "", env, sizeof(env));
	is_str(env, "PATH=/bin", "env untouched");
	free(out);
	out = NULL;

	is_int(patch("{" ANNOTATED ",\"process\":{\"env\":[\"JAVA_TOOL_OPTIONS=-Xss1m\","
		     "\"JAVA_TOOL_OPTIONS=-Xss2m\"]}}",
		     &o, &out),
	       PATCH_ADDED, "JAVA_TOOL_OPTIONS twice: hooks still added");
	ok(last_report.fp_refused && strstr(last_report.fp_note, "twice"),
	   "refused with a reason: %s", last_report.fp_note);
	env_of(out ? out : "", env, sizeof(env));
	is_str(env, "JAVA_TOOL_OPTIONS=-Xss1m|JAVA_TOOL_OPTIONS=-Xss2m", "env untouched");
	free(out);
	out = NULL;

	/* Hooks already there (a second wrapper, or hooks.d): the flag alone. */
	is_int(patch("{" ANNOTATED ",\"hooks\":{\"prestart\":[{\"path\":\"/usr/bin/flamehook\"}]},"
		     "\"process\":{\"env\":[]}}",
		     &o, &out),
	       PATCH_ADDED, "hooks already there, flag missing: patched");
	ok(!last_report.hooks_added && last_report.fp_added, "the flag only");
	free(out);
	out = NULL;

	struct patch_opts off = o;
	off.preserve_fp = 0;
	is_int(patch("{" ANNOTATED ",\"hooks\":{\"prestart\":[{\"path\":\"/usr/bin/flamehook\"}]},"
		     "\"process\":{\"env\":[]}}",
		     &off, &out),
	       PATCH_ALREADY, "preserve_frame_pointer false: the env is not looked at");
	is_int(patch("{\"process\":{\"env\":[\"A=1\"]}}", &o, &out), PATCH_NOT_OPTED_IN,
	       "not opted in: left alone, whatever the env");
	ok(!out, "no output");
}

int main(void)
{
	tap_plan(127);
	test_args();
	test_patch_decisions();
	test_patch_opt_in();
	test_patch_content();
	test_patch_stages();
	test_patch_bundle();
	test_patch_fp();
	return tap_done();
}

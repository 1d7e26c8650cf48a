/* test_jvmenv.c - frame pointers at creation: the word-level option logic
 * (lib/jvmopts.c, shared with the sidecar's jvmflags) and the OCI config
 * env patching (lib/jvmenv.c) with hostile and odd inputs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jvmenv.h"
#include "jvmflags.h"
#include "jvmopts.h"
#include "tap.h"

static int text_state(const char *s, int *ok_quotes)
{
	int st = -1;
	*ok_quotes = jvmopts_text(s, &st);
	return st;
}

static void test_words(void)
{
	int q;
	is_int(text_state("-Xmx1g -XX:+PreserveFramePointer", &q), 1, "on");
	is_int(text_state("-XX:+PreserveFramePointer\t-XX:-PreserveFramePointer", &q), 0,
	       "last one wins");
	is_int(text_state("-XX:+PreserveFramePointerX -Dy=-XX:-PreserveFramePointer", &q), -1,
	       "only whole words count");
	is_int(text_state("\"-XX:-PreserveFramePointer\"", &q), 0, "a quoted word is unquoted");
	is_int(text_state("-Dmsg='a -XX:-PreserveFramePointer b'", &q), -1,
	       "inside a quoted value it is not an option");
	ok(q, "balanced quotes");
	is_int(text_state("-XX:-Preserve'FramePointer'", &q), 0, "quotes inside a word");
	text_state("-Dx=\"open -XX:+PreserveFramePointer", &q);
	ok(!q, "an unclosed quote is reported");
	is_int(text_state("", &q), -1, "empty: nothing said");
	ok(q, "empty: fine");
	char big[5000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[0] = '-';
	is_int(text_state(big, &q), -1, "a 5000-byte word is walked over");
	ok(jvmopts_is_launcher("/usr/lib/jvm/java-17/bin/java") && jvmopts_is_launcher("java") &&
	       !jvmopts_is_launcher("/bin/javac") && !jvmopts_is_launcher("/bin/sh"),
	   "launcher by its last component");

	/* The sidecar's decision goes through the same words. */
	static const char cmd[] =
	    "java\0-cp\0-XX:-PreserveFramePointer\0-XX:+PreserveFramePointer\0"
	    "Main\0-XX:-PreserveFramePointer";
	is_int(jvmflags_decide(NULL, NULL, cmd, sizeof(cmd), NULL), 0,
	       "jvmflags: -cp's value skipped, options end at the main class");
	is_int(jvmflags_decide("'-XX:+PreserveFramePointer'", NULL, "java", 5, NULL), 0,
	       "jvmflags: quoted JAVA_TOOL_OPTIONS word counts");
	is_int(jvmflags_decide("-XX:+PreserveFramePointer", NULL, "java", 5,
			       "-XX:-PreserveFramePointer"),
	       1, "jvmflags: _JAVA_OPTIONS last");
}

/* Plan for a config text; *entry gets a copy of the new entry (or ""). */
static int plan(const char *doc, enum jvmenv_verdict *v, char *entry, size_t elen,
		struct fs_error *err)
{
	yajl_val root = NULL;
	entry[0] = '\0';
	int r = json_parse(doc, strlen(doc), 64, &root, err);
	if (r < 0) {
		tap_diag("does not parse: %s", doc);
		return r;
	}
	struct jvmenv_plan p;
	r = jvmenv_plan(root, &p, err);
	*v = p.verdict;
	if (r == 0 && p.entry)
		snprintf(entry, elen, "%s", p.entry);
	jvmenv_plan_free(&p);
	yajl_tree_free(root);
	return r;
}

#define PROC(env, args) "{\"process\":{\"args\":" args ",\"env\":" env "}}"

static void test_plan(void)
{
	struct fs_error err;
	enum jvmenv_verdict v;
	char e[256];
	is_int(plan(PROC("[\"JAVA_TOOL_OPTIONS=-Xmx1g\"]", "[\"java\",\"Main\"]"), &v, e, sizeof(e),
		    &err),
	       0, "image options: planned");
	ok(v == JVMENV_ADD, "image options: add");
	is_str(e, "JAVA_TOOL_OPTIONS=-Xmx1g -XX:+PreserveFramePointer", "kept and extended");
	plan(PROC("[\"JAVA_TOOL_OPTIONS=\"]", "[]"), &v, e, sizeof(e), &err);
	is_str(e, "JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer", "empty value: no leading space");
	plan(PROC("[\"JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer\"]", "[]"), &v, e, sizeof(e),
	     &err);
	ok(v == JVMENV_ALREADY_ON && !e[0], "already in JAVA_TOOL_OPTIONS: not added twice");
	plan(PROC("[\"JDK_JAVA_OPTIONS=-XX:-PreserveFramePointer\"]", "[\"java\",\"-jar\",\"x\"]"),
	     &v, e, sizeof(e), &err);
	is_int(v, JVMENV_USER_OFF, "JDK_JAVA_OPTIONS -XX:- respected");
	plan(PROC("[\"_JAVA_OPTIONS=-XX:-PreserveFramePointer\"]", "[]"), &v, e, sizeof(e), &err);
	is_int(v, JVMENV_USER_OFF, "_JAVA_OPTIONS -XX:- respected");
	plan(PROC("[\"JAVA_TOOL_OPTIONS=-XX:-PreserveFramePointer\"]", "[]"), &v, e, sizeof(e),
	     &err);
	is_int(v, JVMENV_USER_OFF, "JAVA_TOOL_OPTIONS -XX:- respected");
	plan(PROC("[]", "[\"/usr/bin/java\",\"-XX:-PreserveFramePointer\",\"-jar\",\"a.jar\"]"), &v,
	     e, sizeof(e), &err);
	is_int(v, JVMENV_USER_OFF, "launcher argument -XX:- respected");
	plan(PROC("[]", "[\"/usr/bin/java\",\"-jar\",\"a.jar\",\"-XX:-PreserveFramePointer\"]"), &v,
	     e, sizeof(e), &err);
	is_int(v, JVMENV_ADD, "after -jar it is the program's argument");
	plan(PROC("[]", "[\"sh\",\"-c\",\"exec java -XX:-PreserveFramePointer -jar a.jar\"]"), &v,
	     e, sizeof(e), &err);
	is_int(v, JVMENV_USER_OFF, "a shell command line saying -XX:- respected");
	plan(PROC("[\"JAVA_TOOL_OPTIONS=-XX:-PreserveFramePointer\"]",
		  "[\"java\",\"-XX:+PreserveFramePointer\",\"M\"]"),
	     &v, e, sizeof(e), &err);
	is_int(v, JVMENV_ALREADY_ON, "the command line overrides JAVA_TOOL_OPTIONS: on already");
	plan("{\"process\":{\"args\":[\"java\"]}}", &v, e, sizeof(e), &err);
	ok(v == JVMENV_ADD && !strcmp(e, "JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer"),
	   "no env at all: a new entry");
	plan("{\"process\":{\"env\":null}}", &v, e, sizeof(e), &err);
	is_int(v, JVMENV_ADD, "env null: a new entry");
	plan("{\"ociVersion\":\"1\"}", &v, e, sizeof(e), &err);
	is_int(v, JVMENV_NO_PROCESS, "no process: nothing to do");
	plan("{\"process\":{\"env\":[]},\"annotations\":{\"" JVMENV_ANNOTATION "\":\"false\"}}", &v,
	     e, sizeof(e), &err);
	ok(v == JVMENV_USER_OFF && !e[0], "annotation " JVMENV_ANNOTATION "=false: left alone");
	plan("{\"process\":{\"env\":[\"NOEQUALS\"]},\"annotations\":{\"" JVMENV_ANNOTATION
	     "\":\"false\"}}",
	     &v, e, sizeof(e), &err);
	is_int(v, JVMENV_USER_OFF, "the annotation wins before the env is even looked at");
	plan("{\"process\":{\"env\":[]},\"annotations\":{\"" JVMENV_ANNOTATION "\":\"no\"}}", &v, e,
	     sizeof(e), &err);
	is_int(v, JVMENV_ADD, "any other value of the annotation: added");

	/* Hostile or odd: refused with a reason. */
	struct {
		const char *doc, *why;
		int r;
	} bad[] = {
	    {PROC("[\"PATH=/bin\",\"JUSTANAME\"]", "[]"), "not NAME=VALUE", -EINVAL},
	    {PROC("[\"=x\"]", "[]"), "not NAME=VALUE", -EINVAL},
	    {PROC("[1]", "[]"), "not a string", -EINVAL},
	    {PROC("{}", "[]"), "not an array", -EINVAL},
	    {PROC("[\"JAVA_TOOL_OPTIONS=a\",\"JAVA_TOOL_OPTIONS=b\"]", "[]"), "twice", -EINVAL},
	    {PROC("[\"_JAVA_OPTIONS=a\",\"X=1\",\"_JAVA_OPTIONS=a\"]", "[]"), "twice", -EINVAL},
	    {PROC("[\"JAVA_TOOL_OPTIONS=-Dx='open\"]", "[]"), "not closed", -EINVAL},
	    {PROC("[]", "[\"java\",2]"), "not a string", -EINVAL},
	    {"{\"process\":{\"env\":[],\"env\":[]}}", "appears 2 times", -EINVAL},
	    {"{\"process\":{},\"process\":{}}", "appears 2 times", -EINVAL},
	    {"{\"process\":[]}", "not an object", -EINVAL},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = '\0';
		int r = plan(bad[i].doc, &v, e, sizeof(e), &err);
		ok(r == bad[i].r && strstr(err.msg, bad[i].why) && !e[0], "refused %s: %s",
		   bad[i].doc, err.msg);
	}

	/* Huge: a 70 KB JAVA_TOOL_OPTIONS, 5000 entries. */
	size_t n = JVMENV_VALUE_MAX + 5000;
	char *doc = malloc(n + 64);
	int o = sprintf(doc, "{\"process\":{\"env\":[\"JAVA_TOOL_OPTIONS=");
	memset(doc + o, 'x', n);
	strcpy(doc + o + n, "\"]}}");
	ok(plan(doc, &v, e, sizeof(e), &err) == -E2BIG && strstr(err.msg, "longer than"),
	   "a huge value is refused: %s", err.msg);
	free(doc);
	doc = malloc(6 * 5000 + 64);
	o = sprintf(doc, "{\"process\":{\"env\":[");
	for (int i = 0; i < 5000; i++)
		o += sprintf(doc + o, "%s\"A=1\"", i ? "," : "");
	strcpy(doc + o, "]}}");
	ok(plan(doc, &v, e, sizeof(e), &err) == -E2BIG && strstr(err.msg, "entries"),
	   "5000 entries are refused: %s", err.msg);
	free(doc);
}

/* The written config: every member kept, env changed in place or added. */
static void test_write(void)
{
	static const char in[] =
	    "{\"ociVersion\":\"1.0.2\",\"process\":{\"terminal\":false,\"user\":{\"uid\":1000},"
	    "\"args\":[\"java\",\"-jar\",\"a.jar\"],\"env\":[\"PATH=/"
	    "bin\",\"JAVA_TOOL_OPTIONS=-Xss1m\","
	    "\"TERM=xterm\"],\"cwd\":\"/\"},\"n\":1.50e+3}";
	struct fs_error err;
	yajl_val root = NULL;
	json_parse(in, sizeof(in) - 1, 64, &root, &err);
	struct jvmenv_plan p;
	is_int(jvmenv_plan(root, &p, &err), 0, "planned");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	jvmenv_write_config(f, root, &p);
	fclose(f);
	is_str(buf,
	       "{\"ociVersion\":\"1.0.2\",\"process\":{\"terminal\":false,\"user\":{\"uid\":1000},"
	       "\"args\":[\"java\",\"-jar\",\"a.jar\"],\"env\":[\"PATH=/"
	       "bin\",\"JAVA_TOOL_OPTIONS=-Xss1m "
	       "-XX:+PreserveFramePointer\",\"TERM=xterm\"],\"cwd\":\"/\"},\"n\":1.50e+3}\n",
	       "written: in place, everything else as it was");
	char desc[200];
	jvmenv_describe(&p, desc, sizeof(desc));
	is_str(desc, "appended -XX:+PreserveFramePointer to JAVA_TOOL_OPTIONS", "described");
	free(buf);
	jvmenv_plan_free(&p);
	yajl_tree_free(root);

	static const char noenv[] = "{\"process\":{\"cwd\":\"/\"}}";
	json_parse(noenv, sizeof(noenv) - 1, 64, &root, &err);
	jvmenv_plan(root, &p, &err);
	f = open_memstream(&buf, &len);
	jvmenv_write_config(f, root, &p);
	fclose(f);
	is_str(buf,
	       "{\"process\":{\"cwd\":\"/"
	       "\",\"env\":[\"JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer\"]}}\n",
	       "no env: one added at the end of process");
	free(buf);
	jvmenv_plan_free(&p);
	yajl_tree_free(root);
}

/* Both flags: what is added, and the description, for a config text. */
static void plan_dns(const char *doc, bool fp, enum jvmenv_verdict want_dns, const char *want_entry,
		     const char *what)
{
	struct fs_error err;
	yajl_val root = NULL;
	if (json_parse(doc, strlen(doc), 64, &root, &err) < 0) {
		ok(0, "%s: does not parse", what);
		return;
	}
	struct jvmenv_plan p;
	const struct jvmenv_want w = {.fp = fp, .dns = true};
	int r = jvmenv_plan_want(root, &w, &p, &err);
	char note[320];
	jvmenv_describe(&p, note, sizeof(note));
	if (!ok(r == 0 && p.dns_verdict == want_dns &&
		    (want_entry ? p.entry && !strcmp(p.entry, want_entry) : !p.entry),
		"%s", what))
		tap_diag("verdict %d, entry '%s'", (int)p.dns_verdict, p.entry ? p.entry : "");
	tap_diag("%s", note);
	jvmenv_plan_free(&p);
	yajl_tree_free(root);
}

static void test_dns(void)
{
	plan_dns(PROC("[\"JAVA_TOOL_OPTIONS=-Xmx1g\"]", "[\"java\",\"Main\"]"), true, JVMENV_ADD,
		 "JAVA_TOOL_OPTIONS=-Xmx1g -XX:+PreserveFramePointer "
		 "-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints",
		 "DebugNonSafepoints unlocked and added after the frame pointer");
	plan_dns(PROC("[]", "[\"java\",\"Main\"]"), false, JVMENV_ADD,
		 "JAVA_TOOL_OPTIONS=-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints",
		 "DebugNonSafepoints alone");
	plan_dns(PROC("[]", "[\"java\",\"-XX:+UnlockDiagnosticVMOptions\","
			    "\"-XX:+DebugNonSafepoints\",\"Main\"]"),
		 true, JVMENV_ALREADY_ON, "JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer",
		 "on already: not twice, frame pointers still");
	plan_dns(PROC("[\"_JAVA_OPTIONS=-XX:-DebugNonSafepoints\"]", "[\"java\",\"Main\"]"), false,
		 JVMENV_USER_OFF, NULL, "the user's -XX:-DebugNonSafepoints respected");
	plan_dns(PROC("[]", "[\"java\",\"-XX:-UnlockDiagnosticVMOptions\",\"Main\"]"), false,
		 JVMENV_USER_OFF, NULL,
		 "diagnostic options locked by the user: not added (the JVM would refuse it)");
	plan_dns("{\"annotations\":{\"" JVMENV_DNS_ANNOTATION "\":\"false\"},\"process\":"
		 "{\"args\":[\"java\"],\"env\":[]}}",
		 true, JVMENV_USER_OFF, "JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer",
		 "the annotation turns DebugNonSafepoints off, frame pointers stay");
	plan_dns("{\"annotations\":{\"" JVMENV_ANNOTATION "\":\"false\"},\"process\":"
		 "{\"args\":[\"java\"],\"env\":[]}}",
		 true, JVMENV_USER_OFF, NULL,
		 "preserve-frame-pointer=false keeps the whole environment");
}

int main(void)
{
	tap_plan(57);
	test_dns();
	test_words();
	test_plan();
	test_write();
	return tap_done();
}

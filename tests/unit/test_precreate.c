/* test_precreate.c - `flamehook precreate`, the config filter Podman and
 * CRI-O run: the decision on a config text (hook_precreate_filter), and the
 * program on real pipes: it always prints a config, the input byte for
 * byte unless it added the flag. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hook.h"
#include "tap.h"

#define ANN "\"annotations\":{\"flamesidecar.io/enable\":\"true\"}"

static int filter(const struct fs_config *cfg, const char *in, char **out, char *note)
{
	size_t len;
	return hook_precreate_filter(cfg, in, strlen(in), out, &len, note, 256);
}

int main(void)
{
	tap_plan(19);
	struct fs_config cfg;
	config_defaults(&cfg);
	char *out = NULL, note[256];
	const char *java = "{\"process\":{\"args\":[\"java\",\"M\"],\"env\":[\"PATH=/bin\","
			   "\"JAVA_TOOL_OPTIONS=-Xmx1g\"]}," ANN "}";
	is_int(filter(&cfg, java, &out, note), 1, "opted in: changed");
	is_str(out,
	       "{\"process\":{\"args\":[\"java\",\"M\"],\"env\":[\"PATH=/bin\",\"JAVA_TOOL_OPTIONS="
	       "-Xmx1g -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions "
	       "-XX:+DebugNonSafepoints\"]}," ANN "}\n",
	       "the flags appended, the rest as it was");
	char *again = NULL;
	is_int(filter(&cfg, out, &again, note), 0, "its own output: unchanged");
	ok(strstr(note, "already") != NULL, "note: %s", note);
	free(out);
	out = NULL;

	const char *plain = "{\"process\":{\"env\":[\"PATH=/bin\"]}}";
	is_int(filter(&cfg, plain, &out, note), 0, "not annotated: unchanged");
	ok(!out && !note[0], "and silent");
	cfg.enable = CONFIG_ENABLE_ALWAYS;
	is_int(filter(&cfg, plain, &out, note), 1, "enable always: changed without annotation");
	free(out);
	out = NULL;
	cfg.enable = CONFIG_ENABLE_NEVER;
	is_int(filter(&cfg, java, &out, note), 0, "enable never: unchanged");
	cfg.enable = CONFIG_ENABLE_ANNOTATION;
	cfg.preserve_frame_pointer = 0;
	is_int(filter(&cfg, java, &out, note), 1, "preserve_frame_pointer false: changed");
	ok(out && !strstr(out, "PreserveFramePointer") &&
	       strstr(out, "-Xmx1g -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints\""),
	   "only DebugNonSafepoints added: %s", note);
	free(out);
	out = NULL;
	cfg.debug_nonsafepoints = 0;
	is_int(filter(&cfg, java, &out, note), 0, "both false: unchanged");
	ok(strstr(note, "preserve_frame_pointer") != NULL, "note: %s", note);
	cfg.preserve_frame_pointer = 1;
	is_int(filter(&cfg, java, &out, note), 1, "debug_nonsafepoints false: frame pointers only");
	ok(out && strstr(out, "-Xmx1g -XX:+PreserveFramePointer\"") != NULL, "%s", note);
	free(out);
	out = NULL;
	cfg.debug_nonsafepoints = 1;

	struct {
		const char *in, *why;
	} bad[] = {
	    {"{\"process\":{\"env\":[\"NOEQUALS\"]}," ANN "}", "NAME=VALUE"},
	    {"{\"process\":{\"env\":[\"JAVA_TOOL_OPTIONS=a\",\"JAVA_TOOL_OPTIONS=b\"]}," ANN "}",
	     "twice"},
	    {"{\"process\":{\"env\":[\"X=a\\u0000b\"]}," ANN "}", "u0000"},
	    {"{\"process\":", "invalid JSON"},
	    {"[]", "not a JSON object"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = filter(&cfg, bad[i].in, &out, note);
		ok(r < 0 && !out && strstr(note, bad[i].why), "refused %s: %s", bad[i].in, note);
	}
	return tap_done();
}

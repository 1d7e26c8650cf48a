/* fuzz_jvmenv.c - libFuzzer target: arbitrary bytes as the OCI config that
 * `flamehook precreate` filters (lib/jvmenv.c behind it), and as JVM option
 * text for the word splitter (lib/jvmopts.c). Nothing may crash or read out
 * of bounds; a changed config must parse, keep every top-level member but
 * "process" as it was, and be left alone when filtered again (the flag is
 * never added twice). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hook.h"
#include "json.h"
#include "jvmopts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_same_members(yajl_val a, yajl_val b)
{
	if (!YAJL_IS_OBJECT(a) || !YAJL_IS_OBJECT(b) || a->u.object.len != b->u.object.len)
		return 0;
	for (size_t i = 0; i < a->u.object.len; i++)
		if (strcmp(a->u.object.keys[i], b->u.object.keys[i]))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	int state = -1;
	jvmopts_text(text, &state);
	struct jvmopts_args it = {0};
	jvmopts_arg(&it, text, strlen(text), &state);
	jvmopts_arg(&it, text, strlen(text), &state);
	free(text);

	struct fs_config cfg;
	config_defaults(&cfg);
	cfg.enable = CONFIG_ENABLE_ALWAYS;
	char *out = NULL, *again = NULL, note[512];
	size_t len = 0, len2 = 0;
	int r =
	    hook_precreate_filter(&cfg, (const char *)data, size, &out, &len, note, sizeof(note));
	if (r != 1) {
		if (out)
			abort(); /* output only when changed */
		return 0;
	}
	struct fs_error err;
	yajl_val in_tree = NULL, out_tree = NULL;
	if (json_parse((const char *)data, size, JSON_MAX_DEPTH, &in_tree, &err) < 0 ||
	    json_parse(out, len, JSON_MAX_DEPTH, &out_tree, &err) < 0)
		abort(); /* the output must parse */
	if (!fuzz_same_members(in_tree, out_tree))
		abort(); /* same top-level keys, same order */
	if (hook_precreate_filter(&cfg, out, len, &again, &len2, note, sizeof(note)) != 0 || again)
		abort(); /* idempotent */
	yajl_tree_free(in_tree);
	yajl_tree_free(out_tree);
	free(out);
	return 0;
}

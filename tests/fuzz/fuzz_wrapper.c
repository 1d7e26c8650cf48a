/* fuzz_wrapper.c - libFuzzer target: arbitrary bytes as a bundle's
 * config.json through patch_json. It may refuse, but when it patches, the
 * output must parse, hold every input value unchanged (same keys in the same
 * order, same number spellings, same strings) apart from "hooks" and, when
 * the flag was added, "process"; and a second patch must find our hook and
 * the flag and leave both alone. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "wrapper.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_same(yajl_val a, yajl_val b)
{
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case yajl_t_string: return !strcmp(a->u.string, b->u.string);
	case yajl_t_number: return !strcmp(a->u.number.r, b->u.number.r);
	case yajl_t_object:
		if (a->u.object.len != b->u.object.len)
			return 0;
		for (size_t i = 0; i < a->u.object.len; i++)
			if (strcmp(a->u.object.keys[i], b->u.object.keys[i]) ||
			    !fuzz_same(a->u.object.values[i], b->u.object.values[i]))
				return 0;
		return 1;
	case yajl_t_array:
		if (a->u.array.len != b->u.array.len)
			return 0;
		for (size_t i = 0; i < a->u.array.len; i++)
			if (!fuzz_same(a->u.array.values[i], b->u.array.values[i]))
				return 0;
		return 1;
	default: return 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct patch_opts o = {
	    .hook_path = "/usr/bin/flamehook",
	    .config_path = size && (data[0] & 1) ? "/etc/x \"y\".json" : NULL,
	    .enable = size && (data[0] & 2) ? CONFIG_ENABLE_ALWAYS : CONFIG_ENABLE_ANNOTATION,
	    .preserve_fp = size && (data[0] & 4),
	};
	struct patch_report rep;
	struct fs_error err;
	char *out = NULL, *again = NULL;
	size_t len, len2;
	int r = patch_json((const char *)data, size, &o, &out, &len, &rep, &err);
	if (r != PATCH_ADDED) {
		if (out)
			abort(); /* output only when patched */
		return 0;
	}
	yajl_val in_tree = NULL, out_tree = NULL;
	if (json_parse((const char *)data, size, WRAPPER_JSON_DEPTH, &in_tree, &err) < 0 ||
	    json_parse(out, len, WRAPPER_JSON_DEPTH, &out_tree, &err) < 0)
		abort(); /* the output must parse */
	size_t n = in_tree->u.object.len, m = out_tree->u.object.len;
	int had_hooks = 0;
	for (size_t i = 0; i < n; i++)
		had_hooks |= !strcmp(in_tree->u.object.keys[i], "hooks");
	if (m != n + !had_hooks)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (strcmp(in_tree->u.object.keys[i], out_tree->u.object.keys[i]))
			abort();
		if (strcmp(in_tree->u.object.keys[i], "hooks") &&
		    (strcmp(in_tree->u.object.keys[i], "process") || !rep.fp_added) &&
		    !fuzz_same(in_tree->u.object.values[i], out_tree->u.object.values[i]))
			abort();
	}
	if (patch_json(out, len, &o, &again, &len2, &rep, &err) != PATCH_ALREADY)
		abort();
	yajl_tree_free(in_tree);
	yajl_tree_free(out_tree);
	free(out);
	return 0;
}

/* fuzz_state.c - libFuzzer target: arbitrary bytes as OCI state JSON and as
 * a registry entry. Neither parser may crash, leak or read out of bounds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "hook.h"
#include "registry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hook_state st;
	struct registry_entry e;
	struct fs_error err;
	hook_state_parse((const char *)data, size, &st, &err);
	if (registry_from_json((const char *)data, size, &e, &err) == 0) {
		char *out;
		size_t len;
		if (registry_to_json(&e, &out, &len, &err) == 0)
			free(out);
	}
	return 0;
}

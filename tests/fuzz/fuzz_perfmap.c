/* fuzz_perfmap.c - arbitrary bytes through the perf map parser, then every
 * invariant the lookup relies on: sorted, disjoint, non-empty entries whose
 * names are NUL-terminated and newline-free, and lookups that agree with a
 * linear scan. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *m = NULL;
	struct fs_error err;
	for (int partial = 0; partial < 2; partial++) {
		if (perfmap_parse((const char *)data, size, partial, &m, &err) < 0)
			abort();
		for (size_t i = 0; i < m->count; i++) {
			const struct perfmap_entry *e = &m->entries[i];
			if (!e->size || e->start + e->size < e->start)
				abort();
			if (!e->name[0] || strchr(e->name, '\n'))
				abort();
			if (i && m->entries[i - 1].start + m->entries[i - 1].size > e->start)
				abort();
			if (perfmap_lookup(m, e->start) != e ||
			    perfmap_lookup(m, e->start + e->size - 1) != e)
				abort();
		}
		/* Probe addresses taken from the input itself. */
		for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
			uint64_t a;
			memcpy(&a, data + i, 8);
			const struct perfmap_entry *hit = perfmap_lookup(m, a), *want = NULL;
			for (size_t j = 0; j < m->count; j++)
				if (a - m->entries[j].start < m->entries[j].size)
					want = &m->entries[j];
			if (hit != want)
				abort();
		}
		perfmap_free(m);
	}
	return 0;
}

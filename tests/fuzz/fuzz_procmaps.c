/* fuzz_procmaps.c - arbitrary bytes as /proc/<pid>/maps text (the path
 * field is the process's to choose): the table is sorted and disjoint,
 * labels are NUL-terminated inside the arena, lookups agree with a linear
 * scan, the caps hold, and every byte counted is given back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps m;
	size_t before = procmaps_held();
	if (procmaps_parse((const char *)data, size, &m) < 0)
		return 0; /* -ENOMEM/-ENOSPC: nothing held */
	if (m.n > PROCMAPS_MAX_ENTRIES || m.labels_len == 0 || m.labels[0] != '\0')
		abort();
	for (size_t i = 0; i < m.n; i++) {
		const struct procmaps_map *e = &m.v[i];
		if (e->start >= e->end || (i && m.v[i - 1].end > e->start))
			abort();
		if (e->label >= m.labels_len ||
		    !memchr(m.labels + e->label, '\0', m.labels_len - e->label))
			abort();
		if (strlen(procmaps_label(&m, e)) > PROCMAPS_LABEL_MAX + 2)
			abort();
		if (procmaps_find(&m, e->start) != e || procmaps_find(&m, e->end - 1) != e)
			abort();
	}
	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, 8);
		const struct procmaps_map *hit = procmaps_find(&m, a), *want = NULL;
		for (size_t j = 0; j < m.n && !want; j++)
			if (a >= m.v[j].start && a < m.v[j].end)
				want = &m.v[j];
		if (hit != want)
			abort();
	}
	procmaps_carry(&m, &m);
	procmaps_release(&m);
	if (procmaps_held() != before)
		abort();
	return 0;
}

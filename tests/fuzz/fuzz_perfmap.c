/* fuzz_perfmap.c - arbitrary bytes through the perf map parser, then every
 * invariant the lookup relies on: sorted, disjoint, non-empty entries whose
 * names are NUL-terminated and newline-free, and lookups that agree with a
 * linear scan. The same bytes then go through the growing-map reader
 * (perfmap_tail.h) in pieces cut where the input says: the same invariants,
 * no control byte in a name, the unfinished line bounded. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap.h"
#include "perfmap_tail.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

static void check_map(const struct perfmap *m, const uint8_t *data, size_t size, int clean)
{
	for (size_t i = 0; m && i < m->count; i++) {
		const struct perfmap_entry *e = &m->entries[i];
		if (!e->size || e->start + e->size < e->start)
			abort();
		if (!e->name[0] || strchr(e->name, '\n'))
			abort();
		for (const char *c = e->name; clean && *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f ||
			    ((unsigned char)c[0] == 0xc2 && (unsigned char)c[1] >= 0x80 &&
			     (unsigned char)c[1] <= 0x9f))
				abort();
		if (i && m->entries[i - 1].start + m->entries[i - 1].size > e->start)
			abort();
		if (perfmap_lookup(m, e->start) != e ||
		    perfmap_lookup(m, e->start + e->size - 1) != e)
			abort();
	}
	for (size_t i = 0; m && i + 8 <= size && i < 256; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, 8);
		const struct perfmap_entry *hit = perfmap_lookup(m, a), *want = NULL;
		for (size_t j = 0; j < m->count; j++)
			if (a - m->entries[j].start < m->entries[j].size)
				want = &m->entries[j];
		if (hit != want)
			abort();
	}
}

/* The input in pieces: the first byte seeds where it is cut; pieces grow
 * with the input (a window reads what a second appended, not a line). */
static void check_tail(const uint8_t *data, size_t size)
{
	static struct perfmap_tail t; /* 4 KiB: not on the fuzzer's stack */
	struct fs_error err;
	uint32_t seed = size ? data[0] * 2654435761u + 1 : 1;
	perfmap_tail_init(&t);
	for (size_t off = 0; off < size;) {
		seed = seed * 1103515245u + 12345u;
		size_t n = 1 + (seed >> 8) % (97 + size / 8);
		if (n > size - off)
			n = size - off;
		if (perfmap_tail_feed(&t, (const char *)data + off, n, &err) < 0)
			abort();
		if (t.npartial > PERFMAP_MAX_LINE || (t.skipping && t.npartial))
			abort();
		off += n;
	}
	check_map(t.map, data, size, 1);
	if (perfmap_tail_memory(&t) < (t.map ? t.map->memory : 0))
		abort();
	perfmap_free(t.map);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *m = NULL;
	struct fs_error err;
	for (int partial = 0; partial < 2; partial++) {
		if (perfmap_parse((const char *)data, size, partial, &m, &err) < 0)
			abort();
		check_map(m, data, size, 0);
		perfmap_free(m);
	}
	check_tail(data, size);
	return 0;
}

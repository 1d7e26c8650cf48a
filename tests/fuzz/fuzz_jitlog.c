/* fuzz_jitlog.c - arbitrary bytes through the timed JIT log parser (fed in
 * two chunks split where the input says), then lookups at addresses and
 * times taken from the input: every name returned must be one of the
 * entries' names and contain the address. The work is bounded per input:
 * a few steps per byte plus n log n for the index, whatever the input
 * (an unload walking its load, or overlaps settled pairwise, is a finding);
 * and the memory stays within a limit taken from the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jitlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jitlog l;
	struct fs_error err;
	if (size < 2)
		return 0;
	jitlog_init(&l, (int64_t)data[0] - 128);
	size_t limit = (size_t)(data[1] & 0xf) << 16; /* 0 .. 960 KiB */
	jitlog_set_limit(&l, limit ? limit : (size_t)1 << 30);
	size_t split = data[1] % size;
	jitlog_feed(&l, (const char *)data, split, &err);
	if (jitlog_index(&l) < 0)
		abort();
	jitlog_feed(&l, (const char *)data + split, size - split, &err);
	if (jitlog_index(&l) < 0)
		abort();
	uint64_t lg = 1;
	for (size_t k = l.n; k >>= 1;)
		lg++;
	if (l.steps > 8 * (uint64_t)size + (16 * lg + 80) * (uint64_t)l.n + 64)
		abort(); /* not linear (n log n) in its input */
	if (limit && jitlog_memory(&l) > limit)
		abort(); /* the memory limit did not hold */
	/* every entry is checked; the lookups (each bounded by JITLOG_MAX_STEPS)
	 * of at most 4096 of them, spread over the log */
	size_t stride = l.n > 4096 ? l.n / 4096 : 1;
	for (size_t i = 0; i < l.n; i++) {
		const struct jitlog_entry *e = &l.e[i];
		if (!e->size || e->start + e->size < e->start || e->name >= l.names_len)
			abort();
		if (i % stride == 0 && !jitlog_lookup(&l, e->start, e->t_load))
			abort(); /* the entry itself covers it */
	}
	for (size_t i = 0; i + 16 <= size && i < 512; i += 16) {
		uint64_t a, t;
		memcpy(&a, data + i, 8);
		memcpy(&t, data + i + 8, 8);
		const char *name = jitlog_lookup(&l, a, t);
		if (!name)
			continue;
		int found = 0;
		for (size_t j = 0; j < l.n && !found; j++)
			found = l.names + l.e[j].name == name && a - l.e[j].start < l.e[j].size;
		if (!found)
			abort();
	}
	char *text = NULL;
	size_t len;
	if (jitlog_perfmap_text(&l, &text, &len) == 0)
		free(text);
	jitlog_release(&l);
	return 0;
}

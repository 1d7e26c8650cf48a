/* fuzz_convert.c - libFuzzer: arbitrary bytes as folded text read the way
 * `flamesidecar convert` reads it (export_read_folded) -> pprof and
 * speedscope in memory.
 * Checks that nothing crashes, that the pprof decodes (protobuf-c) with
 * every index in range and the counts adding up, and that the speedscope
 * JSON parses and is valid UTF-8. The first byte picks the options; with
 * bit 8 the first line is a thread name and module path (container input
 * in `run`) given to every stack (export_add_thread) and to its leaf frame
 * (export_frame_module). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "fold.h"
#include "json.h"
#include "pprof.h"
#include "profile.pb-c.h"
#include "speedscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* defined by sidecar/main.c, which fuzz targets do not link */
__attribute__((weak)) const char *cli_config_path;

static void check_utf8(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n = c < 0x80		? 1
			   : (c & 0xe0) == 0xc0 ? 2
			   : (c & 0xf0) == 0xe0 ? 3
			   : (c & 0xf8) == 0xf0 ? 4
						: 0;
		if (!n || i + n > len || c == 0xc0 || c == 0xc1 || c > 0xf4)
			abort();
		for (size_t k = 1; k < n; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				abort();
		i += n;
	}
}

static void check_pprof(const struct export *x)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	if (pprof_encode(x, &buf, &len, NULL) < 0)
		return; /* out of memory */
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	if (!p || p->n_sample != x->nsamples || !p->n_string_table || p->string_table[0][0])
		abort();
	for (size_t i = 0; i < p->n_string_table; i++)
		check_utf8((const unsigned char *)p->string_table[i], strlen(p->string_table[i]));
	uint64_t total = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		if (s->n_value != 2 || !s->n_location_id)
			abort();
		total += (uint64_t)s->value[0];
		for (size_t k = 0; k < s->n_location_id; k++)
			if (!s->location_id[k] || s->location_id[k] > p->n_location)
				abort();
		for (size_t k = 0; k < s->n_label; k++)
			if (s->label[k]->key <= 0 || (size_t)s->label[k]->key >= p->n_string_table)
				abort();
	}
	if (x->total < INT64_MAX && total != x->total)
		abort();
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		if (l->id != i + 1 || !l->n_line || l->mapping_id > p->n_mapping)
			abort();
		for (size_t k = 0; k < l->n_line; k++)
			if (!l->line[k]->function_id || l->line[k]->function_id > p->n_function)
				abort();
	}
	for (size_t i = 0; i < p->n_function; i++)
		if ((size_t)p->function[i]->name >= p->n_string_table ||
		    (size_t)p->function[i]->system_name >= p->n_string_table)
			abort();
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(buf);
}

static void check_speedscope(const struct export *x)
{
	char *mem = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&mem, &len);
	if (!m)
		return;
	int r = speedscope_write(x, m, NULL);
	fclose(m);
	if (r == 0) {
		check_utf8((const unsigned char *)mem, len);
		yajl_val v = NULL;
		if (json_parse(mem, len, 8, &v, NULL) < 0)
			abort();
		yajl_tree_free(v);
	}
	free(mem);
}

/* Bit 8: "NAME\nfolded..." -> stacks from threads named NAME, leaves in
 * module NAME. 0 or -1 (a line without a count, out of memory). */
static int add_threads(struct export *x, const char *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	if (!nl)
		return -1;
	char *name = strndup(data, (size_t)(nl - data));
	size_t lineno = 0;
	int r = name ? 0 : -1;
	for (const char *p = nl + 1, *end = data + size; !r && p < end; lineno++) {
		const char *e = memchr(p, '\n', (size_t)(end - p)), *stack;
		size_t n = e ? (size_t)(e - p) : (size_t)(end - p), slen;
		uint64_t count;
		int k = fold_parse_line(p, n, &stack, &slen, &count);
		if (k < 0)
			r = -1;
		else if (k > 0) {
			const char *leaf = memrchr(stack, ';', slen);
			leaf = leaf ? leaf + 1 : stack;
			if (export_frame_module(x, leaf, (size_t)(stack + slen - leaf), name,
						lineno & 1 ? name : NULL) < 0 ||
			    export_add_thread(x, stack, slen, count, 1 + (pid_t)(lineno % 3),
					      (pid_t)lineno, name) < 0)
				r = -1;
		}
		p += n + 1;
	}
	free(name);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 && (data[0] & 8)) {
		struct export *x = export_new();
		if (x && add_threads(x, (const char *)data + 1, size - 1) == 0) {
			x->root_is_process = data[0] & 1;
			check_pprof(x);
			check_speedscope(x);
		}
		export_free(x);
		return 0;
	}
	if (size < 1 || size > (1u << 16))
		return 0;
	FILE *in = fmemopen((void *)(data + 1), size - 1, "r");
	struct export *x = export_new();
	if (in && x && export_read_folded(x, in, NULL) == 0) {
		x->root_is_process = data[0] & 1;
		x->period_ns = data[0] & 2 ? 10101010 : 0;
		if (data[0] & 4)
			export_set_name(x, "fuzz");
		check_pprof(x);
		check_speedscope(x);
	}
	export_free(x);
	if (in)
		fclose(in);
	return 0;
}

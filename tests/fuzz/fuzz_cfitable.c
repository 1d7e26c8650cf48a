/* fuzz_cfitable.c - arbitrary bytes as the ELF sandbox's CFI answer: the
 * parent-side validator (cfitable_decode), and lookups and steps on
 * whatever it accepted, must not crash and must stay inside the table and
 * the stack copy. The child is the one that parses .eh_frame; this is what
 * a child that a crafted file took over could send.
 *
 *   make build-fuzz/fuzz_cfitable && build-fuzz/fuzz_cfitable -max_len=1048576 CORPUS/
 *
 * The magic is put in front of the input, and when the first byte is odd
 * the counts are fixed up so that the sizes add up: both would take the
 * fuzzer long to find and neither is where the bugs would be. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfitable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets do not link. */
__attribute__((weak)) const char *cli_config_path;

static uint64_t fuzz_stack[64];

/* Look up and step at a few addresses: each row's edges and the input's
 * own numbers. */
static void fuzz_use(const struct cfitable *t, const uint8_t *data, size_t size)
{
	struct unwind_stack st = {.sp = (uint64_t)(uintptr_t)fuzz_stack,
				  .data = (const uint8_t *)fuzz_stack,
				  .size = sizeof(fuzz_stack)};
	if (cfitable_fp_permille(t) > 1000)
		__builtin_trap(); /* a share, whatever the rows */
	for (size_t i = 0; i + 8 <= size && i < 8 * 64; i += 8) {
		uint64_t a, v;
		memcpy(&a, data + i, 8);
		if (cfitable_vaddr(t, a, &v) == 0)
			a = v;
		const struct cfiflat_rule *u = cfitable_lookup(t, a);
		if (!u)
			continue;
		struct unwind_regs r = {.ip = a, .sp = st.sp + (i % 256), .bp = st.sp + 64};
		cfitable_step(u, &r, &st);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int fix = data[0] & 1;
	data++;
	size--;
	size_t len = 8 + size;
	char *buf = malloc(len > sizeof(struct cfiflat_hdr) ? len : sizeof(struct cfiflat_hdr));
	if (!buf)
		return 0;
	memcpy(buf, CFIFLAT_MAGIC, 8);
	memcpy(buf + 8, data, size);
	if (fix && len >= sizeof(struct cfiflat_hdr)) {
		struct cfiflat_hdr h;
		memcpy(&h, buf, sizeof(h));
		h.reserved = 0;
		h.nloads %= CFIFLAT_MAX_LOADS + 1;
		h.nrules %= 64;
		size_t rest = len - sizeof(h) - h.nloads * sizeof(struct cfiflat_load);
		if (len < sizeof(h) + h.nloads * sizeof(struct cfiflat_load) +
			      h.nrules * sizeof(struct cfiflat_rule))
			h.nloads = h.nrules = 0, rest = len - sizeof(h);
		else
			rest -= h.nrules * sizeof(struct cfiflat_rule);
		h.nrows = (uint32_t)(rest / sizeof(struct cfiflat_row));
		len = sizeof(h) + h.nloads * sizeof(struct cfiflat_load) +
		      h.nrules * sizeof(struct cfiflat_rule) + h.nrows * sizeof(struct cfiflat_row);
		memcpy(buf, &h, sizeof(h));
	}
	struct cfitable *t = NULL;
	if (cfitable_decode(buf, len, &t, NULL) == 0) {
		fuzz_use(t, data, size);
		cfitable_free(t);
	}
	free(buf);
	return 0;
}

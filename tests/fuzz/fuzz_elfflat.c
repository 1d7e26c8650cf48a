/* fuzz_elfflat.c - arbitrary bytes as the ELF sandbox's answer: the
 * parent-side validator (elfflat_decode) and lookups on whatever it
 * accepted must not crash, and must accept only what keeps the lookups in
 * bounds. The child is the one that parses ELF; this is what a child that
 * a crafted file took over could send.
 *
 *   make build-fuzz/fuzz_elfflat && build-fuzz/fuzz_elfflat -max_len=1048576 CORPUS/
 *
 * The magic is put in front of the input, and when the first byte is odd
 * the pool length is fixed up so that the sizes add up: both would take
 * the fuzzer long to find and neither is where the bugs would be. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfflat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets do not link. */
__attribute__((weak)) const char *cli_config_path;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int fix = data[0] & 1;
	data++;
	size--;
	size_t len = 8 + size;
	char *buf = malloc(len > sizeof(struct elfflat_hdr) ? len : sizeof(struct elfflat_hdr));
	if (!buf)
		return 0;
	memcpy(buf, ELFFLAT_MAGIC, 8);
	memcpy(buf + 8, data, size);
	if (fix && len >= sizeof(struct elfflat_hdr)) {
		struct elfflat_hdr h;
		memcpy(&h, buf, sizeof(h));
		h.nloads %= ELFSYMS_MAX_LOADS + 1;
		h.nsyms %= 4096;
		size_t fixed = sizeof(h) + h.nloads * sizeof(struct elfsyms_load) +
			       h.nsyms * sizeof(struct elfflat_sym);
		if (fixed <= len) {
			h.pool_len = (uint32_t)(len - fixed);
			memcpy(buf, &h, sizeof(h));
		}
	}
	struct elfsyms *es = NULL;
	if (elfflat_decode(buf, len, &es, NULL) == 0) {
		uint64_t probes[6] = {0, 1, 0x1000, UINT64_MAX, 0, 0};
		if (size >= 16) {
			memcpy(&probes[4], data + size - 16, 8);
			memcpy(&probes[5], data + size - 8, 8);
		}
		for (size_t i = 0; i < 6; i++) {
			uint64_t vaddr, off;
			const char *name = elfsyms_lookup(es, probes[i], &off);
			if (name)
				(void)strlen(name);
			if (elfsyms_offset_to_vaddr(es, probes[i], &vaddr) == 0 &&
			    (name = elfsyms_lookup(es, vaddr, NULL)) != NULL)
				(void)strlen(name);
		}
		/* What the parent accepted re-encodes into something it
		 * accepts again, with the same symbols. */
		char *again = NULL;
		size_t alen = 0;
		struct elfsyms *back = NULL;
		if (elfflat_encode(es, 0, &again, &alen) == 0) {
			if (elfflat_decode(again, alen, &back, NULL) != 0 ||
			    elfsyms_count(back) != elfsyms_count(es))
				abort();
			elfsyms_free(back);
		}
		free(again);
		elfsyms_free(es);
	}
	free(buf);
	return 0;
}

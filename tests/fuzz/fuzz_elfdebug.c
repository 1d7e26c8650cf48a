/* fuzz_elfdebug.c - arbitrary bytes as an ELF file read for its separate
 * debug info (sidecar/symbolize/elfdebug.h): the .gnu_debuglink reader, the
 * .gnu_debugdata (MiniDebugInfo) unpacker and the ELF image inside it, and
 * the same bytes as a bare xz stream. What the ELF sandbox would send back
 * for them must pass the parent's checks (elfdebug_links_valid,
 * elfflat_decode), and the debug-info merge of two tables must hold.
 *
 *   make build-fuzz/fuzz_elfdebug && build-fuzz/fuzz_elfdebug -max_len=8388608 CORPUS/
 *
 * Seeds: a program with MiniDebugInfo (tests/integration/debuginfo.bats
 * builds one: make_minidebuginfo), a .so with a debug link (Debian's
 * libc.so.6), and an .xz file. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfo.h"
#include "elfdebug.h"
#include "elfflat.h"
#include "elfsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((weak)) const char *cli_config_path;

static void fuzz_elfdebug_probe(struct elfsyms *es)
{
	uint64_t probes[] = {0, 0x1000, 0x400000, UINT64_MAX};
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		const char *n = elfsyms_lookup(es, probes[i], NULL);
		if (n)
			(void)strlen(n);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfdebug_links l;
	if (elfdebug_links_mem(data, size, &l, NULL) == 0) {
		/* what the child sends must be what the parent accepts */
		if (!elfdebug_links_valid(&l))
			abort();
		if (l.has_link && strnlen(l.link, sizeof(l.link)) == sizeof(l.link))
			abort();
	}
	struct elfsyms *es = NULL, *own = NULL, *merged = NULL;
	if (elfdebug_debugdata_mem(data, size, &es, NULL) == 0) {
		char *flat = NULL;
		size_t flen = 0;
		struct elfsyms *back = NULL;
		if (elfflat_encode(es, 0, &flat, &flen) == 0) {
			if (elfflat_decode(flat, flen, &back, NULL) != 0)
				abort();
			fuzz_elfdebug_probe(back);
			elfsyms_free(back);
			free(flat);
		}
		/* merged with the file's own table, as the symbolizer does */
		if (elfsyms_load_mem(data, size, &own, NULL) == 0 &&
		    debuginfo_merge(es, own, &merged) == 0) {
			if (elfsyms_count(merged) < elfsyms_count(es))
				abort();
			fuzz_elfdebug_probe(merged);
			elfsyms_free(merged);
		}
		elfsyms_free(own);
		elfsyms_free(es);
	}
	char *plain = NULL;
	size_t plen = 0;
	if (elfdebug_unxz(data, size, 1 << 20, &plain, &plen, NULL) == 0) {
		if (plen > (1 << 20))
			abort();
		free(plain);
	}
	return 0;
}

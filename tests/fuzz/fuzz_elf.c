/* fuzz_elf.c - arbitrary bytes as an ELF file: the symbol table loader
 * (libelf + our bounds) and lookups on whatever it produced must not crash.
 * Both entry points are exercised: from memory (the vDSO path) and from a
 * file descriptor (the /proc/<pid>/map_files path), here a memfd.
 *
 *   make build-fuzz/fuzz_elf && build-fuzz/fuzz_elf -max_len=65536 CORPUS/
 *
 * A good seed corpus: a few small ELF files (cp /bin/true, a .so, a .o). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfflat.h"
#include "elfsyms.h"
#include "kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets do not link; weak so a
 * definition elsewhere wins. */
__attribute__((weak)) const char *cli_config_path;

static void fuzz_elf_probe(struct elfsyms *es, const uint8_t *data, size_t size)
{
	size_t n;
	const unsigned char *id = elfsyms_build_id(es, &n);
	if (id && n)
		(void)id[n - 1];
	/* Probe addresses derived from the input and a few fixed ones. */
	uint64_t probes[8] = {0, 1, 0x1000, 0x400000, UINT64_MAX, UINT64_MAX - 1, 0, 0};
	if (size >= 16) {
		memcpy(&probes[6], data + size - 16, 8);
		memcpy(&probes[7], data + size - 8, 8);
	}
	for (size_t i = 0; i < 8; i++) {
		uint64_t vaddr, off;
		const char *name = elfsyms_lookup(es, probes[i], &off);
		if (name)
			(void)strlen(name);
		if (elfsyms_offset_to_vaddr(es, probes[i], &vaddr) == 0) {
			name = elfsyms_lookup(es, vaddr, NULL);
			if (name)
				(void)strlen(name);
		}
	}
	(void)elfsyms_memory(es);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int memfd = -2;
	struct elfsyms *es = NULL;

	if (elfsyms_load_mem(data, size, &es, NULL) == 0) {
		fuzz_elf_probe(es, data, size);
		/* What the ELF sandbox would send back for this file: the
		 * parent's validator must accept it (names raw here: the
		 * demangler is libstdc++'s, and its bombs are the deadline's). */
		char *flat = NULL;
		size_t flen = 0;
		struct elfsyms *back = NULL;
		if (elfflat_encode(es, 0, &flat, &flen) == 0) {
			if (elfflat_decode(flat, flen, &back, NULL) != 0 ||
			    elfsyms_count(back) != elfsyms_count(es))
				abort();
			fuzz_elf_probe(back, data, size);
			elfsyms_free(back);
			free(flat);
		}
		elfsyms_free(es);
		es = NULL;
	}

	if (memfd == -2)
		memfd = memfd_create("fuzz_elf", MFD_CLOEXEC);
	if (memfd >= 0 && ftruncate(memfd, 0) == 0 &&
	    pwrite(memfd, data, size, 0) == (ssize_t)size) {
		unsigned char id[ELFSYMS_BUILD_ID_MAX];
		size_t idlen;
		(void)elfsyms_read_build_id(memfd, id, &idlen);
		if (elfsyms_load_fd(memfd, &es, NULL) == 0) {
			fuzz_elf_probe(es, data, size);
			elfsyms_free(es);
		}
	}

	/* The same bytes as kallsyms text: the parser must hold too. */
	struct kallsyms *ks = NULL;
	if (kallsyms_parse((const char *)data, size, &ks, NULL) == 0) {
		(void)kallsyms_lookup(ks, size >= 8 ? *(const uint64_t *)(const void *)data : 0,
				      NULL, NULL);
		kallsyms_free(ks);
	}
	return 0;
}

/* fuzz_cfiflat.c - arbitrary bytes as an ELF file's CFI, walked the way the
 * sandboxed child walks it (cfiflat_encode_fd: libelf, libdw over
 * .eh_frame_hdr's table), from a memfd: it must not crash, and whatever it
 * encodes the parent must accept (cfitable_decode), or the child would be
 * killed for an honest answer.
 *
 *   make build-fuzz/fuzz_cfiflat && build-fuzz/fuzz_cfiflat -max_len=1048576 CORPUS/
 *
 * A good seed corpus: a few small ELF files with .eh_frame_hdr (cp
 * /bin/true, a .so). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cfiflat.h"
#include "cfitable.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets do not link. */
__attribute__((weak)) const char *cli_config_path;

/* libelf's elf_strptr, called by dwarf_getcfi_elf on a file with a
 * malformed section name table, leaks a buffer that elf_end does not free
 * (found by this target; elfutils 0.188). Not ours to fix here, and
 * harmless where it runs: in the sandboxed child, bounded by its
 * RLIMIT_AS, for one run. Every other leak still fails the target. */
/* The child walks under RLIMIT_AS (ELFJAIL_MEMORY), where libdw's frame,
 * grown to the largest register number a CFA program names (a crafted
 * ULEB128 asks for gigabytes), gets NULL and the row is dropped. ASan's
 * shadow rules out RLIMIT_AS here, so large allocations fail the same way
 * instead. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=256";
}

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libelf.so\n";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	if (fd < 0 && (fd = memfd_create("fuzz_cfiflat", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	char *buf = NULL;
	size_t len = 0;
	struct cfitable *t = NULL;
	if (cfiflat_encode_fd(fd, &buf, &len, NULL) == 0) {
		if (cfitable_decode(buf, len, &t, NULL) != 0)
			abort(); /* an honest child's answer refused */
		cfitable_free(t);
	}
	free(buf);
	return 0;
}

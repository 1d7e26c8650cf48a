/* fuzz_mountinfo.c - a mount table (/proc/<pid>/mountinfo: the kernel's
 * text, with mount points the container names) through the type lookup and
 * the path check of lib/localfs.c (and the lookup by device): no read outside the input, the type
 * always terminated within its buffer and without a space, and linear time (a slow input is a
 * finding). The first bytes choose the mount id and the buffer size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "localfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint64_t id = data[0] % 64;
	size_t typelen = data[1] % 80;
	data += 2;
	size -= 2;
	/* an exact-size copy: ASan sees any read past the end */
	char *buf = malloc(size ? size : 1);
	char *type = malloc(typelen ? typelen : 1);
	if (!buf || !type)
		abort();
	memcpy(buf, data, size);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int r = localfs_mountinfo_type(buf, size, id, type, typelen);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r == 1) {
		size_t n = strnlen(type, typelen);
		if (n >= typelen || n == 0 || memchr(type, ' ', n))
			abort();
		(void)localfs_type_local(type);
	}
	r = localfs_mountinfo_type_dev(buf, size, (unsigned)id % 9, (unsigned)id, type, typelen);
	if (r == 1) {
		size_t n = strnlen(type, typelen);
		if (n >= typelen || n == 0 || memchr(type, ' ', n))
			abort();
	}
	char t2[16];
	static const char *const rels[] = {"tmp/perf-1.map", "/usr/lib/debug/x", "", "a"};
	if (localfs_mountinfo_crosses(buf, size, rels[id % 4], t2, sizeof(t2)) == 1 &&
	    strnlen(t2, sizeof(t2)) >= sizeof(t2))
		abort();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* linear: well under a second for any input libFuzzer makes */
	if ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) > 1000000000L)
		abort();
	free(buf);
	free(type);
	return 0;
}

/* fuzz_ctprocs.c - a /proc/<pid>/cgroup text (the kernel's, with cgroup
 * names a container with a delegated cgroup chooses) through the cgroup v2
 * line lookup of lib/ctprocs.c: no read outside the input, and a path given
 * back is absolute, NUL-terminated within the buffer, neither the root nor
 * holding a ".." component. The first byte chooses the buffer size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctprocs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t buflen = (size_t)data[0] + 1;
	data++;
	size--;
	/* exact-size copies: ASan sees any access past either end */
	char *text = malloc(size ? size : 1);
	char *buf = malloc(buflen);
	if (!text || !buf)
		abort();
	memcpy(text, data, size);
	if (ctprocs_v2_path_of(text, size, buf, buflen) == 0) {
		size_t n = strnlen(buf, buflen);
		if (n >= buflen || n < 2 || buf[0] != '/')
			abort();
		for (const char *c = buf; (c = strstr(c, "/..")); c += 3)
			if (c[3] == '/' || c[3] == '\0')
				abort();
	}
	free(text);
	free(buf);
	return 0;
}

/* fuzz_textsafe.c - arbitrary bytes (a comm, a frame name) through the
 * terminal escaping: the output is always terminated within its buffer and
 * holds no byte a terminal acts on (C0, DEL, C1 in UTF-8, bidi overrides),
 * for every output size and both flag sets. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "textsafe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

static void check(const char *out, size_t len, unsigned flags)
{
	size_t n = strnlen(out, len);
	if (n >= len)
		abort();
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)out[i];
		if (c < 0x20 || c == 0x7f || ((flags & TEXTSAFE_ASCII) && c >= 0x80))
			abort();
		if (c == 0xc2 && i + 1 < n && (unsigned char)out[i + 1] >= 0x80 &&
		    (unsigned char)out[i + 1] <= 0x9f)
			abort();
		if (c == 0xe2 && i + 2 < n && (unsigned char)out[i + 1] == 0x80 &&
		    (unsigned char)out[i + 2] >= 0xaa && (unsigned char)out[i + 2] <= 0xae)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = size ? data[0] : 1;
	size_t cap = 4 * size + 1;
	char *big = malloc(cap), *small = malloc(len + 1);
	if (!big || !small)
		abort();
	for (unsigned flags = 0; flags < 4; flags++) {
		textsafe_n((const char *)data, size, big, cap, flags);
		check(big, cap, flags);
		textsafe_n((const char *)data, size, small, len + 1, flags);
		check(small, len + 1, flags);
	}
	free(big);
	free(small);
	return 0;
}

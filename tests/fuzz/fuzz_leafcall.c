/* fuzz_leafcall.c - arbitrary bytes as a JVM's code, stack copy and
 * callchain through leafcall_locate, leafcall_exit, leafcall_is_return_site and
 * leafcall_repair (sidecar/profile/leafcall.h): every read stays in the
 * buffers, and a repaired callchain is the original with exactly one word
 * inserted after the user leaf, that word a return site read from the
 * stack copy. */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leafcall.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

/* The fake process: its memory at every address is the input's first
 * 64 bytes, repeated; reads of more fail. */
static int fuzz_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const uint8_t *mem = ctx;
	if (len > 64)
		return -14;
	for (size_t i = 0; i < len; i++)
		((uint8_t *)buf)[i] = mem[(addr + i) % 64];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 64 + 8)
		return 0;
	const uint8_t *mem = data;
	int off = leafcall_locate(data + 64, size - 64);
	if (off < -1 || off > 8192)
		abort();
	(void)leafcall_entry_barrier(data + 64, size - 64);
	int x = leafcall_exit(data + 64, size - 64);
	if (x != -1 && x != 0 && x != 8)
		abort();
	(void)leafcall_is_return_site(data + 64, size - 64 < 16 ? size - 64 : 16);

	/* the rest: a callchain of up to 8 words, then the stack copy */
	size_t nr = data[64] % 9;
	if (size < 65 + nr * 8)
		return 0;
	uint64_t ips[8], out[9];
	memcpy(ips, data + 65, nr * 8);
	if (nr > 0 && (data[64] & 0x80))
		ips[0] = (uint64_t)PERF_CONTEXT_USER;
	const uint8_t *stack = data + 65 + nr * 8;
	size_t stack_size = size - 65 - nr * 8;
	size_t n = leafcall_repair(ips, nr, stack, stack_size, fuzz_read, (void *)mem, out,
				   (data[64] & 0x40) ? nr : 9);
	if (n == 0)
		return 0;
	if (n != nr + 1)
		abort();
	size_t u = 0;
	while (ips[u] != (uint64_t)PERF_CONTEXT_USER)
		u++;
	if (memcmp(out, ips, (u + 2) * 8) || memcmp(out + u + 3, ips + u + 2, (nr - u - 2) * 8))
		abort();
	int found = 0;
	for (size_t i = 0; i + 8 <= stack_size && !found; i++)
		found = !memcmp(stack + i, &out[u + 2], 8);
	if (!found)
		abort();
	return 0;
}

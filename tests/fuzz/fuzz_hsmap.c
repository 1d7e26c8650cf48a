/* fuzz_hsmap.c - the VMStructs JIT map build (hsmap_build_from) over a
 * fake JVM image that the fuzzer corrupts (tests/lib/hsimage.h, as
 * fuzz_hotspot.c does): the VMStructs tables, code heap, segment map,
 * blobs, Method chains and debug info are the JVM's memory, the
 * container's to write. The build must not crash or read outside the
 * image, must keep to its deadline (given here as 100 ms: an input that
 * overruns it is a finding, caught by fuzz_bound.h's limit), and every map
 * entry must be a printable name within its range.
 *
 * Input as fuzz_hotspot.c: byte 0 picks the layout (JDK 17 or 25 style),
 * then groups of 4 bytes (u16 offset into the image, u8 value, u8 mode):
 * mode & 1 writes the byte, else xors it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_bound.h"
#include "hotspot_int.h"
#include "hsimage.h"
#include "hsmap.h"
#include "perfmap.h"
#include "timeutil.h"

/* Defined by sidecar/main.c, which fuzz targets are not linked with. */
__attribute__((weak)) const char *cli_config_path;

static struct hsi img;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	hsi_build(&img, data[0] & 1 ? 25 : 17);
	for (size_t i = 1; i + 4 <= size; i += 4) {
		uint16_t off;
		memcpy(&off, data + i, 2);
		if (data[i + 3] & 1)
			img.mem[off % HSI_SIZE] = data[i + 2];
		else
			img.mem[off % HSI_SIZE] ^= data[i + 2];
	}
	struct fuzz_bound t0 = fuzz_bound_start();
	struct hs_reader r = {.read = hsi_read, .ctx = &img};
	struct hotspot *hs = NULL;
	struct fs_error err = {0};
	if (hotspot_open_reader(&r, &img.syms, &hs, &err) < 0)
		return 0;
	struct hsmap_stats st = {.cut = ""};
	struct perfmap *map = NULL;
	if (hsmap_build_from(hs, 1, timeutil_now_ms() + 100, &map, &st, &err) == 0) {
		if (st.steps > HSMAP_MAX_STEPS + 1 || st.bytes > PERFMAP_MAX_INPUT)
			abort();
		for (size_t i = 0; i < map->count; i++)
			for (const char *c = map->entries[i].name; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					abort(); /* control bytes from the JVM's memory */
		perfmap_free(map);
	}
	fuzz_bound_end(t0, "hsmap build", size);
	return 0;
}

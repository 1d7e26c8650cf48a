/* fuzz_hotspot.c - sidecar/hotspot over a fake JVM image that the fuzzer
 * corrupts: tables, strides, strings, code heap, segment map, blobs,
 * Method chains, nmethod debug info. It must never crash, read outside the image, or loop.
 *
 * Input: byte 0 picks the layout (JDK 17 or 25 style); then groups of 4
 * bytes (u16 offset into the image, u8 value, u8 mode): mode & 1 writes the
 * byte, else xors it. The last 8 bytes, if any, are a pc to look up as well
 * (also fed to hotspot_method_name as a Method*). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hotspot_int.h"
#include "hsimage.h"

static struct hsi img;

static int range(void *ctx, uint64_t start, uint64_t end, const struct hotspot_scope *sc, int n)
{
	char name[128];
	for (int i = 0; i < n; i++)
		hotspot_method_name(ctx, sc[i].method, name, sizeof(name));
	return 0;
}

static int count(void *ctx, const struct hotspot_blob *b)
{
	char name[128];
	struct hotspot_scope sc[8];
	hotspot_method_name(ctx, b->method, name, sizeof(name));
	hotspot_scopes(ctx, b, b->code_begin + 0x40, sc, 8);
	hsscopes_ranges(ctx, b, range, ctx);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	hsi_build(&img, data[0] & 1 ? 25 : 17);
	size_t i = 1;
	for (; i + 4 <= size; i += 4) {
		uint16_t off;
		memcpy(&off, data + i, 2);
		if (data[i + 3] & 1)
			img.mem[off % HSI_SIZE] = data[i + 2];
		else
			img.mem[off % HSI_SIZE] ^= data[i + 2];
	}
	uint64_t extra = 0;
	if (size >= 9)
		memcpy(&extra, data + size - 8, 8);

	struct hs_reader r = {.read = hsi_read, .ctx = &img};
	struct hotspot *hs = NULL;
	struct fs_error err = {0};
	if (hotspot_open_reader(&r, &img.syms, &hs, &err) < 0)
		return 0;
	struct hotspot_blob b;
	char name[256];
	for (uint32_t s = 0; s < HSI_SEGS + 2; s += 3) {
		if (hotspot_find_blob(hs, HSI_SEG_ADDR(s) + 0x44, &b) > 0) {
			hotspot_method_name(hs, b.method, name, sizeof(name));
			hotspot_blob_check(hs, HSI_SEG_ADDR(s) + 0x44, &b);
		}
	}
	b.blob = extra; /* a cached blob that lies */
	hotspot_blob_check(hs, extra + (extra >> 60), &b);
	hotspot_find_blob(hs, extra, &b);
	hotspot_method_name(hs, extra, name, sizeof(name));
	hotspot_method_name(hs, HSI_METHOD, name, sizeof(name));
	int bci;
	hotspot_interp_bci(hs, HSI_METHOD, HSI_BASE + HSI_META + 0x40 + 48 + (extra & 15), &bci);
	hotspot_interp_bci(hs, extra, extra >> 3, &bci);
	hotspot_in_code_cache(hs, extra);
	codecache_each_blob(hs, 64, count, hs);
	hotspot_close(hs);
	return 0;
}

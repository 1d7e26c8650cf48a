/* fuzz_render.c - libFuzzer: arbitrary bytes as folded text -> frame tree
 * -> SVG in memory. Checks that nothing crashes and that the totals of the
 * tree add up; the first input byte picks render options. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* defined by sidecar/main.c, which fuzz targets do not link */
__attribute__((weak)) const char *cli_config_path;

/* The SVG must be valid UTF-8 without control characters (but newlines),
 * and "]]>" may only close the script's CDATA section. */
static void check_svg(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n = c < 0x80		? 1
			   : (c & 0xe0) == 0xc0 ? 2
			   : (c & 0xf0) == 0xe0 ? 3
			   : (c & 0xf8) == 0xf0 ? 4
						: 0;
		if (!n || i + n > len || (c < 0x20 && c != '\n') || c == 0x7f || c == 0xc0 ||
		    c == 0xc1)
			abort();
		for (size_t k = 1; k < n; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				abort();
		i += n;
	}
	const char *first = memmem(s, len, "]]>", 3);
	if (!first ||
	    memmem(first + 3, len - (size_t)((const unsigned char *)first + 3 - s), "]]>", 3))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	uint8_t sel = data[0];
	data++;
	size--;
	FILE *in = fmemopen((void *)data, size ? size : 1, "r");
	if (!in)
		return 0;
	if (!size)
		fgetc(in); /* fmemopen wants size > 0: read the one byte away */
	struct flame *f = flame_new();
	struct fs_error err = {0};
	if (!f) {
		fclose(in);
		return 0;
	}
	if (flame_parse_folded_as(f, in, (sel & 1) ? FLAME_COLUMN_A : FLAME_COLUMN_B, &err) == 0) {
		/* the root total is the sum of the children's totals and its self */
		uint64_t sum = flame_node_self(f, FLAME_ROOT);
		for (uint32_t c = flame_node_child(f, FLAME_ROOT); c != FLAME_NONE;
		     c = flame_node_sibling(f, c))
			sum += flame_node_total(f, c);
		if (flame_node_total(f, FLAME_ROOT) != UINT64_MAX &&
		    sum != flame_node_total(f, FLAME_ROOT))
			abort();
		struct render_opts o;
		render_opts_init(&o);
		o.reverse = sel & 2;
		o.inverted = sel & 4;
		o.hash = sel & 8;
		o.negate = sel & 16;
		o.palette = (enum palette)((sel >> 5) % PALETTE_COUNT);
		o.min_width = (sel & 0x80) ? 0 : 0.1;
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		if (out) {
			int r = render_svg(f, out, &o, &err);
			fclose(out);
			if (r == 0)
				check_svg((const unsigned char *)buf, len);
			free(buf);
		}
	}
	flame_free(f);
	fclose(in);
	return 0;
}
